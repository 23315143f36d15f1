#!/usr/bin/env python3
"""LL-HLS fan-out: 1,000 clients blocked on the same `_HLS_msn`/`_HLS_part` through hlscache.

Usage: llhls_fanout.py HLSCACHE_PORT [--clients N] [--hold SECONDS] [--timeout SECONDS] [--server-pid PID]
                       [--client protocol|streams|native] [--bench HLSCACHE_BENCH]

One asyncio process (standard library only, all on 127.0.0.1):

1. runs an HTTP/1.1 origin on a free port serving a small LL-HLS media playlist (CAN-BLOCK-RELOAD=YES, PART-INF,
   parts, a preload hint) and small parts and segments; it HOLDS every request whose query has `_HLS_msn` until
   released, and counts every request by target;
2. opens N client connections to hlscache (`/o/http/127.0.0.1:ORIGIN/live/index.m3u8?_HLS_msn=5&_HLS_part=0`),
   then sends the same blocking reload on each;
3. once every request is sent, hlscache's origin request has arrived, hlscache reports (`/metrics`,
   `hlscache_fills_deduplicated_total` + `hlscache_parked_requests_total`) that the other N-1 joined it or wait
   on the event loop for it, and `--hold` seconds (1) have passed since
   the last send, releases the origin's answer, taking a monotonic timestamp just before writing it;
4. records when each client has read its whole response (status 200, body by Content-Length).

Each client is by default a bare asyncio Protocol (fanout_asyncio.py) that parses as bytes arrive and stamps its
completion in data_received, with no task per connection (the cheapest asyncio client; its floor was the lower in trials);
`--client streams` uses asyncio streams instead, one reading task per connection. `--client native` runs the
clients in a child process, `hlscache-bench fanout-clients` (one thread over epoll, heads parsed as bytes; the
path given with `--bench`; driven by fanout_native.py): they cost about 5 ms of CPU for a thousand answers where the asyncio ones cost 15-20,
on the same two cores as the server they measure. bench/run.sh reports the native clients' figures under the
names below and the asyncio Protocol clients' as llhls_fanout_python_*.

Then the floor: the same N clients, the same way, against a plain asyncio server (this script run again as a child
process, `--floor-server`, so that it writes from its own process and core as hlscache does) that holds every
request and, once the N are in and the same hold has passed, answers all of them at once with the very bytes
hlscache answered (head and body), taking its timestamp just before the first write. CLOCK_MONOTONIC is shared by
the processes of one machine, so the two timestamps compare. The floor is what this Python client (and a Python
server writing N answers) costs with no proxy in between; the figures through hlscache include it.

Prints, as `name value` lines:

  llhls_fanout_origin_requests     origin requests with `_HLS_msn` (the one blocking reload asked) (target 1)
  llhls_fanout_last_ms             last client's completion minus the origin's answer, ms (target <= 20)
  llhls_fanout_p50_ms              median client completion minus the origin's answer, ms
  llhls_fanout_first_ms            first client's completion minus the origin's answer, ms
  llhls_fanout_client_errors       clients without a complete 200 (connection errors, other statuses, timeouts)
  llhls_fanout_client_floor_ms     the floor's last completion minus its server's answer, ms
  llhls_fanout_client_floor_p50_ms the floor's median
and on stderr: how many requests hlscache had joined to the origin request before the release, the origin's
requests by target (the other ones are hlscache's read-ahead of what the playlist lists), X-Cache values, error
reasons, and the CPU time this process and the server (hlscache with --server-pid; the floor's server) spent from
the answer to the last completion (per-thread schedstat, so a thread that exits in between is not counted).
"""
import argparse
import asyncio
import resource
import statistics
import sys
import time

from fanout_asyncio import Fanout
from fanout_native import NativeFanout, process_cpu

MSN, PART = 5, 0
QUERY = f"_HLS_msn={MSN}&_HLS_part={PART}"
PLAYLIST_PATH = "/live/index.m3u8"
MPEGURL = "application/vnd.apple.mpegurl"


