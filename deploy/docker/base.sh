#!/bin/sh
# Make the local Debian base image (default: local/debian:bookworm) when it is not there yet.
# No image registry is needed: debootstrap fetches the packages from the Debian mirror and
# `docker import` turns the tree into an image. The tree is kept as a tarball in CACHE, so a
# machine that lost its images (a new dockerd, `docker system prune`) imports it again in seconds.
set -eu
tag=${1:-local/debian:bookworm}
suite=${SUITE:-bookworm}
mirror=${MIRROR:-http://deb.debian.org/debian}
cache=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/factbot}
tarball="$cache/debian-$suite-minbase.tar"
if docker image inspect "$tag" >/dev/null 2>&1; then
    echo "base: $tag is present"
    exit 0
fi
if [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null 2>&1 || {
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
    }
    mkdir -p "$cache"
    rootfs=$(mktemp -d)
    trap 'rm -rf "$rootfs"' EXIT
    echo "base: debootstrap $suite into $rootfs (a few minutes)"
    debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 \
        || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    # apt in the image: no recommends, no caches left behind.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
    tar -C "$rootfs" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
fi
docker import -c 'CMD ["/bin/bash"]' -c 'ENV LANG=C.UTF-8' "$tarball" "$tag" >/dev/null
echo "base: imported $tag from $tarball"
