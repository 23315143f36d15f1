#!/usr/bin/env bash
# The container, built and run for real with podman (CI runs it; no Docker engine runs there, and podman builds
# and runs the same Dockerfile). On 127.0.0.1 only (host networking, or no network at all):
#   1. builds the image from docker/Dockerfile (podman build, on the base images of docker/local-base-images.sh
#      unless SWIFT_IMAGE / RUNTIME_IMAGE name others), prints its size and `ldd` of the binary inside it, and
#      fails when a shared library the binary needs is not in the image;
#   2. the default command (no argument, no -e, no network): hlscache serves on 0.0.0.0:8080 with /data, the
#      HEALTHCHECK reports healthy (`podman healthcheck run`), it runs as uid 10001 (PID 1, the entrypoint
#      exec'd it), and it wrote nothing outside /data (`podman diff`);
#   3. -e overrides (HLSCACHE_HOST, _PORT, _ORIGIN, _LOG_FORMAT) take effect, with a read-only root file system
#      and the cache volume: ffmpeg plays Fixtures/streams/ts-multivariant from a local nginx origin through it
#      with the origin's frames (framemd5 equal to reading the files), each origin object fetched once, and
#      every file in the volume owned by uid 10001;
#   4. `podman stop` (SIGTERM): it drains and exits 0 within the shutdown grace period;
#   5. a new container on the same volume: the second play has the same frames and fetches nothing from the
#      origin;
#   6. docker/compose.yaml with podman-compose: up, healthy, a play through it, `down` keeps its volume;
#   7. docker/compose-fleet.yaml with podman-compose: three nodes and the nginx balancer up and healthy, a
#      stream played through the balancer with the origin's frames, each origin object fetched once for the
#      whole fleet, `down` keeps the nodes' volumes.
# The compose files are started as they are, with an override file (written here) for what CI needs: the local
# images, host networking with 127.0.0.1 and free ports instead of published 8080, and the local origin.
# Everything it starts (containers, volumes, the origin) is removed at the end. Prints `container: ...` lines
# with the figures; one line per failure, non-zero exit.
#
# Usage: docker/container-test.sh [--no-build]   (--no-build: test the image already tagged $HLSCACHE_IMAGE)
# Needs root, podman (with runc), podman-compose >= 1.1 (PODMAN_COMPOSE names it; Debian 12's 1.0.3 cannot
# run a service with network_mode: host), ffmpeg, nginx, curl, and the base images of
# docker/local-base-images.sh. Installs nothing. Takes about 15 minutes on 2 cores with the image build.
# Environment: HLSCACHE_IMAGE (default localhost/hlscache), SWIFT_IMAGE (default localhost/hlscache-build-base),
#   RUNTIME_IMAGE (default localhost/hlscache-runtime-base), LB_IMAGE (default localhost/hlscache-nginx, the
#   fleet balancer's stand-in for nginx:1.27-alpine), PODMAN_COMPOSE (default podman-compose), CONTAINERS_CONF
#   (default: docker/podman-conf.sh's).
set -euo pipefail

cd "$(dirname "$0")/.."
me="container-test.sh"
script_start=$SECONDS

image="${HLSCACHE_IMAGE:-localhost/hlscache}"
swift_image="${SWIFT_IMAGE:-localhost/hlscache-build-base}"
runtime_image="${RUNTIME_IMAGE:-localhost/hlscache-runtime-base}"
lb_image="${LB_IMAGE:-localhost/hlscache-nginx}"
compose="${PODMAN_COMPOSE:-podman-compose}"
build=1
for arg in "$@"; do
    case "$arg" in
        --no-build) build=0 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "$me: unknown argument: $arg (usage: $me [--no-build])" >&2; exit 64 ;;
    esac
done

run_id="hlscache-ct-$$"   # every container, volume and compose project of this run is named after it
label="org.hlscache.container-test=$run_id"
tmp=""
conf=""
nginx_pid=""
projects=()               # compose projects started: "PROJECT FILE OVERRIDE"
current=""                # the container whose log goes with a failure

say() { echo "container: $*"; }