def playlist():
    """A live LL-HLS media playlist whose last part is msn 5, part 0 (what the blocking reload waits for)."""
    lines = [
        "#EXTM3U",
        "#EXT-X-VERSION:9",
        "#EXT-X-TARGETDURATION:4",
        "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=3.0",
        "#EXT-X-PART-INF:PART-TARGET=1.0",
        "#EXT-X-MEDIA-SEQUENCE:2",
        '#EXT-X-MAP:URI="init.mp4"',
    ]
    for number in range(2, MSN):
        if number >= MSN - 2:
            for part in range(4):
                independent = ",INDEPENDENT=YES" if part == 0 else ""
                lines.append(f'#EXT-X-PART:DURATION=1.0,URI="seg{number}.part{part}.m4s"{independent}')
        lines += ["#EXTINF:4.0,", f"seg{number}.m4s"]
    lines.append(f'#EXT-X-PART:DURATION=1.0,URI="seg{MSN}.part{PART}.m4s",INDEPENDENT=YES')
    lines.append(f'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg{MSN}.part{PART + 1}.m4s"')
    return ("\n".join(lines) + "\n").encode()


def response(status, kind, body):
    reason = {200: "OK", 404: "Not Found"}[status]
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
    return (head + "Cache-Control: max-age=1\r\n\r\n").encode() + body


class Origin:
    """The LL-HLS origin: answers at once, except blocking reloads, held until ``release``."""

    def __init__(self):
        self.counts = {}
        self.held = []  # (writer, future) of each held blocking reload
        self.writers = set()
        self.arrived = asyncio.Event()
        self.answered_at = None
        self.released = False
        self.playlist = playlist()

    async def handle(self, reader, writer):
        self.writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")
                self.counts[target] = self.counts.get(target, 0) + 1
                path, _, query = target.partition("?")
                if "_HLS_msn=" in query and not self.released:
                    done = asyncio.get_running_loop().create_future()
                    self.held.append((writer, done))
                    self.arrived.set()
                    await done  # written by release()
                elif path == PLAYLIST_PATH:
                    writer.write(response(200, MPEGURL, self.playlist))
                elif path.endswith(".m4s") or path.endswith(".mp4"):
                    writer.write(response(200, "video/mp4", bytes(2048)))
                else:
                    writer.write(response(404, "text/plain", b""))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, IndexError):
            pass
        finally:
            self.writers.discard(writer)
            writer.close()

    async def close(self, server):
        """Stops listening and ends hlscache's keep-alive connections, so that no handler is left waiting."""
        server.close()
        for writer in list(self.writers):
            writer.close()
        for _ in range(100):
            if not self.writers:
                break
            await asyncio.sleep(0.01)

    def release(self):
        self.released = True
        answer = response(200, MPEGURL, self.playlist)
        self.answered_at = time.monotonic()
        for writer, done in self.held:
            writer.write(answer)
            done.set_result(None)


def make_fanout(args, port, target):
    """The clients ``args.client`` names."""
    if args.client == "native":
        return NativeFanout(port, target, args.clients, args.bench)
    return Fanout(port, target, args.clients, args.client)


