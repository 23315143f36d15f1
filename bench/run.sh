#!/usr/bin/env bash
# Builds hlscache in release mode and prints one figure per line, `name value`.
# Usage: bench/run.sh [NAME]   (NAME: rewrite; all when omitted)
set -euo pipefail
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

case "$want" in
    rewrite) run_rewrite ;;
    all) run_rewrite ;;
    *) echo "unknown benchmark: $want (known: rewrite)" >&2; exit 64 ;;
esac
