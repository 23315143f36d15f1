#!/usr/bin/env bash
# Makes, locally, the images that docker/Dockerfile and docker/compose-fleet.yaml would pull from a registry, for
# machines that reach Debian's package registry but no container registry (CI's among them):
#   localhost/hlscache-runtime-base  stands in for debian:bookworm-slim: a Debian bookworm minbase root file system
#                                    (debootstrap), with bookworm, bookworm-updates and bookworm-security as apt
#                                    sources like the official image;
#   localhost/hlscache-build-base    stands in for swift:6.3-bookworm: the same root file system plus what swift
#                                    needs to build hlscache (gcc, libc6-dev, libstdc++-12-dev, git,
#                                    libcurl4-openssl-dev, libxml2-dev, pkg-config and the toolchain's own shared
#                                    libraries, installed with apt in a chroot), this machine's Swift toolchain
#                                    ($SWIFT_TOOLCHAIN, default /opt/swift; without its debugger and IDE tools,
#                                    which a build never runs), and its git url.*.insteadOf rules with the local
#                                    package mirrors they point to (/opt/swift-packages here), so
#                                    `swift build` resolves https://github.com/... inside the image as it does
#                                    on the machine;
#   localhost/hlscache-nginx         stands in for the fleet balancer's nginx:1.27-alpine: the same root file
#                                    system with Debian's nginx-light and wget, laid out as the official image.
# An image already present is kept (the build base is remade when the toolchain's `swift --version` changed);
# the debootstrap root file system is made once and kept in $HLSCACHE_BASE_CACHE (default
# /var/cache/hlscache-base) for the next run. Then, from the repository root:
#   podman build --format docker --build-arg SWIFT_IMAGE=localhost/hlscache-build-base \
#       --build-arg RUNTIME_IMAGE=localhost/hlscache-runtime-base -f docker/Dockerfile -t localhost/hlscache .
# Needs root (debootstrap, chroot, and root's podman image store), debootstrap, podman, tar and git; installs
# nothing on the machine itself (.ci/run installs podman, debootstrap and the rest). Measured on 2 cores:
# debootstrap 40 s, the runtime base 4 s, the nginx image 25 s, the build base 2.5 minutes (most of it tar and
# import of the 2.4 GB toolchain); a few seconds when all three exist.
#
# Usage: docker/local-base-images.sh [--rebuild]   (--rebuild: make the images anew, and the root file system)
# Environment: CONTAINER_ENGINE (default podman), HLSCACHE_BASE_CACHE, DEBIAN_MIRROR (default
#   http://deb.debian.org/debian), SWIFT_TOOLCHAIN (default /opt/swift, the folder holding usr/bin/swift),
#   CONTAINERS_CONF (default: docker/podman-conf.sh's).
set -euo pipefail

me="local-base-images.sh"
engine="${CONTAINER_ENGINE:-podman}"
cache="${HLSCACHE_BASE_CACHE:-/var/cache/hlscache-base}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
toolchain="${SWIFT_TOOLCHAIN:-/opt/swift}"
runtime_image=localhost/hlscache-runtime-base
build_image=localhost/hlscache-build-base
nginx_image=localhost/hlscache-nginx
suite=bookworm
image_path=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# What swift needs at build time beyond minbase: the C toolchain and headers it links with, git (SwiftPM
# clones the packages), the -dev packages of hlscache's system libraries, and the shared libraries the
# toolchain's programs load (ldd /opt/swift/usr/bin/*: libxml2, ICU, SQLite, ncurses, libedit, libcurl, zlib).
build_packages=(
    binutils gcc libc6-dev libstdc++-12-dev git ca-certificates pkg-config
    libcurl4-openssl-dev libxml2-dev zlib1g-dev
    libicu72 libsqlite3-0 libncurses6 libedit2 libuuid1 tzdata
)

rebuild=0
for arg in "$@"; do
    case "$arg" in
        --rebuild) rebuild=1 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "$me: unknown argument: $arg (usage: $me [--rebuild])" >&2; exit 64 ;;
    esac
done

note() { echo "$me: $*" >&2; }
fail() { echo "$me: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (debootstrap and chroot need it; the images go to root's $engine store)"
for tool in "$engine" debootstrap tar chroot git; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install podman debootstrap tar git)"
done
[ -x "$toolchain/usr/bin/swift" ] || fail "no Swift toolchain at $toolchain (set SWIFT_TOOLCHAIN to the folder with usr/bin/swift)"

swift_version="$("$toolchain/usr/bin/swift" --version 2>/dev/null | awk 'NR == 1')"
[ -n "$swift_version" ] || fail "$toolchain/usr/bin/swift --version printed nothing"

work=""
conf=""
mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
    if [ -n "$work" ]; then rm -rf "$work"; fi
    if [ -n "$conf" ]; then rm -f "$conf"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# podman's settings for this machine (runtime, cgroups, ulimits), unless the caller chose a containers.conf.