cleanup() {
    local status=$? entry project file override id
    set +e
    for entry in "${projects[@]}"; do
        read -r project file override <<<"$entry"
        timeout 60 "$compose" -p "$project" -f "$file" -f "$override" down -t 2 >/dev/null 2>&1
        for id in $(podman ps -aq --filter "label=io.podman.compose.project=$project"); do
            podman rm -f -v -t 0 "$id" >/dev/null 2>&1
        done
        for id in $(podman volume ls -q --filter "label=io.podman.compose.project=$project"); do
            podman volume rm -f "$id" >/dev/null 2>&1
        done
        for id in $(podman network ls -q --filter "label=io.podman.compose.project=$project"); do
            podman network rm -f "$id" >/dev/null 2>&1
        done
    done
    for id in $(podman ps -aq --filter "label=$label"); do podman rm -f -v -t 0 "$id" >/dev/null 2>&1; done
    for id in $(podman volume ls -q --filter "label=$label"); do podman volume rm -f "$id" >/dev/null 2>&1; done
    if [ -n "$nginx_pid" ] && kill -0 "$nginx_pid" 2>/dev/null; then
        kill -TERM "$nginx_pid"
        wait "$nginx_pid" 2>/dev/null
    fi
    if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
    if [ -n "$conf" ]; then rm -f "$conf"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fail MESSAGE: the current container's and the origin's last log lines as context, then MESSAGE.
fail() {
    if [ -n "$current" ]; then
        echo "--- last lines of the log of $current:" >&2
        podman logs --tail 20 "$current" 2>&1 | sed 's/^/    /' >&2 || true
    fi
    if [ -n "$tmp" ] && [ -s "$tmp/origin/error.log" ]; then
        echo "--- last lines of the origin's error log:" >&2
        tail -n 5 "$tmp/origin/error.log" | sed 's/^/    /' >&2
    fi
    echo "$me: FAIL: $*" >&2
    exit 1
}

# ---- 0. Tools, podman's settings, the working directory ------------------------------------------------------
[ "$(id -u)" = 0 ] || fail "run as root (the images of docker/local-base-images.sh are in root's podman store)"
for tool in podman "$compose" ffmpeg nginx curl; do
    command -v "$tool" >/dev/null \
        || fail "$tool is not installed (apt-get install podman runc ffmpeg nginx-light curl; podman-compose >= 1.1 from PyPI)"
done
if [ -z "${CONTAINERS_CONF:-}" ]; then
    conf="$(mktemp)"
    docker/podman-conf.sh > "$conf"
    export CONTAINERS_CONF="$conf"
fi
compose_version="$("$compose" version 2>/dev/null | awk '/^podman-compose version / { v = $3 } END { print v }')"
case "$compose_version" in
    "" | 0.* | 1.0.*) fail "$compose is podman-compose ${compose_version:-of unknown version}; 1.1 or later is needed (network_mode: host)" ;;
esac
say "podman $(podman version --format '{{.Client.Version}}'), podman-compose $compose_version, runtime $(podman info --format '{{.Host.OCIRuntime.Name}}')"

tmp="$(mktemp -d)"
chmod 755 "$tmp"  # nginx workers (nobody) read below it

free_ports=()
# free_port VAR: sets VAR to a port on 127.0.0.1 that nothing listens on and this run has not handed out.
origin_port="" port="" single_port="" lb_port="" p=""
free_port() {
    local candidate
    for _ in $(seq 100); do
        candidate=$((20000 + RANDOM % 12000))  # below Linux's ephemeral range (32768-60999)
        case " ${free_ports[*]} " in *" $candidate "*) continue ;; esac
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
            free_ports+=("$candidate")
            printf -v "$1" '%s' "$candidate"
            return 0
        fi
    done
    fail "no free port on 127.0.0.1"
}

