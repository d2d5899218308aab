#!/usr/bin/env bash
# Proves the Dockerfile's runtime stage without a Docker engine (issue 4): builds presignd the way the build stage
# does, makes a Debian 12 root with debootstrap holding only the runtime stage's packages (read from the
# Dockerfile's RUNTIME_PACKAGES line), copies the binary in, and runs it there with chroot as the image's non-root
# user: `presignd version`, `presignd check-config`, then `presignd run` serving a real proxied request to an
# upstream on the host's loopback (chroot shares the network namespace), `presignd healthcheck`, SIGTERM → exit 0.
#
#   scripts/debootstrap-check.sh                 as root; needs debootstrap, python3, curl
#   DEBOOTSTRAP_MIRROR=http://… scripts/debootstrap-check.sh
#   KEEP_ROOT=1 …                                keep the root afterwards (path printed)
#
# Slow (a release build plus debootstrap): not part of scripts/test.sh. The finished Debian root is cached as a
# tarball in ${DEBOOTSTRAP_CACHE:-/var/cache/presignd-debootstrap}, keyed by the package list and the mirror.
set -euo pipefail

cd "$(dirname "$0")/.."
started=$SECONDS
say() { printf '\n==> %s\n' "$*"; }

if [ "$(id -u)" -ne 0 ]; then echo "debootstrap-check: run as root (debootstrap and chroot need it)" >&2; exit 1; fi
for tool in debootstrap python3 curl; do
    command -v "$tool" >/dev/null || { echo "debootstrap-check: $tool not installed" >&2; exit 1; }
done

# The runtime stage's packages, exactly as the Dockerfile lists them.
packages="$(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' Dockerfile)"
[ -n "$packages" ] || { echo "debootstrap-check: no ARG RUNTIME_PACKAGES=\"…\" line in Dockerfile" >&2; exit 1; }
# shellcheck source=scripts/debian-root.sh
. scripts/debian-root.sh

scratch="${SCRATCH_PATH:-.build}"
say "swift build -c release --static-swift-stdlib --product presignd (scratch: ${scratch})"
swift build -c release --static-swift-stdlib --product presignd --scratch-path "$scratch"
binary="$(swift build -c release --static-swift-stdlib --scratch-path "$scratch" --show-bin-path)/presignd"
ls -l "$binary"
say "ldd (what the runtime stage must provide)"
ldd "$binary"

work="$(mktemp -d /tmp/presignd-debootstrap.XXXXXX)"
root="$work/root"
upstream_pid=""
daemon_pid=""
cleanup() {
    if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null || true; fi
    if [ -n "$upstream_pid" ]; then kill "$upstream_pid" 2>/dev/null || true; fi
    umount "$root/proc" 2>/dev/null || true
    if [ "${KEEP_ROOT:-0}" = "1" ]; then echo "root kept at $root"; else rm -rf "$work"; fi
}
trap cleanup EXIT

say "Debian 12 root with the runtime packages"
debian_root "$root" "$packages" "$work/debootstrap.log"
for package in $packages; do
    chroot "$root" dpkg-query -W "$package"
done
mount -t proc proc "$root/proc"

say "image setup: binary, non-root user, config, Docker-style secret"
install -D -m 0755 "$binary" "$root/usr/local/bin/presignd"
chroot "$root" useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin presignd
chroot "$root" ldd /usr/local/bin/presignd
if chroot "$root" ldd /usr/local/bin/presignd | grep -q 'not found'; then
    echo "FAIL: a shared library is missing in the runtime root" >&2; exit 1
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
upstream_port="$(free_port)"; listen_port="$(free_port)"; admin_port="$(free_port)"
mkdir -p "$work/upstream/photos"
printf 'hello from the upstream\n' >"$work/upstream/photos/cat.txt"
python3 -m http.server --bind 127.0.0.1 --directory "$work/upstream" "$upstream_port" >"$work/upstream.log" 2>&1 &
upstream_pid=$!
for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "http://127.0.0.1:${upstream_port}/photos/cat.txt" 2>/dev/null && break
    sleep 0.1
done

install -d -m 0755 "$root/etc/presignd" "$root/run/secrets"
printf 'debootstrap-check-secret\n' >"$root/run/secrets/secret_access_key"
chmod 0444 "$root/run/secrets/secret_access_key"
cat >"$root/etc/presignd/presignd.toml" <<TOML
[server]
listen = ["127.0.0.1:${listen_port}"]
admin_listen = "127.0.0.1:${admin_port}"
workers = 1

[upstream.local]
provider = "custom"
endpoint = "http://127.0.0.1:${upstream_port}"
access_key_id = "AKIDDEBOOTSTRAPCHECK"
secret_access_key_file = "/run/secrets/secret_access_key"

[[bucket]]
name = "photos"
upstream = "local"
mount = "/"
TOML

run_in_root() { chroot --userspec=10001:10001 "$root" "$@"; }

say "chroot: presignd version"
run_in_root /usr/local/bin/presignd version
say "chroot: presignd check-config"
run_in_root /usr/local/bin/presignd check-config --config /etc/presignd/presignd.toml
say "chroot: presignd run (as uid 10001)"
# Not through run_in_root: a backgrounded function is a subshell, and SIGTERM must reach presignd itself
# (chroot and env exec, so $! is presignd's pid).
chroot --userspec=10001:10001 "$root" env -i PRESIGND_CONFIG=/etc/presignd/presignd.toml /usr/local/bin/presignd run \
    2>"$work/presignd.log" &
daemon_pid=$!
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:${admin_port}/readyz" >/dev/null 2>&1 && break
    sleep 0.1
done
say "proxied request: GET http://127.0.0.1:${listen_port}/cat.txt"
body="$(curl -fsS --max-time 10 -D "$work/headers" "http://127.0.0.1:${listen_port}/cat.txt")" \
    || { echo "FAIL: the proxied request failed" >&2; cat "$work/presignd.log" "$work/upstream.log"; exit 1; }
printf '%s\n' "$body"
grep -i '^x-presignd-request-id:' "$work/headers"
[ "$body" = "hello from the upstream" ] || { echo "FAIL: unexpected body" >&2; cat "$work/presignd.log"; exit 1; }
grep '"GET /photos/cat.txt' "$work/upstream.log"
say "chroot: presignd healthcheck"
run_in_root /usr/local/bin/presignd healthcheck --admin "127.0.0.1:${admin_port}" && echo "healthcheck: exit 0"
say "SIGTERM"
kill -TERM "$daemon_pid"
rc=0; wait "$daemon_pid" || rc=$?
daemon_pid=""
cat "$work/presignd.log"
[ "$rc" -eq 0 ] || { echo "FAIL: presignd exited with $rc after SIGTERM" >&2; exit 1; }
if grep -q 'debootstrap-check-secret' "$work/presignd.log"; then echo "FAIL: the secret is in the log" >&2; exit 1; fi

echo
echo "debootstrap-check: OK in $((SECONDS - started))s (runtime packages: ${packages})"
