#!/usr/bin/env bash
# Prints a containers.conf that lets podman run containers on this machine, for CONTAINERS_CONF (which podman,
# podman-compose and buildah read instead of /etc/containers/containers.conf):
#   - runc as the OCI runtime when it is installed (crun refuses a cgroup v1 "hybrid" host such as CI's:
#     "cgroups in hybrid mode not supported");
#   - cgroupfs and a file event log when systemd does not run the machine (no systemd to ask for cgroups);
#   - default ulimits within the machine's hard limits (podman's own defaults for root exceed them there, and
#     a container then fails with "setrlimit: Operation not permitted"); nproc at most 4096, as measured on CI's
#     kind of machine (65536 was refused there although below the hard limit).
# docker/local-base-images.sh and docker/container-test.sh use it when CONTAINERS_CONF is not set. By hand:
#   docker/podman-conf.sh > /tmp/containers.conf && export CONTAINERS_CONF=/tmp/containers.conf
# Usage: docker/podman-conf.sh
set -euo pipefail

# cap LIMIT MAX: LIMIT, or MAX when LIMIT is larger or unlimited.
cap() {
    if [ "$1" = unlimited ] || [ "$1" -gt "$2" ]; then echo "$2"; else echo "$1"; fi
}
nofile="$(cap "$(ulimit -Hn)" 1048576)"
nproc="$(cap "$(ulimit -Hu)" 4096)"

echo "# Written by docker/podman-conf.sh for $(uname -n) ($(date -u +%Y-%m-%d))."
echo "[containers]"
echo "default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]"
echo "[engine]"
if command -v runc >/dev/null; then
    echo "runtime = \"runc\""
fi
if [ -d /run/systemd/system ]; then
    echo "cgroup_manager = \"systemd\""
else
    echo "cgroup_manager = \"cgroupfs\""
    echo "events_logger = \"file\""
fi
