#!/usr/bin/env python3
"""The hardening probe's abandoned misses: COUNT clients each connect, ask for a distinct slow object and close, over
SECONDS, against `hlscache serve` in front of an origin that holds every request 20 s. Prints `name value` lines:
whether the server lived, its slowest /healthz, its most descriptors, its peak RSS, and its fill counters.

Usage: abandoned_misses.py HLSCACHE_BINARY [COUNT [SECONDS]]   (default 12000 over 60 s; loopback only)
"""
import asyncio
import os
import resource
import shutil
import subprocess
import sys
import socket
import tempfile
import threading
import time


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def slow_origin(reader, writer):
    try:
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(20)
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
    except (Exception, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def request(port, target, timeout=5.0):
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), timeout)
    writer.close()
    return data


async def abandon(port, target):
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {target} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        await writer.drain()
        writer.close()
    except OSError:
        pass


def blocking_get(port, target, timeout=5.0):
    """A GET on its own socket, from a thread of its own: the clients' event loop does not delay it."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(f"GET {target} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


class Sampler(threading.Thread):
    """Every half second: /healthz's time, the server's descriptors, its fills in flight."""

    def __init__(self, port, pid):
        super().__init__(daemon=True)
        self.port, self.pid = port, pid
        self.stopping = threading.Event()
        self.worst_health = 0.0
        self.most_fds = 0
        self.most_fills = 0.0

    def run(self):
        while not self.stopping.wait(0.5):
            begun = time.monotonic()
            try:
                blocking_get(self.port, "/healthz")
                self.worst_health = max(self.worst_health, (time.monotonic() - begun) * 1000)
            except OSError:
                self.worst_health = max(self.worst_health, 5000)
            self.most_fds = max(self.most_fds, descriptors(self.pid))
            try:
                text = blocking_get(self.port, "/metrics").decode(errors="replace")
                self.most_fills = max(self.most_fills, metric(text, "hlscache_fills_in_flight"))
            except OSError:
                pass


def descriptors(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def peak_rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return -1


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return 0.0


async def main():
    binary = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 12000
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    origin_port, port = free_port(), free_port()
    origin = await asyncio.start_server(slow_origin, "127.0.0.1", origin_port, backlog=4096)
    cache = tempfile.mkdtemp(prefix="hlscache-abandon-")
    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--cache-dir", cache, "--allow-host", "127.0.0.1",
         "--log-level", "error", "--read-ahead", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                await request(port, "/healthz", 1)
                break
            except (OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.1)
        sampler = Sampler(port, server.pid)
        sampler.start()
        sent = 0
        start = time.monotonic()
        tasks = set()
        while sent < count:
            due = int((time.monotonic() - start) / seconds * count) + 1
            while sent < min(due, count):
                task = asyncio.ensure_future(abandon(port, f"/o/http/127.0.0.1:{origin_port}/slow/{sent}.ts"))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                sent += 1
            await asyncio.sleep(0.005)
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(1)
        sampler.stopping.set()
        sampler.join()
        worst_health, most_fds, most_fills = sampler.worst_health, sampler.most_fds, sampler.most_fills
        alive = server.poll() is None
        refused = 0.0
        if alive:
            text = (await request(port, "/metrics", 5)).decode(errors="replace")
            refused = metric(text, "hlscache_fills_refused_total")
        print(f"abandoned_misses_sent {sent}")
        print(f"abandoned_alive {1 if alive else 0}")
        print(f"abandoned_healthz_max_ms {worst_health:.1f}")
        print(f"abandoned_fds_max {most_fds}")
        print(f"abandoned_fills_in_flight_max {most_fills:.0f}")
        print(f"abandoned_fills_refused {refused:.0f}")
        print(f"abandoned_peak_rss_mb {peak_rss_mb(server.pid):.1f}")
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
        origin.close()
        shutil.rmtree(cache, ignore_errors=True)


asyncio.run(main())
