#!/usr/bin/env bash
# Fuzzes the parsers with libFuzzer (swift build -sanitize=fuzzer,address) and prints, per harness,
# `fuzz_<name>_execs N`, `fuzz_<name>_crashes N`, `fuzz_<name>_coverage N` (libFuzzer's covered edges) and
# `fuzz_<name>_functions N` (functions under Sources/ covered); for mpd also `fuzz_mpd_expansion_functions N`,
# the functions of the segment expansion covered (MPD+Segments.swift: objectsByRepresentation, segmentRuns, ...).
# Usage: bench/fuzz.sh [RUNS]   (RUNS per harness, default 10000000; HLSCACHE_FUZZ_TARGETS picks harnesses,
#        HLSCACHE_FUZZ_JOBS how many run at once, default 1; HLSCACHE_FUZZ_SANITIZE the sanitizers, default
#        fuzzer,address: fuzzer alone runs two to three times faster, and still stops on every trap; HLSCACHE_FUZZ_TIMEOUT
#        the seconds one input may take, default 10, wall time, so give more on a machine busy with other work)
# Crashes are kept in bench/out/fuzz/<name>/ (crash-*, oom-*, timeout-*): reproduce one with
#   swift run hlscache-fuzz <name> FILE   (swift run hlscache-fuzz-exchange exchange FILE for the exchange harness)
# and turn it into a regression test before fixing it.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10000000}"
targets="${HLSCACHE_FUZZ_TARGETS:-playlist range target mpd request exchange cmcd view}"
corpus="${HLSCACHE_CORPUS:-$(cd .. && pwd)/shared/corpus}"
sanitize="${HLSCACHE_FUZZ_SANITIZE:-fuzzer,address}"
timeout_seconds="${HLSCACHE_FUZZ_TIMEOUT:-10}"
scratch=.build-fuzz
if [ "$sanitize" != "fuzzer,address" ]; then scratch=".build-fuzz-${sanitize//,/-}"; fi
# Two programs: hlscache-fuzz (the parsers, no server in it) and hlscache-fuzz-exchange (the server's request path,
# harness `exchange`); each is built only when one of its harnesses runs.
programs=""
for name in $targets; do
    case "$name" in exchange) program=hlscache-fuzz-exchange ;; *) program=hlscache-fuzz ;; esac
    case " $programs " in *" $program "*) ;; *) programs="$programs $program" ;; esac
done
for program in $programs; do
    swift build -c release --product "$program" --scratch-path "$scratch" \
        -Xswiftc -DHLSCACHE_FUZZ -Xswiftc -sanitize="$sanitize" -Xswiftc -use-ld=lld >&2
done
bin_dir="$(swift build -c release --scratch-path "$scratch" --show-bin-path)"
out=bench/out/fuzz
mkdir -p "$out"

