#!/usr/bin/env bash
# Smoke test of the Docker image's runtime, without a Docker engine: runs the release binary exactly as the
# container would (docker/entrypoint.sh, the Dockerfile's ENV and CMD, uid 10001, working directory = the
# cache dir), with three overrides: HLSCACHE_HOST=127.0.0.1 instead of 0.0.0.0 (tests may only bind
# loopback), a free port instead of 8080, and a temporary directory instead of the /data volume. Then:
#   1. waits for /healthz through docker/healthcheck.sh (the image's HEALTHCHECK);
#   2. plays a generated 4 s, two-variant HLS stream from a local nginx origin through it in reverse mode
#      (HLSCACHE_ORIGIN) with ffmpeg, twice (cold cache, warm cache); checks ffmpeg exits 0 without errors,
#      its packets match those read from the files directly, the cache directory holds entries, and the
#      origin served each segment once;
#   3. sends SIGTERM and checks the server exits with status 0 within the shutdown grace period (+5 s).
# Also checks the docker/ scripts parse (bash -n / sh -n). Prints one line per failure and exits non-zero.
#
# Usage: docker/smoke.sh [HLSCACHE_BINARY]
#   binary: $1, else $HLSCACHE_BIN, else .build/release/hlscache (this script never builds: pass the output of
#   docker/build.sh DIR). Needs ffmpeg, nginx and curl. CI tests the real image instead (docker/container-test.sh);
#   this one needs no container engine.
set -euo pipefail

cd "$(dirname "$0")/.."
repo="$(pwd)"
me="smoke.sh"

tmp=""
server_pid=""
nginx_pid=""
server_log=""
nginx_dir=""

cleanup() {
    local pid
    for pid in "$server_pid" "$nginx_pid"; do
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fail MESSAGE: the server's (and nginx's) last log lines as context, then MESSAGE as the last line.
fail() {
    if [ -n "$server_log" ] && [ -s "$server_log" ]; then
        echo "--- last lines of the server's output:" >&2
        tail -n 20 "$server_log" | sed 's/^/    /' >&2
    fi
    if [ -n "$nginx_dir" ] && [ -s "$nginx_dir/error.log" ]; then
        echo "--- last lines of nginx's error log:" >&2
        tail -n 5 "$nginx_dir/error.log" | sed 's/^/    /' >&2
    fi
    echo "$me: FAIL: $*" >&2
    exit 1
}

note() { echo "$me: $*" >&2; }

# dump_threads PID: each thread's name, state and kernel wait channel, then its stack when gdb is installed: what
# a process that does not exit is waiting for.
dump_threads() {
    local task
    echo "--- threads of process $1 (name, state, wait channel):" >&2
    for task in /proc/"$1"/task/*; do
        printf '    %s %s %s\n' "$(cat "$task/comm" 2>/dev/null)" \
            "$(sed -n 's/^State:[[:space:]]*//p' "$task/status" 2>/dev/null)" "$(cat "$task/wchan" 2>/dev/null)" >&2
    done
    if command -v gdb >/dev/null; then
        echo "--- their stacks (gdb):" >&2
        timeout 60 gdb -p "$1" -batch -nx -ex 'thread apply all bt 25' 2>&1 | grep -E '^(Thread|#)' | sed 's/^/    /' >&2 || true
    fi
}

