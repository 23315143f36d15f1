"""The asyncio clients of the LL-HLS fan-out (llhls_fanout.py): N connections, one request each, each answer's
completion stamped with time.monotonic() as its last byte is read; the same interface as fanout_native.py's
``NativeFanout``.

``Fanout`` with mode `protocol` uses bare asyncio Protocols (``ClientProtocol``: parsed as bytes arrive, no task per
connection, the cheapest asyncio client); with mode `streams`, asyncio streams read by a task each
(``StreamClient``).
"""
import asyncio
import time


class ClientProtocol(asyncio.Protocol):
    """One client over a bare asyncio Protocol: parses as bytes arrive and stamps the completion there."""

    def __init__(self, fanout):
        self.fanout = fanout
        self.buffer = bytearray()
        self.transport = None
        self.need = None
        self.status = None
        self.head = b""
        self.finished = False

    def connection_made(self, transport):
        self.transport = transport

    def start(self):
        self.transport.write(self.fanout.request)

    def close(self):
        self.transport.close()

    def data_received(self, data):
        if self.finished:
            return
        self.buffer += data
        if self.need is None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            self.head = bytes(self.buffer[: end + 4])
            self.status, length = parse_head(self.head)
            if length is None:
                self.finish(None, "no Content-Length")
                return
            self.need = end + 4 + length
        if len(self.buffer) >= self.need:
            now = time.monotonic()
            self.finish(now if self.status == 200 else None, f"status {self.status}")

    def connection_lost(self, exc):
        if not self.finished:
            self.finish(None, f"connection lost after {len(self.buffer)} bytes ({exc})")

    def finish(self, at, reason):
        self.finished = True
        self.fanout.record(self, at, reason)


def parse_head(head):
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return status, length


def header(head, name):
    for line in head.decode("latin-1").split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == name:
            return value.strip()
    return None


class Fanout:
    """N clients sending one request each and recording when each complete answer was read."""

    def __init__(self, port, target, count, mode):
        self.port, self.target, self.count, self.mode = port, target, count, mode
        self.completions = []
        self.errors = {}
        self.heads = {}
        self.sample = None  # one whole answer (head and body), for the floor server
        self.pending = count
        self.all_done = None
        self.connections = []
        self.last_send = None
        self.cpu = None  # a function giving (this process's CPU s, the server's CPU s or None)
        self.cpu_at_release = self.cpu_at_done = None

    def record(self, client, at, reason, body=None):
        if at is not None:
            self.completions.append(at)
            cache = header(client.head, "x-cache") or "none"
            self.heads[cache] = self.heads.get(cache, 0) + 1
            if self.sample is None:
                self.sample = bytes(client.buffer[: client.need]) if body is None else client.head + body
        else:
            self.errors[reason] = self.errors.get(reason, 0) + 1
        self.pending -= 1
        if self.pending == 0 and not self.all_done.done():
            if self.cpu is not None:
                self.cpu_at_done = self.cpu()
            self.all_done.set_result(None)

    async def connect(self, timeout=None):
        """Opens the connections (`timeout` is the native clients'; these time out in ``wait``)."""
        loop = asyncio.get_running_loop()
        self.all_done = loop.create_future()
        request = (
            f"GET {self.target} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nUser-Agent: llhls_fanout\r\n"
            "Accept: */*\r\n\r\n"
        ).encode()
        self.request = request

        async def open_one():
            try:
                if self.mode == "protocol":
                    client = ClientProtocol(self)
                    await asyncio.wait_for(loop.create_connection(lambda: client, "127.0.0.1", self.port), 10)
                    return client
                reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), 10)
                return StreamClient(self, reader, writer)
            except (OSError, asyncio.TimeoutError) as error:
                self.errors[f"connect: {error!r}"] = self.errors.get(f"connect: {error!r}", 0) + 1
                self.pending -= 1
                return None

        # Batches of 100, so that the listen backlog is never the story.
        for start in range(0, self.count, 100):
            batch = await asyncio.gather(*(open_one() for _ in range(start, min(start + 100, self.count))))
            self.connections += [c for c in batch if c is not None]

    async def start(self):
        """Sends every request."""
        for client in self.connections:
            client.start()
        self.last_send = time.monotonic()

    def client_cpu(self):
        """The clients' CPU seconds so far: this process's."""
        return time.process_time()

    async def wait(self, seconds):
        if self.pending > 0:
            try:
                await asyncio.wait_for(asyncio.shield(self.all_done), seconds)
            except asyncio.TimeoutError:
                pass
        for client in self.connections:
            if not client.finished:
                client.finish(None, f"no complete answer within {seconds:g} s")
            client.close()


class StreamClient:
    """One client over asyncio streams, read by a task of its own."""

    def __init__(self, fanout, reader, writer):
        self.fanout, self.reader, self.writer = fanout, reader, writer
        self.finished = False
        self.head = b""
        self.task = None

    def start(self):
        self.writer.write(self.fanout.request)
        self.task = asyncio.get_running_loop().create_task(self.read())

    async def read(self):
        try:
            self.head = await self.reader.readuntil(b"\r\n\r\n")
            status, length = parse_head(self.head)
            if length is None:
                self.finish(None, "no Content-Length")
                return
            body = await self.reader.readexactly(length)
            now = time.monotonic()
            self.finished = True
            self.fanout.record(self, now if status == 200 else None, f"status {status}", body)
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            self.finish(None, f"connection lost ({error!r})")

    def finish(self, at, reason):
        if not self.finished:
            self.finished = True
            self.fanout.record(self, at, reason)

    def close(self):
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self.writer.close()