if [ "$(basename "$engine")" = podman ] && [ -z "${CONTAINERS_CONF:-}" ]; then
    conf="$(mktemp)"
    "$(dirname "$0")/podman-conf.sh" > "$conf"
    export CONTAINERS_CONF="$conf"
fi

image_exists() { "$engine" image exists "$1"; }
image_label() { "$engine" image inspect --format "{{ index .Labels \"$2\" }}" "$1" 2>/dev/null || true; }

need_runtime=1
need_nginx=1
need_build=1
if [ "$rebuild" = 0 ]; then
    if image_exists "$runtime_image"; then need_runtime=0; fi
    if image_exists "$nginx_image"; then need_nginx=0; fi
    if image_exists "$build_image"; then
        if [ "$(image_label "$build_image" org.hlscache.swift-version)" = "$swift_version" ]; then
            need_build=0
        else
            note "$build_image was made with another toolchain; making it anew"
        fi
    fi
fi
if [ "$need_runtime$need_nginx$need_build" = 000 ]; then
    note "ok: $runtime_image, $nginx_image and $build_image are present ($swift_version); --rebuild makes them anew"
    exit 0
fi

# ---- The root file system: debootstrap once ----------------------------------------------------------------
rootfs="$cache/$suite-minbase"

if [ "$rebuild" = 1 ] || [ ! -e "$rootfs/.hlscache-complete" ]; then
    note "debootstrap --variant=minbase $suite $rootfs ($mirror)"
    rm -rf "$rootfs"
    mkdir -p "$cache"
    start=$SECONDS
    debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 \
        || { tail -n 20 "$cache/debootstrap.log" >&2; fail "debootstrap failed (log: $cache/debootstrap.log)"; }
    # apt sources as in the official debian:bookworm-slim image: the release, its updates and security.
    rm -f "$rootfs/etc/apt/sources.list"
    mkdir -p "$rootfs/etc/apt/sources.list.d"
    cat > "$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* \
        "$rootfs"/tmp/* "$rootfs"/root/.bash_history
    : > "$rootfs/etc/resolv.conf"  # the engine provides it in a container
    echo "$suite minbase from $mirror, $(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$rootfs/.hlscache-complete"
    note "debootstrap: $((SECONDS - start)) s, $(du -sh "$rootfs" | cut -f1)"
else
    note "reusing $rootfs ($(cat "$rootfs/.hlscache-complete"))"
fi

# import_rootfs NAME PATH [--change INSTRUCTION...] -- TAR_ARGS...: tar's output (a root file system) as the image
# NAME, with Docker's defaults for a Debian image (PATH as given, a shell unless a --change says otherwise) and
# labels saying where it came from.
import_rootfs() {
    local name="$1" path="$2" changes=(--change 'CMD ["bash"]') old_id new_id
    shift 2
    while [ "$#" -gt 0 ] && [ "$1" != -- ]; do changes+=("$1"); shift; done
    if [ "$#" -gt 0 ]; then shift; fi
    old_id="$("$engine" image inspect --format '{{.Id}}' "$name" 2>/dev/null || true)"
    tar --numeric-owner --xattrs -c "$@" \
        | "$engine" import --quiet \
            --change "ENV PATH=$path" \
            "${changes[@]}" \
            --change "LABEL org.hlscache.base=$name" \
            --change "LABEL org.hlscache.swift-version=$swift_version" \
            - "$name" >/dev/null
    new_id="$("$engine" image inspect --format '{{.Id}}' "$name")"
    if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
        "$engine" rmi "$old_id" >/dev/null 2>&1 || true  # the image this one replaces, unless something uses it
    fi
}

# ---- localhost/hlscache-runtime-base ---------------------------------------------------------------------
if [ "$need_runtime" = 1 ]; then
    start=$SECONDS
    import_rootfs "$runtime_image" /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        -- -C "$rootfs" --exclude=./.hlscache-complete .
    note "$runtime_image: imported in $((SECONDS - start)) s"
fi

