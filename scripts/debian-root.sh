# shellcheck shell=bash
# Sourced by scripts/debootstrap-check.sh and scripts/deb-install-check.sh: a Debian 12 (bookworm) minbase root
# holding extra packages, made with debootstrap from the mirror apt uses here (or DEBOOTSTRAP_MIRROR), and cached
# as a tarball in ${DEBOOTSTRAP_CACHE:-/var/cache/presignd-debootstrap}, keyed by the package list and mirror.

# The mirror: DEBOOTSTRAP_MIRROR, else the first Debian URI in apt's deb822 sources, else deb.debian.org.
debian_mirror() {
    local mirror="${DEBOOTSTRAP_MIRROR:-}"
    if [ -z "$mirror" ]; then
        mirror="$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null \
            | head -n 1)"
    fi
    printf '%s\n' "${mirror:-http://deb.debian.org/debian}"
}

# debian_root ROOT "PACKAGE …" LOG: fills the empty directory ROOT; debootstrap's output goes to LOG.
debian_root() {
    local root=$1 packages=$2 log=$3 mirror cache key tarball
    mirror="$(debian_mirror)"
    cache="${DEBOOTSTRAP_CACHE:-/var/cache/presignd-debootstrap}"
    key="$(printf '%s %s' "$packages" "$mirror" | sha256sum | cut -c1-16)"
    tarball="$cache/bookworm-minbase-$key.tar.gz"
    mkdir -p "$cache" "$root"
    if [ -f "$tarball" ]; then
        echo "Debian root from cache ${tarball}"
        tar -C "$root" -xzf "$tarball"
        return
    fi
    echo "debootstrap --variant=minbase --include=${packages// /,} bookworm (mirror ${mirror})"
    if ! debootstrap --variant=minbase --include="${packages// /,}" bookworm "$root" "$mirror" >"$log" 2>&1; then
        tail -n 30 "$log"
        echo "debootstrap failed (mirror ${mirror}; set DEBOOTSTRAP_MIRROR to another)" >&2
        return 1
    fi
    tail -n 1 "$log"
    rm -rf "$root/var/cache/apt/archives/"*.deb
    tar -C "$root" -czf "$tarball.part" . && mv "$tarball.part" "$tarball"
}
