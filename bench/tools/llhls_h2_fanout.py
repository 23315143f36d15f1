#!/usr/bin/env python3
"""LL-HLS fan-out over HTTP/2: N blocking reloads of the same `_HLS_msn`/`_HLS_part` as streams of ONE connection.

Usage: llhls_h2_fanout.py HLSCACHE_TLS_PORT CA_FILE [--streams N] [--hold SECONDS] [--timeout SECONDS]

The origin is llhls_fanout.py's (it holds every blocking reload until released, and counts requests). One TLS
connection to hlscache (ALPN h2, the `h2` package from PyPI) opens N streams, each the same blocking reload; once
hlscache reports (`/metrics`) that N-1 joined the origin request or are parked, and the hold has passed, the origin
answers, taking a monotonic timestamp just before it writes; each stream's completion is stamped as its END_STREAM
is read. Prints:

  llhls_h2_fanout_origin_requests  origin requests with `_HLS_msn` (target 1)
  llhls_h2_fanout_last_ms          last stream's completion minus the origin's answer, ms (target <= 25)
  llhls_h2_fanout_p50_ms           median stream's completion minus the origin's answer, ms
  llhls_h2_fanout_errors           streams without a complete 200
"""
import argparse
import asyncio
import ssl
import statistics
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings

from llhls_fanout import Origin, PLAYLIST_PATH, QUERY, deduplicated


class Streams(asyncio.Protocol):
    """One HTTP/2 connection whose streams are all the same GET; stamps each stream's end."""

    def __init__(self, authority, target, count):
        self.connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.authority, self.target, self.count = authority, target, count
        self.status = {}
        self.done = {}
        self.finished = asyncio.get_running_loop().create_future()
        self.transport = None
        self.last_send = None

    def connection_made(self, transport):
        self.transport = transport
        self.connection.initiate_connection()
        self.connection.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
        self.connection.increment_flow_control_window(1 << 24)
        transport.write(self.connection.data_to_send())

    def send_all(self):
        headers = [(":method", "GET"), (":scheme", "https"), (":authority", self.authority), (":path", self.target)]
        for _ in range(self.count):
            self.connection.send_headers(self.connection.get_next_available_stream_id(), headers, end_stream=True)
        self.transport.write(self.connection.data_to_send())
        self.last_send = time.monotonic()

    def data_received(self, data):
        now = time.monotonic()
        for event in self.connection.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                self.status[event.stream_id] = dict(event.headers).get(b":status")
            elif isinstance(event, h2.events.DataReceived):
                self.connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                self.done[event.stream_id] = now
            elif isinstance(event, h2.events.StreamReset):
                self.done[event.stream_id] = None
        self.transport.write(self.connection.data_to_send())
        if len(self.done) >= self.count and not self.finished.done():
            self.finished.set_result(None)

    def connection_lost(self, exc):
        if not self.finished.done():
            self.finished.set_result(None)


async def main(args):
    origin = Origin()
    server = await asyncio.start_server(origin.handle, "127.0.0.1", 0, backlog=1024)
    origin_port = server.sockets[0].getsockname()[1]
    target = f"/o/http/127.0.0.1:{origin_port}{PLAYLIST_PATH}?{QUERY}"
    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["h2"])
    metrics_port = args.metrics_port
    before = await deduplicated(metrics_port)
    loop = asyncio.get_running_loop()
    _, streams = await loop.create_connection(
        lambda: Streams(f"127.0.0.1:{args.port}", target, args.streams), "127.0.0.1", args.port, ssl=context,
        server_hostname="127.0.0.1")
    await asyncio.sleep(0.2)  # the server's SETTINGS (its stream limit) first
    streams.send_all()
    await asyncio.wait_for(origin.arrived.wait(), 10)
    deadline = time.monotonic() + 10
    joined = 0
    while time.monotonic() < deadline:
        joined = await deduplicated(metrics_port) - before
        if joined >= args.streams - 1:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(max(0.0, streams.last_send + args.hold - time.monotonic()))
    origin.release()
    try:
        await asyncio.wait_for(streams.finished, args.timeout)
    except asyncio.TimeoutError:
        pass
    answered_at = origin.answered_at
    await asyncio.sleep(0.3)
    await origin.close(server)
    reloads = sum(n for t, n in origin.counts.items() if "_HLS_msn=" in t)
    completed = [at for sid, at in streams.done.items() if at is not None and streams.status.get(sid) == b"200"]
    errors = args.streams - len(completed)
    print(f"llhls_h2_fanout: {joined} joined or parked before the release; statuses "
          f"{sorted(set(streams.status.values()))}", file=sys.stderr)
    print(f"llhls_h2_fanout_origin_requests {reloads}")
    if completed:
        after = sorted((at - answered_at) * 1000 for at in completed)
        print(f"llhls_h2_fanout_last_ms {after[-1]:.2f}")
        print(f"llhls_h2_fanout_p50_ms {statistics.median(after):.2f}")
    print(f"llhls_h2_fanout_errors {errors}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("ca")
    parser.add_argument("--metrics-port", type=int, required=True)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=20.0)
    asyncio.run(main(parser.parse_args()))
