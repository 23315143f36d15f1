#!/usr/bin/env bash
# Checks docker/fleet/hlscache-fleet.conf with the real nginx, on 127.0.0.1 only:
#   1. nginx -t accepts it, included from a main nginx.conf with fleet/nodes.conf and fleet/listen.conf
#      beside it (the layout docker/compose-fleet.yaml and the Swift tests use);
#   2. with three small Python backends (http.server) as the nodes: the same URI always reaches the same
#      backend (byte ranges of it too), different URIs spread over all three, Range and
#      X-HLSCache-Read-Ahead reach the node, and upstream connections are kept alive;
#   3. after one backend is killed, every request still answers 200: the dead backend's URIs move to the
#      others and no other URI moves;
#   4. with the dead backend removed from nodes.conf (nginx restarted), no URI moves again.
# Prints one line per failure and exits non-zero. Needs nginx, python3 and curl. Takes about 4 s.
# Usage: docker/fleet/check-nginx.sh
set -euo pipefail

cd "$(dirname "$0")"
conf="$(pwd)/hlscache-fleet.conf"
me="check-nginx.sh"

tmp=""
nginx_pid=""
backend_pids=()

cleanup() {
    local pid
    for pid in "$nginx_pid" "${backend_pids[@]}"; do
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
        if [ -n "$pid" ]; then wait "$pid" 2>/dev/null || true; fi
    done
    if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
    if [ -n "$tmp" ] && [ -s "$tmp/error.log" ]; then
        echo "--- last lines of nginx's error log:" >&2
        tail -n 5 "$tmp/error.log" | sed 's/^/    /' >&2
    fi
    echo "$me: FAIL: $*" >&2
    exit 1
}

for tool in nginx python3 curl; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install nginx-light python3 curl)"
done

tmp="$(mktemp -d)"
chmod 755 "$tmp"  # nginx workers may run as nobody
mkdir -p "$tmp/fleet" "$tmp/tmp"

# ---- The backends: answer any GET with their name and the headers the balancer passed on ----------------
cat > "$tmp/backend.py" <<'EOF'
import http.server, os, sys, threading
name, port_file = sys.argv[1], sys.argv[2]
lock, requests, peers = threading.Lock(), [0], set()
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # head and body are two writes: no 40 ms delayed-ACK wait
    def do_GET(self):
        if self.path == "/_stats":  # asked directly, not through nginx
            body = f"{requests[0]} {len(peers)}\n".encode()
        else:
            with lock:
                requests[0] += 1
                peers.add(self.client_address)
            body = f"{name}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Seen-Range", self.headers.get("Range", "-"))
        self.send_header("X-Seen-Read-Ahead", self.headers.get("X-HLSCache-Read-Ahead", "-"))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".part", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".part", port_file)
server.serve_forever()
EOF

names=(b1 b2 b3)
declare -A port_of
for name in "${names[@]}"; do
    python3 "$tmp/backend.py" "$name" "$tmp/$name.port" 2>"$tmp/$name.log" &
    backend_pids+=("$!")
done
: > "$tmp/fleet/nodes.conf"
for i in "${!names[@]}"; do
    name="${names[$i]}"
    for _ in $(seq 50); do [ -s "$tmp/$name.port" ] && break; sleep 0.1; done
    [ -s "$tmp/$name.port" ] || fail "backend $name did not start: $(cat "$tmp/$name.log")"
    port_of[$name]="$(cat "$tmp/$name.port")"
    echo "server 127.0.0.1:${port_of[$name]} max_fails=1 fail_timeout=10s;" >> "$tmp/fleet/nodes.conf"
done

# ---- nginx: the fleet config included from a main nginx.conf ------------------------------------------
free_port() {
    local port
    for _ in $(seq 100); do
        port=$((20000 + RANDOM % 12000))  # below Linux's ephemeral range (32768-60999)
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
    done
    return 1
}
lb_port="$(free_port)" || fail "no free port found on 127.0.0.1"
echo "listen 127.0.0.1:$lb_port;" > "$tmp/fleet/listen.conf"
cat > "$tmp/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 256; }
http {
    client_body_temp_path $tmp/tmp;
    proxy_temp_path $tmp/tmp;
    fastcgi_temp_path $tmp/tmp;
    uwsgi_temp_path $tmp/tmp;
    scgi_temp_path $tmp/tmp;
    access_log $tmp/access.log;
    include $conf;
}
EOF

nginx -t -q -e "$tmp/error.log" -p "$tmp" -c "$tmp/nginx.conf" 2>"$tmp/nginx-t.log" \
    || fail "nginx -t rejects $conf: $(cat "$tmp/nginx-t.log")"
lb="http://127.0.0.1:$lb_port"