# ---- 1. The image --------------------------------------------------------------------------------------------
if [ "$build" = 1 ]; then
    for base in "$swift_image" "$runtime_image"; do
        case "$base" in
            localhost/*) podman image exists "$base" || fail "no image $base: run docker/local-base-images.sh first" ;;
        esac
    done
    start=$SECONDS
    old_id="$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
    # --format docker: podman's default (OCI) image format has no HEALTHCHECK, and podman build drops it with only
    # a warning. --layers=false: no intermediate image of the build stage (3.4 GB) is kept; the compiled state is
    # kept in the Dockerfile's cache mount instead. --network host: the runtime stage's apt-get reaches Debian's
    # mirror as the machine does, without a bridge network.
    if ! podman build --format docker --layers=false --network host \
        --build-arg SWIFT_IMAGE="$swift_image" --build-arg RUNTIME_IMAGE="$runtime_image" \
        -f docker/Dockerfile -t "$image" . >"$tmp/build.log" 2>&1; then
        tail -n 30 "$tmp/build.log" >&2
        fail "podman build -f docker/Dockerfile failed"
    fi
    say "built $image from docker/Dockerfile in $((SECONDS - start)) s (SWIFT_IMAGE=$swift_image RUNTIME_IMAGE=$runtime_image)"
    new_id="$(podman image inspect --format '{{.Id}}' "$image")"
    if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
        podman rmi "$old_id" >/dev/null 2>&1 || true  # the image this build replaced, unless a container uses it
    fi
else
    podman image exists "$image" || fail "--no-build: no image $image"
fi
[ "$(podman image inspect --format '{{json .HealthCheck}}' "$image")" != null ] \
    || fail "$image has no HEALTHCHECK (an OCI-format build drops it: podman build --format docker)"
mb() { awk '{ printf "%.1f MB", $1 / 1e6 }'; }
image_size="$(podman image inspect --format '{{.Size}}' "$image" | mb)"
say "image $image: $image_size ($runtime_image: $(podman image inspect --format '{{.Size}}' "$runtime_image" 2>/dev/null | mb)); user $(podman image inspect --format '{{.Config.User}}' "$image")"

# The shared libraries the binary loads, as the image has them.
ldd_out="$(podman run --rm --network none --no-healthcheck --label "$label" --entrypoint /usr/bin/ldd "$image" /usr/local/bin/hlscache 2>&1)" \
    || fail "ldd /usr/local/bin/hlscache in $image failed: $ldd_out"
while IFS= read -r line; do say "ldd hlscache: $(echo "$line" | sed 's/^[[:space:]]*//; s/ (0x[0-9a-f]*)$//')"; done <<<"$ldd_out"
if grep -q 'not found' <<<"$ldd_out"; then
    fail "the image lacks shared libraries the binary needs: $(grep 'not found' <<<"$ldd_out" | awk '{print $1}' | tr '\n' ' ')"
fi
version="$(podman run --rm --network none --no-healthcheck --label "$label" --entrypoint /usr/local/bin/hlscache "$image" --version 2>&1)" \
    || fail "hlscache --version in $image failed: $version"
say "hlscache --version in the image: $version"

# wait_healthy CONTAINER [SECONDS]: runs the image's HEALTHCHECK (podman healthcheck run; no systemd timer runs
# it here) until it reports healthy; prints the seconds it took.
wait_healthy() {
    local c="$1" limit="${2:-60}" t0=$SECONDS ns0 state
    ns0="$(date +%s%N)"
    while [ $((SECONDS - t0)) -lt "$limit" ]; do
        podman healthcheck run "$c" >/dev/null 2>&1 || true
        state="$(podman inspect --format '{{.State.Status}} {{.State.Health.Status}}' "$c" 2>/dev/null || echo gone)"
        case "$state" in
            "running healthy") awk -v ns="$(( $(date +%s%N) - ns0 ))" 'BEGIN { printf "%.1f\n", ns / 1e9 }'; return 0 ;;
            running*) sleep 0.5 ;;
            *) current="$c"; fail "$c is $state, not running" ;;
        esac
    done
    current="$c"
    fail "$c: the HEALTHCHECK did not report healthy within $limit s ($state)"
}

# ---- 2. The default command -------------------------------------------------------------------------------------
# No argument, no -e, no network (only the container's own loopback): as `docker run hlscache` starts it.
c="$run_id-default"
podman run -d --name "$c" --label "$label" --network none "$image" >/dev/null 2>"$tmp/podman-run.err" \
    || fail "podman run $image: $(cat "$tmp/podman-run.err")"
current="$c"
took="$(wait_healthy "$c")"
# (the log read whole first: grep -q stops at the match, and podman logs would then fail on a closed pipe)
log="$(podman logs "$c" 2>&1)"
grep -q 'hlscache listening address=http://0.0.0.0:8080 cache_dir=/data' <<<"$log" \
    || fail "the default command did not log 'hlscache listening address=http://0.0.0.0:8080 cache_dir=/data'"
