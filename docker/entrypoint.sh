#!/bin/sh
# The image's ENTRYPOINT (/usr/local/bin/docker-entrypoint.sh); docker/smoke.sh runs this same file.
#
#   docker run hlscache                      -> hlscache serve       (CMD ["serve"])
#   docker run hlscache --read-ahead 4         -> hlscache serve --read-ahead 4
#   docker run hlscache prefetch URL ...     -> hlscache prefetch URL ...
#
# Configuration comes from HLSCACHE_* environment variables, which hlscache reads itself
# (HLSCACHE_HOST, HLSCACHE_PORT, HLSCACHE_CACHE_DIR are set by the image; see docker/Dockerfile).
# `exec` replaces this shell, so hlscache is PID 1 and receives the SIGTERM of `docker stop` directly.
set -eu

bin="${HLSCACHE_BIN:-/usr/local/bin/hlscache}"
unset HLSCACHE_BIN  # the entrypoint's own setting, not one of hlscache's

if [ "$#" -eq 0 ]; then
    set -- serve
fi
case "$1" in
    -*) set -- serve "$@" ;;
esac

exec "$bin" "$@"
