#!/usr/bin/env python3
"""The peer of `hlscache-bench rewrite`: the same playlist rewrite with PyPI's m3u8 (parse, map every segment and
key URI to the proxy form after resolving it against the playlist's URL, dump), median of 31 runs after 3 warm-ups.
Prints `rewrite_python_m3u8_ms`."""
import statistics
import sys
import time
from urllib.parse import urljoin

import m3u8

PLAYLIST = "https://cdn.example.com/vod/movie/1080p/index.m3u8?token=abc"


def proxied(url):
    scheme, rest = urljoin(PLAYLIST, url).split("://", 1)
    return f"/o/{scheme}/{rest}"


def rewrite(text):
    playlist = m3u8.loads(text)
    for segment in playlist.segments:
        segment.uri = proxied(segment.uri)
    for key in playlist.keys:
        if key is not None and key.uri:
            key.uri = proxied(key.uri)
    return playlist.dumps()


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    for _ in range(3):
        rewrite(text)
    samples = []
    for _ in range(31):
        start = time.perf_counter()
        rewrite(text)
        samples.append((time.perf_counter() - start) * 1000)
    print(f"rewrite_python_m3u8_ms {statistics.median(samples):.1f}")


if __name__ == "__main__":
    main()