pid1="$(podman exec "$c" sh -c 'echo "$(readlink /proc/1/exe) $(sed -n "s/^Uid:[[:space:]]*\([0-9]*\).*/\1/p" /proc/1/status) $(id -u)"')"
read -r exe uid exec_uid <<<"$pid1"
[ "$exe" = /usr/local/bin/hlscache ] || fail "PID 1 of the container is $exe, not /usr/local/bin/hlscache (the entrypoint must exec)"
{ [ "$uid" = 10001 ] && [ "$exec_uid" = 10001 ]; } || fail "hlscache runs as uid $uid (podman exec as $exec_uid), expected 10001"
# podman diff: the root file system's changes, volumes aside; podman itself adds /etc/hosts, hostname, resolv.conf.
changes="$(podman diff "$c" 2>&1 | grep -Ev '^C /(data|etc|run|tmp)$|^[AC] /etc/(hosts|hostname|resolv\.conf)$' || true)"
[ -z "$changes" ] || fail "the container wrote outside /data: $(echo "$changes" | tr '\n' ' ')"
say "default command: hlscache serve on 0.0.0.0:8080 with /data, healthy after ${took} s (podman healthcheck run), PID 1 = /usr/local/bin/hlscache as uid $uid, nothing written outside /data (podman diff)"
podman rm -f -v -t 15 "$c" >/dev/null 2>&1
current=""

# ---- 3. The origin: Fixtures/streams served by nginx on 127.0.0.1 ---------------------------------------------
www="$tmp/www"
mkdir -p "$www" "$tmp/origin/tmp"
cp -r Fixtures/streams/ts-multivariant Fixtures/streams/fmp4 "$www/"
chmod -R a+rX "$www"
free_port origin_port
cat > "$tmp/origin/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $tmp/origin/nginx.pid;
error_log $tmp/origin/error.log warn;
events { worker_connections 256; }
http {
    types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; video/mp4 mp4 m4s; }
    log_format origin '\$request_method \$uri \$status';
    access_log $tmp/origin/access.log origin;
    client_body_temp_path $tmp/origin/tmp;
    proxy_temp_path $tmp/origin/tmp;
    fastcgi_temp_path $tmp/origin/tmp;
    uwsgi_temp_path $tmp/origin/tmp;
    scgi_temp_path $tmp/origin/tmp;
    server {
        listen 127.0.0.1:$origin_port;
        root $www;
    }
}
EOF
nginx -e "$tmp/origin/error.log" -p "$tmp/origin" -c "$tmp/origin/nginx.conf" >"$tmp/origin/stdout.log" 2>&1 &
nginx_pid=$!
origin="http://127.0.0.1:$origin_port"
for _ in $(seq 50); do
    curl -fsS -o /dev/null "$origin/ts-multivariant/master.m3u8" 2>/dev/null && break
    kill -0 "$nginx_pid" 2>/dev/null || fail "nginx (the origin) exited: $(cat "$tmp/origin/stdout.log")"
    sleep 0.1
done
curl -fsS -o /dev/null "$origin/ts-multivariant/master.m3u8" || fail "nginx did not serve $origin/ts-multivariant/master.m3u8"

# What ffmpeg reads from the files directly: the frames every play must yield.
for stream in ts-multivariant/master.m3u8 fmp4/index.m3u8; do
    ffmpeg -nostdin -v error -i "$www/$stream" -map 0 -c copy -f framemd5 "$tmp/direct-${stream%%/*}.framemd5" \
        || fail "ffmpeg could not read $www/$stream"
done
# objects STREAM_DIR: the stream's files as the origin's paths (/STREAM_DIR/...).
objects() { find "$www/$1" -type f | sed "s,^$www,," | sort; }

# origin_reset: count the origin's requests from here on.
origin_reset() { : > "$tmp/origin/access.log"; }
origin_requests() { wc -l < "$tmp/origin/access.log" | tr -d ' '; }
# origin_once STREAM_DIR WHAT: every file of the stream was fetched from the origin exactly once (GET ... 200),
# and nothing else was asked for more than once.
origin_once() {
    local path count dup
    while IFS= read -r path; do
        count="$(grep -c "^GET $path 200\$" "$tmp/origin/access.log" || true)"
        [ "$count" = 1 ] || fail "$2: the origin served $path $count times (expected once)"
    done < <(objects "$1")
    dup="$(sort "$tmp/origin/access.log" | uniq -d | awk 'NR <= 3' | tr '\n' ';')"
    [ -z "$dup" ] || fail "$2: the origin got the same request more than once: $dup"
}