async def deduplicated(port):
    """Requests hlscache has waiting on the fill in flight: `hlscache_fills_deduplicated_total` (joined in the
    responder) plus `hlscache_parked_requests_total` (waiting on the event loop); 0 when absent or unreadable."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
        writer.write(f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        data = await asyncio.wait_for(reader.read(), 5)
        writer.close()
    except (OSError, asyncio.TimeoutError):
        return 0
    total = 0.0
    for line in data.decode("latin-1").splitlines():
        if line.startswith("hlscache_fills_deduplicated_total") or line.startswith("hlscache_parked_requests_total"):
            total += float(line.split()[-1])
    return int(total)


async def wait_joined(port, before, wanted, timeout=10.0):
    """Waits up to `timeout` seconds for `wanted` requests to have joined the fill in flight or parked on it
    (``deduplicated`` less `before`); returns how many had."""
    deadline = time.monotonic() + timeout
    joined = 0
    while time.monotonic() < deadline:
        joined = await deduplicated(port) - before
        if joined >= wanted:
            break
        await asyncio.sleep(0.05)
    return joined


def cpu_use(fanout, server):
    """What the release-to-last-completion window cost in CPU, as text."""
    if fanout.cpu_at_release is None or fanout.cpu_at_done is None:
        return "not measured (not every client completed)"
    ours = (fanout.cpu_at_done[0] - fanout.cpu_at_release[0]) * 1000
    text = f"this process {ours:.1f} ms"
    if fanout.cpu_at_release[1] is not None and fanout.cpu_at_done[1] is not None:
        text += f", {server} {(fanout.cpu_at_done[1] - fanout.cpu_at_release[1]) * 1000:.1f} ms"
    return text


def ms(values, at):
    return [(value - at) * 1000 for value in values]


def log(text):
    print(f"llhls_fanout: {text}", file=sys.stderr, flush=True)


async def through_hlscache(args):
    origin = Origin()
    server = await asyncio.start_server(origin.handle, "127.0.0.1", 0, backlog=1024)
    origin_port = server.sockets[0].getsockname()[1]
    target = f"/o/http/127.0.0.1:{origin_port}{PLAYLIST_PATH}?{QUERY}"
    before = await deduplicated(args.port)
    fanout = make_fanout(args, args.port, target)
    await fanout.connect(args.hold + args.timeout + 30)
    await fanout.start()
    try:
        await asyncio.wait_for(origin.arrived.wait(), 10)
    except asyncio.TimeoutError:
        log("hlscache's blocking reload did not reach the origin within 10 s")
    # Every client joined the flight (hlscache's own count), then the hold since the last send.
    joined = await wait_joined(args.port, before, len(fanout.connections) - 1)
    if joined < len(fanout.connections) - 1:
        log(f"only {joined} requests had joined the origin request 10 s after the last send; releasing anyway")
    await asyncio.sleep(max(0.0, fanout.last_send + args.hold - time.monotonic()))
    held = len(origin.held)
    fanout.cpu = lambda: (fanout.client_cpu(), process_cpu(args.server_pid))
    fanout.cpu_at_release = fanout.cpu()
    origin.release()
    await fanout.wait(args.timeout)
    await asyncio.sleep(0.5)  # hlscache's read-ahead of what the playlist lists, answered at once
    await origin.close(server)
    answered_at = origin.answered_at
    reloads = {t: n for t, n in origin.counts.items() if "_HLS_msn=" in t}
    others = {t: n for t, n in origin.counts.items() if "_HLS_msn=" not in t}
    log(f"{len(fanout.connections)} clients connected; hlscache joined {joined} to one flight before the release; "
        f"origin held {held} blocking reload(s)")
    log(f"origin blocking reloads by target: {reloads}")
    if others:
        log(f"origin's other requests (after the answer: read-ahead): {sum(others.values())} {sorted(others)}")
    log(f"X-Cache of the answers: {fanout.heads}")
    log(f"CPU from the origin's answer to the last client's completion: {cpu_use(fanout, 'hlscache')}"
        + (" (this process: the native clients)" if args.client == "native" else ""))
    if fanout.errors:
        log(f"client errors: {fanout.errors}")
    return sum(reloads.values()), answered_at, fanout


async def floor(args, sample):
    """The same clients against a plain asyncio server in a child process that answers all of them at once."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--floor-server", str(args.clients),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    try:
        child.stdin.write(len(sample).to_bytes(4, "big") + sample)
        await child.stdin.drain()
        port = int((await asyncio.wait_for(child.stdout.readline(), 10)).split()[1])
        fanout = make_fanout(args, port, f"{PLAYLIST_PATH}?{QUERY}")
        await fanout.connect(args.hold + args.timeout + 30)
        await fanout.start()
        try:
            await asyncio.wait_for(child.stdout.readline(), 10)  # "ready": every request read
        except asyncio.TimeoutError:
            log("floor: the server had not read every request 10 s after the last send; releasing anyway")
        await asyncio.sleep(max(0.0, fanout.last_send + args.hold - time.monotonic()))
        fanout.cpu = lambda: (fanout.client_cpu(), process_cpu(child.pid))
        fanout.cpu_at_release = fanout.cpu()
        child.stdin.write(b"go\n")
        await child.stdin.drain()
        answered_at = float((await asyncio.wait_for(child.stdout.readline(), 30)).split()[1])
        await fanout.wait(args.timeout)
        if fanout.errors:
            log(f"floor client errors: {fanout.errors}")
        log(f"floor: CPU from the release to the last client's completion: {cpu_use(fanout, 'floor server')}")
        return answered_at, fanout
    finally:
        child.stdin.close()
        try:
            await asyncio.wait_for(child.wait(), 5)
        except asyncio.TimeoutError:
            child.kill()
            await child.wait()


