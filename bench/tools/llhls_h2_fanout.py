#!/usr/bin/env python3
"""LL-HLS fan-out over HTTP/2: N blocking reloads of the same `_HLS_msn`/`_HLS_part` as streams of ONE connection.

Usage: llhls_h2_fanout.py HLSCACHE_TLS_PORT --metrics-port PORT [--streams N] [--hold SECONDS] [--timeout SECONDS]

The origin is llhls_fanout.py's (it holds every blocking reload until released, and counts requests). The client is
nghttp2's h2load: one TLS connection to hlscache (ALPN h2) carrying N concurrent streams, each the same blocking
reload (hlscache must allow N streams: --http2-max-streams). Once hlscache reports (`/metrics`) that N-1 joined the
origin request or are parked, and the hold has passed, the origin answers, taking the wall-clock time just before it
writes; h2load's log gives each stream's start and duration (wall clock, microseconds), so its completion. A C client:
a Python HTTP/2 client took 50 ms of its own to read a thousand answers. Prints:

  llhls_h2_fanout_origin_requests  origin requests with `_HLS_msn` (target 1)
  llhls_h2_fanout_last_ms          last stream's completion minus the origin's answer, ms (target <= 25)
  llhls_h2_fanout_p50_ms           median stream's completion minus the origin's answer, ms
  llhls_h2_fanout_errors           streams without a 200
"""
import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

from llhls_fanout import Origin, PLAYLIST_PATH, QUERY, deduplicated, wait_joined


def log(text):
    print(f"llhls_h2_fanout: {text}", file=sys.stderr, flush=True)


async def main(args):
    origin = Origin()
    server = await asyncio.start_server(origin.handle, "127.0.0.1", 0, backlog=1024)
    origin_port = server.sockets[0].getsockname()[1]
    url = f"https://127.0.0.1:{args.port}/o/http/127.0.0.1:{origin_port}{PLAYLIST_PATH}?{QUERY}"
    before = await deduplicated(args.metrics_port)
    with tempfile.TemporaryDirectory() as folder:
        requests_log = os.path.join(folder, "requests.tsv")
        client = await asyncio.create_subprocess_exec(
            "h2load", "-n", str(args.streams), "-c", "1", "-m", str(args.streams), "--log-file", requests_log, url,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        try:
            await asyncio.wait_for(origin.arrived.wait(), 10)
        except asyncio.TimeoutError:
            log("hlscache's blocking reload did not reach the origin within 10 s")
        joined = await wait_joined(args.metrics_port, before, args.streams - 1)
        if joined < args.streams - 1:
            log(f"only {joined} streams had joined the origin request after 10 s; releasing anyway")
        await asyncio.sleep(args.hold)
        released = time.time()
        origin.release()
        try:
            output, _ = await asyncio.wait_for(client.communicate(), args.timeout)
        except asyncio.TimeoutError:
            client.kill()
            output, _ = await client.communicate()
        await asyncio.sleep(0.3)
        await origin.close(server)
        completions, errors = [], 0
        with open(requests_log) as lines:
            for line in lines:
                start, status, duration = line.split("\t")[:3]
                if status.strip() != "200":
                    errors += 1
                    continue
                completions.append((int(start) + int(duration)) / 1e6)
    errors += max(0, args.streams - len(completions) - errors)
    reloads = sum(n for t, n in origin.counts.items() if "_HLS_msn=" in t)
    log(f"{joined} joined or parked before the release; h2load: "
        + " ".join(line for line in output.decode().splitlines() if "succeeded" in line))
    print(f"llhls_h2_fanout_origin_requests {reloads}")
    if completions:
        after = sorted((at - released) * 1000 for at in completions)
        print(f"llhls_h2_fanout_last_ms {after[-1]:.2f}")
        print(f"llhls_h2_fanout_p50_ms {statistics.median(after):.2f}")
    print(f"llhls_h2_fanout_errors {errors}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--metrics-port", type=int, required=True)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=20.0)
    asyncio.run(main(parser.parse_args()))
