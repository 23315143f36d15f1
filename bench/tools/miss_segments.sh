#!/usr/bin/env bash
# Where a cold miss's time goes inside hlscache, read off its own system calls (`perf trace`: needs linux-perf and
# the right to trace the process). For N misses, one at a time, prints the median of:
#   miss_request_to_origin_us  the request's bytes read (event loop) -> the origin request sent (curl thread)
#   miss_origin_to_head_us     the origin's first bytes received (curl thread) -> the answer's head written
# Usage: bench/tools/miss_segments.sh SERVER_PID PROXIED_URL [N]
# PROXIED_URL: a URL of the server's for an origin object; `?seg=K` is appended so that every request is a miss. An
# origin that waits before answering (bench/run.sh's slow origin) keeps the two segments apart.
set -euo pipefail
pid=$1 url=$2 count=${3:-15}
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
perf trace -p "$pid" -o "$trace" -e 'read,write,writev,sendto,recvfrom' &
tracer=$!
sleep 1.5
for i in $(seq "$count"); do
    curl -s -o /dev/null "$url?seg=$$-$i"
    sleep 0.2
done
sleep 0.5
kill -INT "$tracer"
wait "$tracer" 2>/dev/null || true
# Lines: "TIME ( DURATION ms): THREAD/TID call(args) = RESULT"; in time order across threads.
grep -E '^ *[0-9]' "$trace" | sort -n -k1,1 | awk '
    function result() { return $NF + 0 }
    $0 ~ /NIO-/ && / read\(/ && result() > 16 && state == 0 { start = $1; state = 1; next }
    $0 ~ /hlscache-curl/ && / sendto\(/ && state == 1 { printf "a %.0f\n", ($1 - start) * 1000; state = 2; next }
    $0 ~ /hlscache-curl/ && / recvfrom\(/ && result() > 0 && state == 2 { start = $1; state = 3; next }
    $0 ~ /NIO-/ && / (write|writev)\(/ && result() > 16 && state == 3 { printf "b %.0f\n", ($1 - start) * 1000; state = 0 }
' > "$trace.segments"
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'; }
printf 'miss_request_to_origin_us %s\n' "$(awk '$1 == "a" { print $2 }' "$trace.segments" | median)"
printf 'miss_origin_to_head_us %s\n' "$(awk '$1 == "b" { print $2 }' "$trace.segments" | median)"
printf 'miss_segments_counted %s\n' "$(grep -c '^b' "$trace.segments" || true)"
rm -f "$trace.segments"
