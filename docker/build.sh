#!/usr/bin/env bash
# Builds the release binary the image ships and copies it to DEST_DIR (default /out).
# The Dockerfile's build stage runs `docker/build.sh /out`; for docker/smoke.sh, run it with a temporary directory.
# Usage: docker/build.sh [DEST_DIR [EXTRA_SWIFT_BUILD_ARGS...]]
set -euo pipefail

dest="${1:-/out}"
if [ "$#" -gt 0 ]; then shift; fi
cd "$(dirname "$0")/.."

flags=(-c release --static-swift-stdlib --product hlscache "$@")
swift build "${flags[@]}"
bin_dir="$(swift build "${flags[@]}" --show-bin-path)"

mkdir -p "$dest"
install -m 0755 "$bin_dir/hlscache" "$dest/hlscache"

# With a static Swift runtime the crash backtracer cannot be found next to libswiftCore.so, so ship the
# toolchain's static one; the image's SWIFT_BACKTRACE points at it (/usr/local/bin/swift-backtrace-static).
swift_bin="$(command -v swift)"
backtracer="$(dirname "$(readlink -f "$swift_bin")")/../libexec/swift/linux/swift-backtrace-static"
if [ -x "$backtracer" ]; then
    install -m 0755 "$backtracer" "$dest/swift-backtrace-static"
else
    echo "build.sh: note: no swift-backtrace-static in this toolchain; crashes will not print backtraces" >&2
fi

echo "build.sh: $dest/hlscache" >&2