start_nginx() {
    nginx -e "$tmp/error.log" -p "$tmp" -c "$tmp/nginx.conf" >"$tmp/nginx.out" 2>&1 &
    nginx_pid=$!
    local up=0
    for _ in $(seq 50); do
        if [ "$(curl -fsS "$lb/lb-healthz" 2>/dev/null)" = "ok" ]; then up=1; break; fi
        kill -0 "$nginx_pid" 2>/dev/null || break
        sleep 0.1
    done
    [ "$up" = 1 ] || fail "nginx did not answer $lb/lb-healthz"
}

stop_nginx() {
    kill -TERM "$nginx_pid"
    wait "$nginx_pid" 2>/dev/null || true
    nginx_pid=""
}

start_nginx

# get PATH [CURL_ARGS...]: prints the answering backend's name; fails on anything but 200.
get() {
    local path="$1" out code
    shift
    out="$(curl -sS --max-time 10 -w '\n%{http_code}' "$@" "$lb$path")" || fail "GET $path: curl failed"
    code="${out##*$'\n'}"
    [ "$code" = 200 ] || fail "GET $path answered $code"
    echo "${out%%$'\n'*}"
}

# ---- 2. Same URI, same backend; URIs spread ---------------------------------------------------------------
uris=()
for i in $(seq 0 59); do uris+=("/o/https/cdn.example.com/live/v1/seg$i.ts?t=$((i % 7))"); done
declare -A owner
declare -A count=([b1]=0 [b2]=0 [b3]=0)
for uri in "${uris[@]}"; do
    first="$(get "$uri")"
    case "$first" in b1 | b2 | b3) ;; *) fail "GET $uri: unexpected body '$first'" ;; esac
    for range in 0-0 1-1 0-; do
        again="$(get "$uri" -H "Range: bytes=$range")"
        [ "$again" = "$first" ] || fail "GET $uri (Range bytes=$range) went to $again, before to $first"
    done
    owner[$uri]="$first"
    count[$first]=$((count[$first] + 1))
done
for name in "${names[@]}"; do
    [ "${count[$name]}" -gt 0 ] \
        || fail "no URI of ${#uris[@]} went to $name (b1 ${count[b1]}, b2 ${count[b2]}, b3 ${count[b3]})"
done

headers="$(curl -sS -o /dev/null -D - -H 'Range: bytes=5-9' -H 'X-HLSCache-Read-Ahead: 1' "$lb${uris[0]}")"
grep -qi '^X-Seen-Range: bytes=5-9' <<<"$headers" || fail "Range did not reach the backend"
grep -qi '^X-Seen-Read-Ahead: 1' <<<"$headers" || fail "X-HLSCache-Read-Ahead did not reach the backend"

for name in "${names[@]}"; do
    read -r served conns < <(curl -fsS "http://127.0.0.1:${port_of[$name]}/_stats")
    [ "$conns" -lt "$served" ] || fail "$name: $served requests over $conns connections (no upstream keep-alive)"
done

# ---- 3. A backend dies: its URIs move, no other URI moves, clients see no error ----------------------------
dead=b1
{ kill -KILL "${backend_pids[0]}"; wait "${backend_pids[0]}"; } 2>/dev/null || true  # no "Killed" job notice
moved=0
declare -A during
for uri in "${uris[@]}"; do
    now="$(get "$uri")"
    during[$uri]="$now"
    if [ "${owner[$uri]}" = "$dead" ]; then
        [ "$now" != "$dead" ] || fail "GET $uri answered by the killed backend"
        again="$(get "$uri")"
        [ "$again" = "$now" ] || fail "GET $uri went to $now, then to $again, with $dead down"
        moved=$((moved + 1))
    else
        [ "$now" = "${owner[$uri]}" ] || fail "GET $uri moved from ${owner[$uri]} to $now when $dead died"
    fi
done

# ---- 4. The dead node is taken out of nodes.conf: nothing moves again (a ring, not hash modulo N) ------------
grep -v ":${port_of[$dead]} " "$tmp/fleet/nodes.conf" > "$tmp/nodes.conf.new"
mv "$tmp/nodes.conf.new" "$tmp/fleet/nodes.conf"
stop_nginx
start_nginx
for uri in "${uris[@]}"; do
    now="$(get "$uri")"
    [ "$now" = "${during[$uri]}" ] \
        || fail "GET $uri went to $now with $dead removed from nodes.conf, to ${during[$uri]} with $dead down"
done

echo "$me: ok: ${#uris[@]} URIs over 3 nodes (b1 ${count[b1]}, b2 ${count[b2]}, b3 ${count[b3]}), stable with ranges;" \
    "$dead killed: its $moved moved, none other, no errors; $dead removed from nodes.conf: none moved" >&2