async def floor_server(count):
    """The floor's server: holds every request until `go` on stdin, then writes every answer at once."""
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    size = int.from_bytes(await stdin.readexactly(4), "big")
    answer = await stdin.readexactly(size)
    writers = []
    ready = loop.create_future()

    async def handle(reader, writer):
        try:
            await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        writers.append(writer)
        if len(writers) == count and not ready.done():
            ready.set_result(None)

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    try:
        await asyncio.wait_for(asyncio.shield(ready), 30)
    except asyncio.TimeoutError:
        pass
    print("ready", flush=True)
    await asyncio.wait_for(stdin.readline(), 60)
    answered_at = time.monotonic()
    for writer in writers:
        writer.write(answer)
    print(f"answered {answered_at!r}", flush=True)
    await asyncio.sleep(0)
    for writer in writers:
        await writer.drain()
    await asyncio.wait_for(stdin.read(), 60)  # the parent closes stdin or kills this process when done
    server.close()


def raise_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


async def main(args):
    started = time.monotonic()
    requests, answered_at, fanout = await through_hlscache(args)
    print(f"llhls_fanout_origin_requests {requests}", flush=True)
    if answered_at is not None and fanout.completions:
        times = ms(fanout.completions, answered_at)
        print(f"llhls_fanout_last_ms {max(times):.1f}")
        print(f"llhls_fanout_p50_ms {statistics.median(times):.1f}")
        print(f"llhls_fanout_first_ms {min(times):.1f}")
    else:
        log("no client got a complete 200 after the origin's answer: no llhls_fanout_last_ms")
    print(f"llhls_fanout_client_errors {args.clients - len(fanout.completions)}", flush=True)
    sample = fanout.sample or response(200, MPEGURL, playlist())
    if fanout.sample is None:
        log("floor: no answer from hlscache to copy; the floor server sends the origin's playlist instead")
    floor_at, floor_fanout = await floor(args, sample)
    if floor_fanout.completions:
        times = ms(floor_fanout.completions, floor_at)
        print(f"llhls_fanout_client_floor_ms {max(times):.1f}")
        print(f"llhls_fanout_client_floor_p50_ms {statistics.median(times):.1f}", flush=True)
    log(f"answers of {len(sample)} bytes (head and body); clients: {args.client}; "
        f"{time.monotonic() - started:.1f} s in all")


if __name__ == "__main__":
    raise_file_limit()
    if len(sys.argv) == 3 and sys.argv[1] == "--floor-server":
        asyncio.run(floor_server(int(sys.argv[2])))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("port", type=int, help="hlscache's port on 127.0.0.1")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=1.0, help="seconds from the last send to the release")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds the clients wait after the release")
    parser.add_argument("--server-pid", type=int, help="hlscache's process id, for its CPU time in the fan-out")
    parser.add_argument("--client", choices=["protocol", "streams", "native"], default="protocol")
    parser.add_argument("--bench", help="hlscache-bench, for --client native")
    arguments = parser.parse_args()
    if arguments.client == "native" and not arguments.bench:
        parser.error("--client native needs --bench PATH (hlscache-bench)")
    try:
        asyncio.run(asyncio.wait_for(main(arguments), 120))
    except asyncio.TimeoutError:
        log("did not finish within 120 s")
        sys.exit(1)
