#!/usr/bin/env bash
# Builds hlscache in release mode and prints one figure per line, `name value`.
# Usage: bench/run.sh [NAME]   (NAME: rewrite, origin, cache; all when omitted)
set -euo pipefail
trap '[ -n "${nginx_pid:-}" ] && kill "$nginx_pid" 2>/dev/null; true' EXIT
cd "$(dirname "$0")/.."
corpus="${HLSCACHE_CORPUS:-$(cd .. && pwd)/shared/corpus}"
swift build -c release --product hlscache-bench >&2
bin="$(swift build -c release --show-bin-path)/hlscache-bench"
want="${1:-all}"

run_rewrite() {
    local largest=""
    if [ -d "$corpus" ]; then
        largest=$(find "$corpus" -name '*.m3u8' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
    fi
    "$bin" rewrite $largest
}

# Starts nginx from bench/peers/nginx-static.conf on 127.0.0.1:$1 serving $2; sets nginx_prefix.
start_nginx() {
    nginx_prefix=$(mktemp -d)
    mkdir -p "$nginx_prefix/tmp"
    sed -e "s|__ROOT__|$2|" -e "s|__PORT__|$1|" -e "s|__PREFIX__|$nginx_prefix|" \
        bench/peers/nginx-static.conf > "$nginx_prefix/nginx.conf"
    nginx -c "$nginx_prefix/nginx.conf" -p "$nginx_prefix" &
    nginx_pid=$!
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$1/" 2>/dev/null && break; sleep 0.1; done
}

stop_nginx() { kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; rm -rf "$nginx_prefix"; }

run_origin() {
    command -v nginx >/dev/null || { echo "origin: needs nginx (apt-get install nginx-light)" >&2; return 1; }
    local root port=18431 count=500 concurrency=16
    root=$(mktemp -d)
    head -c $((2 << 20)) /dev/urandom > "$root/seg.bin"
    chmod 755 "$root" && chmod 644 "$root/seg.bin"  # nginx workers run as nobody
    start_nginx "$port" "$root"
    local url="http://127.0.0.1:$port/seg.bin"
    "$bin" origin "$url" 10 4 >/dev/null  # warm up
    local ours
    ours=$("$bin" origin "$url" "$count" "$concurrency")
    echo "$ours" | grep -v origin_fetch_seconds
    # The curl command line, fetching the same URLs, in the same run.
    local config="$root/urls.txt"
    for _ in $(seq "$count"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url"; done > "$config"
    local theirs
    theirs=$(python3 - "$config" "$concurrency" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(["curl", "-s", "--parallel", "--parallel-max", sys.argv[2], "-K", sys.argv[1]], check=True)
seconds = time.monotonic() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{seconds:.3f} {rss:.1f}")
PY
)
    local curl_seconds curl_rss ours_seconds
    curl_seconds=${theirs% *}
    curl_rss=${theirs#* }
    ours_seconds=$(echo "$ours" | awk '/origin_fetch_seconds/ {print $2}')
    awk -v s="$curl_seconds" -v n="$count" 'BEGIN { printf "curl_cli_fetch_gbps %.2f\n", n * 2097152 * 8 / s / 1e9 }'
    echo "curl_cli_peak_rss_mb $curl_rss"
    awk -v a="$ours_seconds" -v b="$curl_seconds" 'BEGIN { printf "origin_vs_curl_cli %.2f\n", b / a }'
    stop_nginx
    rm -rf "$root"
}

run_cache() { "$bin" cache; }

case "$want" in
    rewrite) run_rewrite ;;
    origin) run_origin ;;
    cache) run_cache ;;
    all) run_rewrite; run_origin; run_cache ;;
    *) echo "unknown benchmark: $want (known: rewrite, origin, cache)" >&2; exit 64 ;;
esac
