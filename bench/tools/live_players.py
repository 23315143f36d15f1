#!/usr/bin/env python3
"""100 players of one live stream through hlscache, against a live origin that counts its requests.

Usage: live_players.py HLSCACHE_PORT [PLAYERS] [SECONDS]

The origin (on a free 127.0.0.1 port) serves a live media playlist, target duration 2 s, a window of six
100 KiB segments that advances every 2 s. Each player behaves like hls.js: it reloads the playlist one target
duration after a reload that brought a new segment, half of one after a reload that did not (RFC 8216 6.3.4),
and fetches every new segment once, over its own keep-alive connection. Players start spread over the first
target duration. Prints, as `name value` lines:

  live100_origin_fetches_per_segment  origin segment requests / distinct segments requested (target 1.00)
  live100_origin_segment_fetches_max  the most times any one segment was fetched from the origin
  live100_playlist_fetches_per_half_td  origin playlist requests per half target duration (target <= 1)
  live100_player_errors  player requests that failed or came back short
"""
import http.client
import http.server
import os
import random
import sys
import threading
import time

TARGET = 2.0
WINDOW = 6
SEGMENT_BYTES = 100 * 1024


class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    started = time.time()
    lock = threading.Lock()
    counts = {}

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        with Origin.lock:
            Origin.counts[path] = Origin.counts.get(path, 0) + 1
        if path == "/live/index.m3u8":
            newest = int((time.time() - Origin.started) / TARGET) + WINDOW
            first = newest - WINDOW + 1
            lines = ["#EXTM3U", "#EXT-X-VERSION:3", f"#EXT-X-TARGETDURATION:{int(TARGET)}",
                     f"#EXT-X-MEDIA-SEQUENCE:{first}"]
            for number in range(first, newest + 1):
                lines += [f"#EXTINF:{TARGET:.3f},", f"seg{number}.ts"]
            body = ("\n".join(lines) + "\n").encode()
            kind = "application/vnd.apple.mpegurl"
        elif path.startswith("/live/seg") and path.endswith(".ts"):
            number = int(path[len("/live/seg"):-3])
            body = random.Random(number).randbytes(SEGMENT_BYTES)
            kind = "video/mp2t"
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def player(port, playlist_path, stop_at, delay, errors, lock):
    time.sleep(delay)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    seen = set()

    def get(path):
        nonlocal connection
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            length = response.getheader("Content-Length")
            if response.status != 200 or (length is not None and int(length) != len(body)):
                raise IOError(f"{response.status} {len(body)}")
            return body
        except Exception:
            with lock:
                errors[0] += 1
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            return None

    while time.time() < stop_at:
        text = get(playlist_path)
        fresh = False
        if text is not None:
            base = playlist_path.rsplit("/", 1)[0] + "/"
            for line in text.decode().splitlines():
                if line and not line.startswith("#") and line not in seen:
                    seen.add(line)
                    fresh = True
                    get(line if line.startswith("/") else base + line)
        time.sleep(TARGET if fresh else TARGET / 2)


def main():
    port = int(sys.argv[1])
    players = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 30
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin_port = server.server_address[1]
    playlist = f"/o/http/127.0.0.1:{origin_port}/live/index.m3u8"
    errors, lock = [0], threading.Lock()
    start = time.time()
    stop_at = start + seconds
    threads = [threading.Thread(target=player, args=(port, playlist, stop_at, TARGET * i / players, errors, lock))
               for i in range(players)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.time() - start
    with Origin.lock:
        counts = dict(Origin.counts)
    segments = {path: count for path, count in counts.items() if path.startswith("/live/seg")}
    fetches = sum(segments.values())
    print(f"live100_origin_fetches_per_segment {fetches / max(1, len(segments)):.2f}")
    print(f"live100_origin_segment_fetches_max {max(segments.values(), default=0)}")
    print(f"live100_playlist_fetches_per_half_td {counts.get('/live/index.m3u8', 0) / (elapsed / (TARGET / 2)):.2f}")
    print(f"live100_player_errors {errors[0]}")
    server.shutdown()


if __name__ == "__main__":
    main()