# new_root NAME PACKAGES...: a copy of the root file system in $work/NAME with PACKAGES installed by apt in a
# chroot (the machine's resolver, /proc and /dev, no service started by a package); sets root to its path.
root=""
new_root() {
    local name="$1" i
    shift
    if [ -z "$work" ]; then work="$(mktemp -d "$cache/work.XXXXXX")"; fi
    root="$work/$name"
    cp -a "$rootfs" "$root"
    rm -f "$root/.hlscache-complete"
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
    printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    mount -t proc proc "$root/proc"
    mounted+=("$root/proc")
    mount --bind /dev "$root/dev"
    mounted+=("$root/dev")
    note "$name: apt-get install in a chroot: $*"
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $* && apt-get clean" \
        >"$work/$name-apt.log" 2>&1 \
        || { tail -n 20 "$work/$name-apt.log" >&2; fail "$name: apt-get install in the chroot failed"; }
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[$i]}"; done
    mounted=()
    rm -rf "$root/usr/sbin/policy-rc.d" "$root"/var/lib/apt/lists/* "$root"/var/log/apt "$root"/tmp/*
    : > "$root/etc/resolv.conf"
}

# ---- localhost/hlscache-nginx ----------------------------------------------------------------------------
# docker/compose-fleet.yaml's balancer runs nginx:1.27-alpine; here Debian's nginx-light (1.22) and wget (the
# balancer's healthcheck), with the official image's conventions: conf.d/*.conf included from /etc/nginx,
# no default site, logs to the container's output, `nginx -g 'daemon off;'`, SIGQUIT to stop.
if [ "$need_nginx" = 1 ]; then
    start=$SECONDS
    new_root nginx nginx-light wget
    rm -f "$root/etc/nginx/sites-enabled/default"
    ln -sf /dev/stdout "$root/var/log/nginx/access.log"
    ln -sf /dev/stderr "$root/var/log/nginx/error.log"
    import_rootfs "$nginx_image" /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --change 'CMD ["nginx", "-g", "daemon off;"]' --change 'STOPSIGNAL SIGQUIT' --change 'EXPOSE 80' \
        -- -C "$root" .
    rm -rf "$root"
    "$engine" run --rm --network none "$nginx_image" nginx -t -q \
        || { "$engine" rmi -f "$nginx_image" >/dev/null 2>&1 || true; fail "$nginx_image: nginx -t failed"; }
    note "$nginx_image: made in $((SECONDS - start)) s"
fi

# ---- localhost/hlscache-build-base -----------------------------------------------------------------------
if [ "$need_build" = 1 ]; then
    start=$SECONDS
    new_root build "${build_packages[@]}"

    # git: the machine's url.*.insteadOf rules (system and global), e.g. https://github.com/ -> /opt/swift-packages/;
    # every local folder they point to goes into the image at the same path.
    mirrors=()
    while read -r key value; do
        [ -n "$key" ] || continue
        base="${key#url.}"
        base="${base%.insteadof}"
        git config --file "$root/etc/gitconfig" --add "url.$base.insteadOf" "$value"
        if [[ "$base" == /* ]] && [ -d "$base" ]; then
            dir="${base%/}"
            case " ${mirrors[*]} " in *" ${dir#/} "*) ;; *) mirrors+=("${dir#/}") ;; esac
        fi
    done < <({ git config --system --get-regexp '^url\..*\.insteadof$' || true
               git config --global --get-regexp '^url\..*\.insteadof$' || true; } 2>/dev/null)
    if [ "${#mirrors[@]}" = 0 ]; then
        note "note: no git url.*.insteadOf rule to a local folder on this machine: swift build in the image fetches packages itself"
    fi

    # The toolchain as /opt/swift; the debugger, the language servers and the documentation compiler stay out
    # (about 1 GB a build never runs).
    toolchain_real="$(readlink -f "$toolchain")"
    toolchain_excludes=(
        --exclude='usr/bin/lldb*' --exclude='usr/bin/sourcekit-lsp' --exclude='usr/bin/clangd'
        --exclude='usr/bin/docc' --exclude='usr/lib/liblldb.so*' --exclude='usr/lib/libsourcekitdInProc.so'
        --exclude='usr/lib/libSwiftSourceKit*' --exclude='usr/share/docc'
    )
    import_rootfs "$build_image" "$image_path" -- \
        -C "$root" . \
        --transform "s,^${toolchain_real#/},opt/swift,S" "${toolchain_excludes[@]}" \
        -C / "${toolchain_real#/}" "${mirrors[@]}"
    rm -rf "$root"

    # The toolchain runs in it, and every shared library its programs load is there; if not, the image goes
    # (the next run makes it again).
    reject() { "$engine" rmi -f "$build_image" >/dev/null 2>&1 || true; fail "$build_image: $*"; }
    # shellcheck disable=SC2016 # expanded by the container's shell
    missing="$("$engine" run --rm --network none "$build_image" sh -c \
        'for f in /opt/swift/usr/bin/*; do [ -L "$f" ] || ldd "$f" 2>/dev/null | sed -n "s,^[[:space:]]*\([^ ]*\) => not found.*,\1 (${f##*/}),p"; done' \
        2>&1)" || reject "cannot run a container from it: $missing"
    [ -z "$missing" ] || reject "the toolchain needs libraries the image lacks: $(echo "$missing" | tr '\n' ' ')"
    version_in="$("$engine" run --rm --network none "$build_image" swift --version 2>&1 | awk 'NR == 1')"
    [ "$version_in" = "$swift_version" ] || reject "swift --version says '$version_in', expected '$swift_version'"
    note "$build_image: made in $((SECONDS - start)) s ($swift_version; mirrors: ${mirrors[*]:-none})"
fi

for image in "$runtime_image" "$nginx_image" "$build_image"; do
    note "ok: $image $("$engine" image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1 / 1e6}')"
done
