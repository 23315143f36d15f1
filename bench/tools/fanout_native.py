"""The LL-HLS fan-out's native clients (`hlscache-bench fanout-clients`), driven from llhls_fanout.py, and the CPU
time of a process by its threads.

The clients run in a child process, one thread over epoll, so that what they cost on the machine's cores (about
5 ms of CPU for a thousand answers) is small beside the server's share; the asyncio clients of llhls_fanout.py
cost 15-20 ms on the same two cores. The child stamps each completion with CLOCK_MONOTONIC, the clock of
``time.monotonic()``, and reports them once every client is done or its timeout has passed.
"""
import asyncio
import os
import tempfile


def process_cpu(pid):
    """CPU seconds of every thread of a process (schedstat, ns), or None when unreadable."""
    if pid is None:
        return None
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


class NativeFanout:
    """N clients sending one request each and recording when each complete answer was read, in the child
    process; the same interface as llhls_fanout.py's ``Fanout``."""

    def __init__(self, port, target, count, bench):
        self.port, self.target, self.count, self.bench = port, target, count, bench
        self.completions = []
        self.errors = {}
        self.heads = {}
        self.sample = None
        self.connections = []
        self.last_send = None
        self.cpu = None  # a function giving (the clients' CPU s, the server's CPU s or None)
        self.cpu_at_release = self.cpu_at_done = None
        self.child = None
        self.timeout = None
        self.sample_path = None

    async def connect(self, timeout):
        """Starts the child and waits until it has connected; `timeout` (seconds from the send) bounds the wait
        for the answers."""
        self.timeout = timeout
        fd, self.sample_path = tempfile.mkstemp(prefix="llhls-sample-")
        os.close(fd)
        self.child = await asyncio.create_subprocess_exec(
            self.bench, "fanout-clients", str(self.port), self.target, str(self.count), str(timeout),
            self.sample_path, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        while True:
            line = (await asyncio.wait_for(self.child.stdout.readline(), 60)).decode()
            if line.startswith("fail "):
                self.error(line[5:].rstrip("\n"))
            elif line.startswith("connected "):
                self.connections = list(range(int(line.split()[1])))
                return
            else:
                raise RuntimeError(f"fanout-clients: {line!r} where connections were expected")

    def error(self, reason):
        self.errors[reason] = self.errors.get(reason, 0) + 1

    async def start(self):
        """Sends every request; ``last_send`` is the child's stamp after the last one."""
        self.child.stdin.write(b"send\n")
        await self.child.stdin.drain()
        line = (await asyncio.wait_for(self.child.stdout.readline(), 60)).decode().split()
        if line[:1] != ["sent"]:
            raise RuntimeError(f"fanout-clients: {' '.join(line)!r} where `sent` was expected")
        self.last_send = float(line[1])

    def client_cpu(self):
        """The clients' CPU seconds so far: the child's."""
        return process_cpu(self.child.pid)

    async def wait(self, seconds):
        """Reads the child's report: `all` when the last client is done (the server's CPU is read then), one line a
        client, `end`. The child ends a client that never completes at its own timeout, counted from the send; this
        waits that long and 10 s more (`seconds`, the asyncio clients' wait from the release, is within it)."""
        loop = asyncio.get_running_loop()
        deadline = max(loop.time() + seconds, self.last_send + self.timeout) + 10
        try:
            while True:
                raw = await asyncio.wait_for(self.child.stdout.readline(), max(0.1, deadline - loop.time()))
                if not raw:
                    self.error("the clients' process ended before its report did")
                    break
                line = raw.decode().rstrip("\n")
                if line.startswith("all "):
                    if self.cpu is not None:
                        self.cpu_at_done = (float(line.split()[1]), self.cpu()[1])
                elif line.startswith("done "):
                    _, at, _, cache = line.split(" ", 3)
                    self.completions.append(float(at))
                    self.heads[cache] = self.heads.get(cache, 0) + 1
                elif line.startswith("fail "):
                    self.error(line[5:])
                elif line == "end":
                    break
        except asyncio.TimeoutError:
            self.error("the clients' report did not come in time")
        with open(self.sample_path, "rb") as f:
            self.sample = f.read() or None
        os.unlink(self.sample_path)
        self.child.stdin.close()
        try:
            await asyncio.wait_for(self.child.wait(), 10)
        except asyncio.TimeoutError:
            self.child.kill()
            await self.child.wait()
