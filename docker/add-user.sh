#!/usr/bin/env bash
# Image build step: creates the unprivileged user hlscache runs as (uid/gid 10001, no login shell) and the
# cache volume's mount point /data, owned by it. A named volume mounted on /data starts as a copy of this
# directory, ownership included; a bind-mounted host directory must be writable by uid 10001 instead.
# Idempotent. Only for the image: it changes /etc/passwd, so it runs in the image build (CI builds the image with
# podman: docker/container-test.sh), never on the machine.
# Usage: docker/add-user.sh [DATA_DIR]   (default /data)
set -euo pipefail

name=hlscache
id=10001
data="${1:-/data}"

if ! getent group "$name" >/dev/null; then
    groupadd --gid "$id" "$name"
fi
if ! getent passwd "$name" >/dev/null; then
    useradd --no-log-init --uid "$id" --gid "$id" --home-dir "$data" --no-create-home \
        --shell /usr/sbin/nologin "$name"
fi
mkdir -p "$data"
chown "$id:$id" "$data"
chmod 0750 "$data"