# play URL STREAM WHAT: `ffmpeg -i URL -map 0 -c copy -f framemd5` exits 0, reports no error, and yields the
# packets reading the stream's files yields; prints the packet count.
play() {
    local url="$1" stream="$2" what="$3" out="$tmp/play.framemd5" err="$tmp/play.err" status=0
    rm -f "$out"
    timeout 60 ffmpeg -nostdin -v error -i "$url" -map 0 -c copy -f framemd5 "$out" 2>"$err" || status=$?
    [ "$status" = 0 ] || fail "$what: ffmpeg -i $url exited with status $status: $(head -n 1 "$err")"
    [ ! -s "$err" ] || fail "$what: ffmpeg -i $url reported: $(head -n 1 "$err")"
    cmp -s "$tmp/direct-$stream.framemd5" "$out" \
        || fail "$what: the packets ffmpeg read from $url differ from the origin's files (framemd5)"
    grep -vc '^#' "$out"
}

# ---- 4. -e overrides, a read-only root file system, the volume: the cold play ----------------------------------
volume="$run_id-data"
podman volume create --label "$label" "$volume" >/dev/null
free_port port
grace=10  # HLSCACHE_SHUTDOWN_GRACE's default
run_play_container() {  # NAME [PODMAN_RUN_ARGS...]
    local name="$1"
    shift
    podman run -d --name "$name" --label "$label" --network host "$@" -v "$volume:/data" --stop-timeout 15 \
        -e HLSCACHE_HOST=127.0.0.1 -e HLSCACHE_PORT="$port" -e HLSCACHE_ORIGIN="$origin" -e HLSCACHE_LOG_FORMAT=json \
        "$image" >/dev/null 2>"$tmp/podman-run.err" || fail "podman run $name: $(cat "$tmp/podman-run.err")"
    current="$name"
}
c="$run_id-play1"
run_play_container "$c" --read-only --read-only-tmpfs=false
took="$(wait_healthy "$c")"
[ "$(curl -fsS "http://127.0.0.1:$port/healthz" | tr -d '\r\n')" = ok ] \
    || fail "GET http://127.0.0.1:$port/healthz from the host did not answer ok (HLSCACHE_HOST/HLSCACHE_PORT ignored?)"
log="$(podman logs "$c" 2>&1)"
grep '"msg":"hlscache listening"' <<<"$log" | grep -q "127.0.0.1:$port\"" \
    || fail "no JSON 'hlscache listening' line with 127.0.0.1:$port in the log (HLSCACHE_LOG_FORMAT/HOST/PORT ignored?)"
say "-e HLSCACHE_HOST=127.0.0.1 -e HLSCACHE_PORT=$port -e HLSCACHE_ORIGIN=$origin -e HLSCACHE_LOG_FORMAT=json: in effect (GET /healthz from the host, JSON log), healthy after ${took} s, root file system read-only"

url="http://127.0.0.1:$port/ts-multivariant/master.m3u8"
origin_reset
packets="$(play "$url" ts-multivariant "play 1 (cold cache)")"
origin_once ts-multivariant "play 1 (cold cache)"
mountpoint="$(podman volume inspect --format '{{.Mountpoint}}' "$volume")"
entries=0
for _ in $(seq 50); do  # fills are published by rename: allow a moment after the last byte
    entries=$(find "$mountpoint" -type f -size +0 -not -path "$mountpoint/tmp/*" | wc -l)
    [ "$entries" -ge "$(objects ts-multivariant | wc -l)" ] && break
    sleep 0.1
done
[ "$entries" -gt 0 ] || fail "the volume $volume holds no cache file after play 1"
foreign="$(find "$mountpoint" ! -uid 10001 | awk 'NR <= 3' | tr '\n' ' ')"
[ -z "$foreign" ] || fail "files in the volume not owned by uid 10001: $foreign"
say "play 1 (cold cache) of $url: $packets packets, frames equal to the origin's files (framemd5); origin: $(origin_requests) requests, each of the $(objects ts-multivariant | wc -l) files once; volume: $entries cache files, all uid 10001"

# ---- 5. SIGTERM ----------------------------------------------------------------------------------------------------
t0="$(date +%s%N)"
podman stop -t 15 "$c" >/dev/null 2>&1 || fail "podman stop $c failed"
stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
exit_code="$(podman inspect --format '{{.State.ExitCode}}' "$c")"
[ "$exit_code" = 0 ] || fail "after podman stop (SIGTERM) hlscache exited with status $exit_code, expected 0"
[ "$stop_ms" -le $(( (grace + 5) * 1000 )) ] || fail "podman stop took $stop_ms ms, more than the grace period ($grace s) + 5 s"
say "podman stop (SIGTERM): drained and exited 0 after $stop_ms ms (grace period $grace s, podman's kill after 15 s)"
podman rm -v "$c" >/dev/null 2>&1
current=""

# ---- 6. A new container on the same volume: the warm play ----------------------------------------------------------
c="$run_id-play2"
run_play_container "$c"
took="$(wait_healthy "$c")"
origin_reset
packets="$(play "$url" ts-multivariant "play 2 (after the restart)")"
fetched="$(origin_requests)"
[ "$fetched" = 0 ] || fail "play 2 (after the restart) fetched $fetched objects from the origin, expected none: $(head -n 5 "$tmp/origin/access.log" | tr '\n' ';')"
changes="$(podman diff "$c" 2>&1 | grep -Ev '^C /(data|etc|run|tmp)$|^[AC] /etc/(hosts|hostname|resolv\.conf)$' || true)"
[ -z "$changes" ] || fail "the container wrote outside /data: $(echo "$changes" | tr '\n' ' ')"
say "restart: a new container on volume $volume, healthy after ${took} s; play 2: $packets packets, frames equal, origin requests: $fetched; nothing written outside /data (podman diff)"
podman stop -t 15 "$c" >/dev/null 2>&1
exit_code="$(podman inspect --format '{{.State.ExitCode}}' "$c")"
[ "$exit_code" = 0 ] || fail "after podman stop (SIGTERM) the second container exited with status $exit_code, expected 0"
podman rm -v "$c" >/dev/null 2>&1
current=""

# ---- 7. docker/compose.yaml ---------------------------------------------------------------------------------------
# compose_up PROJECT FILE OVERRIDE: podman-compose up -d, as `docker compose -f FILE up -d` (the image is
# already built: --no-build).
compose_up() {
    projects+=("$1 $2 $3")
    "$compose" -p "$1" -f "$2" -f "$3" up -d --no-build >"$tmp/compose-$1.log" 2>&1 \
        || { tail -n 20 "$tmp/compose-$1.log" >&2; fail "$compose -f $2 up -d failed"; }
}
# service_container PROJECT SERVICE: the container's id.
service_container() {
    podman ps -aq --filter "label=io.podman.compose.project=$1" --filter "label=com.docker.compose.service=$2" | awk 'NR == 1'
}
# compose_down PROJECT FILE OVERRIDE VOLUMES...: podman-compose down; no container left, the volumes kept.
compose_down() {
    local project="$1" file="$2" override="$3" left v
    shift 3
    "$compose" -p "$project" -f "$file" -f "$override" down >>"$tmp/compose-$project.log" 2>&1 \
        || { tail -n 20 "$tmp/compose-$project.log" >&2; fail "$compose -f $file down failed"; }
    left="$(podman ps -aq --filter "label=io.podman.compose.project=$project" | wc -l)"
    [ "$left" = 0 ] || fail "$compose -f $file down left $left containers"
    for v in "$@"; do
        podman volume exists "${project}_$v" || fail "$compose -f $file down removed the volume ${project}_$v"
    done
}

project="$run_id-single"
free_port single_port
override="$tmp/compose-ci.yaml"
cat > "$override" <<EOF
# CI's override of docker/compose.yaml (docker/container-test.sh): the local image, host networking on
# 127.0.0.1 and a free port instead of the published 8080, the local origin in reverse mode.
services:
  hlscache:
    image: $image
    network_mode: host
    ports: !reset []
    environment:
      HLSCACHE_HOST: 127.0.0.1
      HLSCACHE_PORT: "$single_port"
      HLSCACHE_ORIGIN: $origin
EOF
start=$SECONDS
compose_up "$project" docker/compose.yaml "$override"
c="$(service_container "$project" hlscache)"
[ -n "$c" ] || fail "docker/compose.yaml: no container for the service hlscache"
current="$c"
took="$(wait_healthy "$c")"
up_s=$((SECONDS - start))
origin_reset
packets="$(play "http://127.0.0.1:$single_port/ts-multivariant/master.m3u8" ts-multivariant "compose.yaml play")"
origin_once ts-multivariant "compose.yaml play"
compose_down "$project" docker/compose.yaml "$override" hlscache-data
current=""
say "docker/compose.yaml: up and healthy in $up_s s (healthcheck after ${took} s); play: $packets packets, frames equal, each origin file once; down: no container left, volume hlscache-data kept"

# ---- 8. docker/compose-fleet.yaml -----------------------------------------------------------------------------------
project="$run_id-fleet"
free_port lb_port
node_ports=()
for _ in 1 2 3; do free_port p; node_ports+=("$p"); done
# The balancer's fleet/ folder for host networking: the nodes and the listen address on 127.0.0.1.
mkdir -p "$tmp/fleet"
: > "$tmp/fleet/nodes.conf"
for p in "${node_ports[@]}"; do echo "server 127.0.0.1:$p max_fails=1 fail_timeout=10s;" >> "$tmp/fleet/nodes.conf"; done
echo "listen 127.0.0.1:$lb_port;" > "$tmp/fleet/listen.conf"
chmod -R a+rX "$tmp/fleet"
override="$tmp/compose-fleet-ci.yaml"
{
    echo "# CI's override of docker/compose-fleet.yaml (docker/container-test.sh): local images, host networking on"
    echo "# 127.0.0.1 with free ports, the balancer's fleet/ folder to match, the local origin in reverse mode."
    echo "services:"
    for i in 1 2 3; do
        cat <<EOF
  node$i:
    image: $image
    network_mode: host
    environment:
      HLSCACHE_HOST: 127.0.0.1
      HLSCACHE_PORT: "${node_ports[$((i - 1))]}"
      HLSCACHE_FLEET_URL: http://127.0.0.1:$lb_port
      HLSCACHE_ORIGIN: $origin
EOF
    done
    cat <<EOF
  lb:
    image: $lb_image
    network_mode: host
    ports: !reset []
    volumes:
      - $tmp/fleet:/etc/nginx/fleet:ro
    healthcheck:
      test: !override ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:$lb_port/lb-healthz"]
EOF
} > "$override"
podman image exists "$lb_image" || fail "no image $lb_image: run docker/local-base-images.sh first"
start=$SECONDS
compose_up "$project" docker/compose-fleet.yaml "$override"
healthy=()
for service in node1 node2 node3 lb; do
    c="$(service_container "$project" "$service")"
    [ -n "$c" ] || fail "docker/compose-fleet.yaml: no container for the service $service"
    current="$c"
    wait_healthy "$c" >/dev/null
    healthy+=("$service")
done
current=""
up_s=$((SECONDS - start))
lb="http://127.0.0.1:$lb_port"
[ "$(curl -fsS "$lb/lb-healthz" | tr -d '\r\n')" = ok ] || fail "GET $lb/lb-healthz did not answer ok"
origin_reset
fleet_packets=()
for stream in ts-multivariant/master.m3u8 fmp4/index.m3u8; do
    fleet_packets+=("$(play "$lb/$stream" "${stream%%/*}" "fleet play of $stream")")
done
# Read-ahead goes through the balancer to the owning node after the player's requests: let it settle.
sleep 2
origin_once ts-multivariant "fleet play"
origin_once fmp4 "fleet play"
per_node=()
for i in 1 2 3; do
    mp="$(podman volume inspect --format '{{.Mountpoint}}' "${project}_node$i-data")"
    per_node+=("node$i $(find "$mp" -type f -size +0 -not -path "$mp/tmp/*" | wc -l)")
done
compose_down "$project" docker/compose-fleet.yaml "$override" node1-data node2-data node3-data
say "docker/compose-fleet.yaml: ${healthy[*]} up and healthy in $up_s s; played ts-multivariant (${fleet_packets[0]} packets) and fmp4 (${fleet_packets[1]} packets) through the balancer, frames equal; origin: $(origin_requests) requests, each of the $(( $(objects ts-multivariant | wc -l) + $(objects fmp4 | wc -l) )) files once for the fleet; cache files per node: ${per_node[*]}; down: no container left, 3 volumes kept"

say "ok: $image ($image_size) in $((SECONDS - script_start)) s"
