#!/usr/bin/env bash
# Installs what the hlscache binary needs at run time on Debian bookworm (the image's runtime stage runs
# it; CI may run it too, harmlessly): libcurl4 (the origin client), libxml2, ca-certificates (HTTPS origins).
# The Swift runtime itself is linked statically (docker/build.sh), and libstdc++6 / zlib are in every
# Debian image already.
# Usage: docker/runtime-deps.sh [--clean]
#   --clean (or DOCKER_BUILD=1): remove the apt lists afterwards, to keep the image layer small.
set -euo pipefail

clean="${DOCKER_BUILD:-0}"
for arg in "$@"; do
    case "$arg" in
        --clean) clean=1 ;;
        *) echo "runtime-deps.sh: unknown argument: $arg (usage: runtime-deps.sh [--clean])" >&2; exit 64 ;;
    esac
done

sudo=()
if [ "$(id -u)" != "0" ]; then sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive

"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends libcurl4 libxml2 ca-certificates

if [ "$clean" = "1" ] || [ "$clean" = "true" ]; then
    "${sudo[@]}" apt-get clean
    "${sudo[@]}" rm -rf /var/lib/apt/lists/*
fi