# ---- 0. Scripts parse; tools present; binary found --------------------------------------------------
for script in docker/*.sh; do
    bash -n "$script" || fail "$script: bash -n reports a syntax error"
    [ -x "$script" ] || fail "$script is not executable (chmod +x $script)"
done
sh -n docker/entrypoint.sh || fail "docker/entrypoint.sh: sh -n reports a syntax error (it runs under /bin/sh)"
for tool in ffmpeg nginx curl; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install ffmpeg nginx-light curl)"
done

bin="${1:-${HLSCACHE_BIN:-$repo/.build/release/hlscache}}"
[ -x "$bin" ] || fail "no executable hlscache at $bin (pass a path, set HLSCACHE_BIN, or run docker/build.sh DIR)"
bin="$(readlink -f "$bin")"

# ---- 1. Read the image's ENV, ENTRYPOINT and CMD from the Dockerfile ---------------------------------
# Prints the arguments of every INSTRUCTION ($1) of the Dockerfile's last stage, one instruction per line
# (continuation lines joined, comment lines dropped).
dockerfile_args() {
    awk -v want="$1" '
        /^[ \t]*#/ { next }
        {
            line = $0
            joined = (cont ? joined " " line : line)
            if (joined ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", joined); cont = 1; next }
            cont = 0
            sub(/^[ \t]+/, "", joined)
            split(joined, w, /[ \t]+/)
            word = toupper(w[1])
            if (word == "FROM") { n = 0 }
            else if (word == want) { rest = substr(joined, length(w[1]) + 1); sub(/^[ \t]+/, "", rest); out[++n] = rest }
            joined = ""
        }
        END { for (i = 1; i <= n; i++) print out[i] }
    ' docker/Dockerfile
}

# Splits a JSON array of plain strings (["a", "b"]) into the array named $2.
json_words() {
    local text="$1" item
    local -n into="$2"
    into=()
    [[ "$text" =~ ^\[(.*)\][[:space:]]*$ ]] || return 1
    text="${BASH_REMATCH[1]}"
    [[ "$text" != *\\* ]] || return 1
    while [[ "$text" =~ ^[[:space:]]*\"([^\"]*)\"[[:space:]]*(,(.*))?$ ]]; do
        item="${BASH_REMATCH[1]}"
        into+=("$item")
        text="${BASH_REMATCH[3]}"
        [ -n "${BASH_REMATCH[2]}" ] || { text=""; break; }
    done
    [[ "$text" =~ ^[[:space:]]*$ ]]
}

image_env=()
while IFS= read -r line; do
    read -r -a pairs <<<"$line"
    for pair in "${pairs[@]}"; do
        [[ "$pair" =~ ^[A-Za-z_][A-Za-z0-9_]*=[^\"\'\$]*$ ]] \
            || fail "docker/Dockerfile: ENV $pair: use the KEY=VALUE form without quotes, \$ or spaces (smoke.sh reads it)"
        image_env+=("$pair")
    done
done < <(dockerfile_args ENV)
[ "${#image_env[@]}" -gt 0 ] || fail "docker/Dockerfile: no ENV in the runtime stage"

entrypoint_line="$(dockerfile_args ENTRYPOINT | tail -n 1)"
[ "$entrypoint_line" = '["/usr/local/bin/docker-entrypoint.sh"]' ] \
    || fail "docker/Dockerfile: ENTRYPOINT is '$entrypoint_line', expected [\"/usr/local/bin/docker-entrypoint.sh\"]"
dockerfile_args COPY | grep -Eq '(^|[[:space:]])docker/entrypoint\.sh[[:space:]]+/usr/local/bin/docker-entrypoint\.sh$' \
    || fail "docker/Dockerfile: no COPY of docker/entrypoint.sh to /usr/local/bin/docker-entrypoint.sh"
cmd_line="$(dockerfile_args CMD | tail -n 1)"
image_cmd=()
json_words "$cmd_line" image_cmd || fail "docker/Dockerfile: CMD '$cmd_line' is not a JSON array of plain strings"

# Final environment: the image's, with the overrides described at the top.
tmp="$(mktemp -d)"
chmod 755 "$tmp"  # nginx workers (nobody) and the server (uid 10001) read below it
data="$tmp/data"
www="$tmp/www"
mkdir -p "$data" "$www"

# A port nothing listens on (nothing answers a connect).
free_port() {
    local port
    for _ in $(seq 100); do
        port=$((20000 + RANDOM % 12000))  # below Linux's ephemeral range (32768-60999)
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
    done
    return 1
}
port="$(free_port)" || fail "no free port found on 127.0.0.1"
origin_port="$(free_port)" || fail "no free port found on 127.0.0.1"
[ "$port" != "$origin_port" ] || origin_port=$((port + 1))

grace=10  # hlscache's default --shutdown-grace
run_env=()
for pair in "${image_env[@]}"; do
    key="${pair%%=*}"
    value="${pair#*=}"
    case "$key" in
        HLSCACHE_HOST | HLSCACHE_PORT | HLSCACHE_CACHE_DIR) continue ;;  # overridden below
        HLSCACHE_SHUTDOWN_GRACE) grace="$value" ;;
        SWIFT_BACKTRACE)
            # The image ships swift-backtrace-static next to hlscache (docker/build.sh): use the one next to
            # this binary if there is one; otherwise leave the runtime's default (it finds its own backtracer).
            backtracer="$(dirname "$bin")/swift-backtrace-static"
            [ -x "$backtracer" ] || continue
            value="${value//\/usr\/local\/bin\/swift-backtrace-static/$backtracer}"
            ;;
    esac
    run_env+=("$key=$value")
done
run_env+=(
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    "HOME=$data"
    "HLSCACHE_HOST=127.0.0.1"
    "HLSCACHE_PORT=$port"
    "HLSCACHE_CACHE_DIR=$data"
    "HLSCACHE_ORIGIN=http://127.0.0.1:$origin_port"
    "HLSCACHE_BIN=$bin"
)

# ---- 2. The origin: a generated stream served by nginx ---------------------------------------------------
stream="$www/smoke"
mkdir -p "$stream"
(
    cd "$stream"
    ffmpeg -nostdin -v error \
        -f lavfi -i testsrc=size=160x90:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000 -t 4 \
        -map 0:v -map 1:a -map 0:v -map 1:a \
        -c:v libx264 -preset ultrafast -g 25 -keyint_min 25 -sc_threshold 0 \
        -b:v:0 200k -b:v:1 100k -s:v:1 128x72 -c:a aac -b:a 64k \
        -f hls -hls_time 1 -hls_playlist_type vod -hls_segment_filename 'v%v/seg%d.ts' \
        -master_pl_name master.m3u8 -var_stream_map 'v:0,a:0 v:1,a:1' 'v%v/index.m3u8'
) || fail "ffmpeg could not generate the test stream"
chmod -R a+rX "$www"
segments=()
while IFS= read -r file; do segments+=("/smoke/${file#"$stream"/}"); done < <(find "$stream" -name '*.ts' | sort)
[ "${#segments[@]}" -ge 2 ] || fail "the generated stream has ${#segments[@]} segments"

nginx_dir="$tmp/nginx"
mkdir -p "$nginx_dir/tmp"
cat > "$nginx_dir/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/error.log warn;
events { worker_connections 256; }
http {
    types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
    log_format smoke '\$request_method \$uri \$status';
    access_log $nginx_dir/access.log smoke;
    client_body_temp_path $nginx_dir/tmp;
    proxy_temp_path $nginx_dir/tmp;
    fastcgi_temp_path $nginx_dir/tmp;
    uwsgi_temp_path $nginx_dir/tmp;
    scgi_temp_path $nginx_dir/tmp;
    server {
        listen 127.0.0.1:$origin_port;
        root $www;
    }
}
EOF
nginx -e "$nginx_dir/error.log" -p "$nginx_dir" -c "$nginx_dir/nginx.conf" >"$nginx_dir/stdout.log" 2>&1 &
nginx_pid=$!
origin_up=0
for _ in $(seq 50); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$origin_port/smoke/master.m3u8" 2>/dev/null; then origin_up=1; break; fi
    kill -0 "$nginx_pid" 2>/dev/null || break
    sleep 0.1
done
[ "$origin_up" = 1 ] || fail "nginx did not serve http://127.0.0.1:$origin_port/smoke/master.m3u8"
: > "$nginx_dir/access.log"  # count only the server's requests from here on

# ---- 3. The server, started the way the container starts it -------------------------------------------
# The image runs as uid/gid 10001 (docker/add-user.sh); do the same when we are root and can.
as_user=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    if setpriv --reuid=10001 --regid=10001 --clear-groups test -x "$bin" 2>/dev/null; then
        as_user=(setpriv --reuid=10001 --regid=10001 --clear-groups)
        chown 10001:10001 "$data"
    else
        note "note: uid 10001 cannot run $bin; running the server as root"
    fi
fi
# The image holds a copy at /usr/local/bin/docker-entrypoint.sh; run a copy too, readable by uid 10001 even
# when the checkout is not (a fresh clone under a 0700 mktemp directory).
entrypoint="$tmp/docker-entrypoint.sh"
install -m 755 "$repo/docker/entrypoint.sh" "$entrypoint"
server_log="$tmp/server.log"
(cd "$data" && exec "${as_user[@]}" env -i "${run_env[@]}" "$entrypoint" "${image_cmd[@]}") \
    >"$server_log" 2>&1 &
server_pid=$!

# Whether the server process still runs: not gone, and neither a zombie (Z) nor dead (X, for an instant while it
# is torn down). A status file that cannot be read means it is gone.
server_alive() {
    local state
    kill -0 "$server_pid" 2>/dev/null || return 1
    state="$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$server_pid/status" 2>/dev/null)"
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

healthy=0
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
    if env HLSCACHE_HOST=127.0.0.1 HLSCACHE_PORT="$port" docker/healthcheck.sh 1 2>/dev/null; then healthy=1; break; fi
    if ! server_alive; then
        status=0; wait "$server_pid" || status=$?; server_pid=""
        fail "the server exited with status $status during startup"
    fi
    sleep 0.1
done
[ "$healthy" = 1 ] || fail "docker/healthcheck.sh: no 200 from http://127.0.0.1:$port/healthz within 30 s"
body="$(curl -fsS "http://127.0.0.1:$port/healthz")" || fail "GET /healthz failed"
[ "$(printf '%s' "$body" | tr -d '\r\n')" = ok ] || fail "GET /healthz answered '$body', expected 'ok'"

# entrypoint.sh must exec: the process we started is now hlscache itself, so SIGTERM reaches it.
# (An interpreted stand-in shows up as "INTERPRETER BINARY ...".)
exe="$(readlink -f "/proc/$server_pid/exe" 2>/dev/null || true)"
script_arg="$(tr '\0' '\n' <"/proc/$server_pid/cmdline" 2>/dev/null | sed -n 2p)"
[ "$exe" = "$bin" ] || [ "$script_arg" = "$bin" ] \
    || fail "process $server_pid is '$exe', not $bin: docker/entrypoint.sh did not exec the server"

# ---- 4. Play the stream through it ---------------------------------------------------------------------
url="http://127.0.0.1:$port/smoke/master.m3u8"
ffmpeg -nostdin -v error -i "$stream/master.m3u8" -map 0 -c copy -f framemd5 "$tmp/direct.framemd5" \
    || fail "ffmpeg could not read the generated stream from disk"
# play NAME: `ffmpeg -v error -i URL -map 0 -c copy` must exit 0, report no error, and yield the packets
# (framemd5: one checksum per packet) that reading the files from disk yields.
play() {
    local err="$tmp/ffmpeg-$1.err" out="$tmp/ffmpeg-$1.framemd5" status=0
    timeout 60 ffmpeg -nostdin -v error -i "$url" -map 0 -c copy -f framemd5 "$out" 2>"$err" || status=$?
    [ "$status" = 0 ] || fail "ffmpeg -i $url ($1) exited with status $status: $(head -n 1 "$err")"
    [ ! -s "$err" ] || fail "ffmpeg -i $url ($1) reported: $(head -n 1 "$err")"
    cmp -s "$tmp/direct.framemd5" "$out" \
        || fail "the packets ffmpeg read from $url ($1) differ from the stream's files (framemd5)"
}
play "cold cache"
play "warm cache"

# The cache directory holds entries (fills are published by rename; allow a moment after the last byte).
entries=0
for _ in $(seq 50); do
    entries=$(find "$data" -type f -size +0 -not -path "$data/tmp/*" | wc -l)
    [ "$entries" -ge "${#segments[@]}" ] && break
    sleep 0.1
done
[ "$entries" -gt 0 ] || fail "the cache directory $data is empty after playing the stream"
[ "$entries" -ge "${#segments[@]}" ] \
    || fail "the cache directory has $entries files after playing ${#segments[@]} segments"

# Two plays, one origin fetch per segment (a 304 revalidation would be fine; a second 200 is not).
for segment in "${segments[@]}"; do
    count=$(grep -c "^GET $segment 200\$" "$nginx_dir/access.log" || true)
    [ "$count" = 1 ] || fail "the origin served $segment $count times over two plays (expected once: a cache miss then hits)"
done

# ---- 5. SIGTERM: drain and exit 0 within the grace period ---------------------------------------------
limit=$((grace + 5))
kill -TERM "$server_pid"
start=$SECONDS
exited=0
for _ in $(seq $((limit * 10))); do
    if ! server_alive; then exited=1; break; fi
    sleep 0.1
done
if [ "$exited" = 0 ]; then
    dump_threads "$server_pid"
    kill -KILL "$server_pid" 2>/dev/null || true
    fail "the server did not exit within $limit s of SIGTERM (shutdown grace $grace s + 5 s)"
fi
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" = 0 ] || fail "the server exited with status $status after SIGTERM, expected 0"

note "ok: $bin via docker/entrypoint.sh: healthy, played $url (${#segments[@]} segments, $entries cache files, one origin fetch each), exited 0 $((SECONDS - start)) s after SIGTERM"