# Seeds: the shared playlist corpus and the project's fixtures; small hand-made ones for the header parsers.
seed_dir() {
    local name=$1 dir="$out/$1/seeds"
    rm -rf "$dir"
    mkdir -p "$dir"
    case "$name" in
        playlist)
            [ -d "$corpus" ] && find "$corpus" -type f \( -name '*.m3u8' -o -name '*.m3u' \) -size -8k \
                -exec cp -t "$dir" --backup=numbered {} + 2>/dev/null
            cp Fixtures/playlists/*.m3u8 "$dir/"
            ;;
        mpd)
            cp Fixtures/mpd/*.mpd "$dir/"
            for package in Fixtures/streams/dash-*/; do cp "$package/manifest.mpd" "$dir/$(basename "$package").mpd"; done
            ;;
        range)
            local index=0
            for seed in "bytes=0-99" "bytes=100-" "bytes=-500" "bytes=0-9223372036854775807" "bytes 0-99/100" \
                "bytes 5-9/*" "bytes=1-2, 4-5" " BYTES=7-7 " "bytes 0-0/1"; do
                printf '%s' "$seed" > "$dir/$index"; index=$((index + 1))
            done
            ;;
        request | exchange)
            local index=0
            for seed in "GET /o/https/cdn.test/a.ts HTTP/1.1\r\nHost: h\r\n\r\n" \
                "GET /o/https/cdn.test/m.m3u8?hlscache.bandwidth=-3M&x=1&hlscache.window=9 HTTP/1.1\r\nHost: h\r\n\r\n" \
                "HEAD /a?b=c HTTP/1.1\r\nRange: bytes=1-2\r\nConnection: keep-alive, close\r\n\r\n" \
                "OPTIONS /x HTTP/1.1\r\nOrigin: https://p.test\r\nAccess-Control-Request-Headers: range\r\n\r\n" \
                "GET /v HTTP/1.1\r\nVia: 1.1 a\r\nVia: 1.1 b \r\nX-HLSCache-Read-Ahead: 1\r\n\r\n" \
                "GET /c HTTP/1.1\r\nConnection: close, x\r\nProxy-Connection: keep-alive\r\n\r\n" \
                "POST /admin/purge HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer x\r\nContent-Length: 9\r\n\r\nprefix=/o" \
                "PURGE /o/https/cdn.test/a.ts HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer fuzz-admin-token-0123456789\r\n\r\n" \
                "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /o/http/a/b.ts HTTP/1.0\r\n\r\n" \
                "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n" \
                "GET http://h/o/https/cdn.test/a.m3u8 HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n" \
                "POST /o/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" \
                ":method: GET\n:scheme: https\n:path: /o/https/cdn.test/a.ts\n:authority: h\nrange: bytes=0-9\nte: trailers" \
                ":method: GET\n:scheme: https\n:path: /a\naccept: */*\n:authority: h\nConnection: x"; do
                printf '%b' "$seed" > "$dir/$index"; index=$((index + 1))
            done
            ;;
        cmcd)
            local index=0
            for seed in 'CMCD=bl%3D21300%2Cbr%3D3200%2Cd%3D4004%2Cmtp%3D25400%2Cnor%3D%22..%2F300kbps%2Fseg35.m4v%22%2Cot%3Dv%2Csid%3D%226e2fb550-c457-11e9-bb97-0800200c9a66%22%2Ctb%3D6000' \
                'bl=21300,br=3200,bs,su,ot=av,sf=h,st=l,sid="abc",nor=("a.ts" "b.ts"),nrr="0-99",v=2' \
                'x=1&CMCD=bs%2Csu&y=2' 'CMCD&CMCD=d%3D-1.5' 'a=?0;p=1,b=:aGk=:,c=*tok/x' 'bl=1,bl=2'; do
                printf '%s' "$seed" > "$dir/$index"; index=$((index + 1))
            done
            ;;
        view)
            local index=0
            for playlist in Fixtures/playlists/*.m3u8; do
                printf 'hlscache.bandwidth=-3M&hlscache.window=6&hlscache.audio=en&x=1\n' > "$dir/p$index"
                cat "$playlist" >> "$dir/p$index"; index=$((index + 1))
            done
            for seed in 'hlscache.height=360-&hlscache.codecs=avc1,mp4a&hlscache.iframes=none' \
                'hlscache.delay=2&hlscache.subtitles=none' 'hlscache.start=2026-11-28T18:00:00.5Z&hlscache.end=1900000000' \
                'a=1&hlscache.window=1e3&hlscache.window=2' 'hlscache.bandwidth=1.5M-2k' 'hlscache.x=%ZZ'; do
                printf '%s\n#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PROGRAM-DATE-TIME:2026-11-28T18:00:00Z\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n' \
                    "$seed" > "$dir/s$index"; index=$((index + 1))
            done
            for package in Fixtures/streams/dash-*/; do
                printf 'hlscache.bandwidth=-1M&hlscache.window=4&hlscache.audio=und\n' > "$dir/d$index"
                cat "$package/manifest.mpd" >> "$dir/d$index"; index=$((index + 1))
            done
            ;;
        target)
            local index=0
            for seed in "/o/https/example.com/a/b.m3u8?x=1" "/o/http/[::1]:8080/seg.ts" "/o/HTTPS/h/%2e%2e/x#f" \
                "/o/http/user:pw@host/p" "/healthz"; do
                printf '%s' "$seed" > "$dir/$index"; index=$((index + 1))
            done
            ;;
    esac
    echo "$dir"
}

# One harness: fuzzes it and writes its figures to $out/<name>/figures.
fuzz_one() {
    local name=$1 seeds work log status execs crashes coverage functions expansion
    seeds=$(seed_dir "$name")
    work="$out/$name/corpus"
    mkdir -p "$work"
    log="$out/$name/log"
    rm -f "$out/$name/figures"
    set +e
    # The exchange harness's cache directories go under the harness's own folder, not /tmp.
    mkdir -p "$out/$name/tmp"
    local bin="$bin_dir/hlscache-fuzz"
    if [ "$name" = exchange ]; then bin="$bin_dir/hlscache-fuzz-exchange"; fi
    TMPDIR="$PWD/$out/$name/tmp" HLSCACHE_FUZZ_TARGET="$name" "$bin" "$work" "$seeds" -runs="$runs" -max_len=4096 \
        -rss_limit_mb=2048 -timeout="$timeout_seconds" -artifact_prefix="$out/$name/" -print_final_stats=1 -print_coverage=1 \
        >"$log" 2>&1
    status=$?
    set -e
    rm -rf "$out/$name/tmp"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    crashes=$(find "$out/$name" -maxdepth 1 \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \
        -o -name 'leak-*' \) | wc -l)
    if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | tr -dc '0-9')
    functions=$(grep '^COVERED_FUNC: ' "$log" | grep -c '/Sources/' || true)
    {
        echo "fuzz_${name}_execs ${execs:-0}"
        echo "fuzz_${name}_crashes $crashes"
        echo "fuzz_${name}_coverage ${coverage:-0}"
        echo "fuzz_${name}_functions ${functions:-0}"
        if [ "$name" = mpd ]; then
            expansion=$(grep '^COVERED_FUNC: ' "$log" | grep -c 'DASHManifest/Model/MPD+Segments.swift' || true)
            echo "fuzz_mpd_expansion_functions ${expansion:-0}"
        fi
    } >"$out/$name/figures"
    if [ "$crashes" -ne 0 ]; then
        echo "fuzz: $name found $crashes crash(es); see $log and $out/$name/" >&2
        tail -40 "$log" >&2
    fi
}

# HLSCACHE_FUZZ_JOBS harnesses at once (default 1; each is one process on one core).
jobs="${HLSCACHE_FUZZ_JOBS:-1}"
for name in $targets; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    fuzz_one "$name" &
done
wait
for name in $targets; do cat "$out/$name/figures"; done
# Whether AddressSanitizer was in (1) or not (0).
case "$sanitize" in *address*) echo "fuzz_asan 1" ;; *) echo "fuzz_asan 0" ;; esac
