#!/usr/bin/env bash
# The image's HEALTHCHECK (/usr/local/bin/docker-healthcheck.sh): exit 0 when GET /healthz answers 200.
# The runtime image has no curl binary (only libcurl), so this speaks HTTP/1.0 over bash's /dev/tcp.
# It reads the same HLSCACHE_HOST / HLSCACHE_PORT as the server: change the port with -e HLSCACHE_PORT,
# not with a --port flag, or this check will knock on the wrong port.
# Usage: docker-healthcheck.sh [TIMEOUT_SECONDS]   (default 4)
set -euo pipefail

host="${HLSCACHE_HOST:-127.0.0.1}"
port="${HLSCACHE_PORT:-8080}"
timeout_s="${1:-4}"
tls_only=0
if [ "$port" = none ]; then
    # HTTPS only: bash speaks no TLS, so the check is that the HTTPS port accepts.
    port="${HLSCACHE_TLS_PORT:-8443}"
    tls_only=1
fi
case "$host" in
    "" | 0.0.0.0 | "::" | "[::]") host=127.0.0.1 ;;  # a wildcard bind answers on loopback
    \[*\]) host="${host#[}"; host="${host%]}" ;;      # [::1] -> ::1 for /dev/tcp
esac

if ! { exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null; then
    echo "healthcheck: cannot connect to $host:$port" >&2
    exit 1
fi
if [ "$tls_only" = 1 ]; then
    exec 3<&-
    exit 0
fi
printf 'GET /healthz HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$host" >&3
status_line=""
IFS= read -r -t "$timeout_s" status_line <&3 || true
exec 3<&-
status_line="${status_line%$'\r'}"
read -r _ code _ <<<"$status_line"
if [ "${code:-}" != "200" ]; then
    echo "healthcheck: GET http://$host:$port/healthz: ${status_line:-no response}" >&2
    exit 1
fi
