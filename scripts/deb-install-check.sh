#!/usr/bin/env bash
# Installs the Debian package into a fresh Debian 12 root and checks it there (issue 24): `dpkg -i` with only the
# package's declared Depends present (plus systemd and man-db, for systemd-analyze and the unit's Documentation=),
# the presignd user and directories from sysusers/tmpfiles, the conffile, `presignd check-config` as the service
# user with the keys where LoadCredential= puts them, `systemd-analyze verify` of the installed unit, the bash
# completion, then `dpkg --purge`.
#
#   scripts/deb-install-check.sh             as root; builds the .deb with scripts/build-deb.sh first
#   scripts/deb-install-check.sh FILE.deb    check this package
#   KEEP_ROOT=1 …                            keep the root afterwards (path printed)
#
# Needs debootstrap and a reachable Debian mirror (the one apt uses, or DEBOOTSTRAP_MIRROR); the root is cached
# (scripts/debian-root.sh), so later runs take seconds.
set -euo pipefail

cd "$(dirname "$0")/.."
started=$SECONDS
say() { printf '\n==> %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || { echo "deb-install-check: run as root (debootstrap and chroot need it)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "deb-install-check: debootstrap not installed" >&2; exit 1; }
# shellcheck source=scripts/debian-root.sh
. scripts/debian-root.sh

deb="${1:-}"
if [ -z "$deb" ]; then
    say "scripts/build-deb.sh"
    deb="$(scripts/build-deb.sh | tail -n 1)"
fi
[ -f "$deb" ] || fail "no package at $deb"
deb="$(readlink -f "$deb")"
depends="$(dpkg-deb --field "$deb" Depends | tr ',' '\n' | sed 's/(.*)//; s/[[:space:]]//g' | grep -v '^$' | tr '\n' ' ')"
echo "package: $deb"
echo "Depends: $depends"

work="$(mktemp -d /tmp/presignd-deb-root.XXXXXX)"
root="$work/root"
cleanup() {
    umount "$root/proc" 2>/dev/null || true
    if [ "${KEEP_ROOT:-0}" = "1" ]; then echo "root kept at $root"; else rm -rf "$work"; fi
}
trap cleanup EXIT

say "Debian 12 root with the package's Depends, systemd and man-db"
debian_root "$root" "systemd man-db ${depends% }" "$work/debootstrap.log"
chroot "$root" dpkg-query -W presignd >/dev/null 2>&1 && fail "the cached root already has presignd"
mount -t proc proc "$root/proc"
in_root() { chroot "$root" "$@"; }

say "dpkg -i $(basename "$deb")"
cp "$deb" "$root/tmp/presignd.deb"
in_root dpkg -i /tmp/presignd.deb
# shellcheck disable=SC2016  # dpkg-query's own ${Field} syntax
status="$(in_root dpkg-query -W -f '${Status} ${Version}' presignd)"
echo "$status"
[[ "$status" == "install ok installed "* ]] || fail "presignd is not installed: $status"
if in_root ldd /usr/bin/presignd | grep 'not found'; then fail "a shared library is missing"; fi
in_root /usr/bin/presignd version

say "what the maintainer scripts set up"
in_root getent passwd presignd || fail "no presignd user (sysusers)"
check_mode() {
    local path=$1 want=$2 got
    got="$(in_root stat -c '%a %U:%G' "$path")" || fail "$path is missing"
    echo "  $path: $got"
    [ "$got" = "$want" ] || fail "$path is $got, expected $want"
}
check_mode /etc/presignd "750 root:presignd"
check_mode /etc/presignd/credentials "700 root:root"
check_mode /etc/presignd/presignd.toml "640 root:presignd"
# shellcheck disable=SC2016
in_root dpkg-query -W -f '${Conffiles}\n' presignd | grep -q '^ /etc/presignd/presignd.toml ' \
    || fail "/etc/presignd/presignd.toml is not a conffile"
echo "  conffile: /etc/presignd/presignd.toml"
for file in /lib/systemd/system/presignd.service /usr/lib/sysusers.d/presignd.conf /usr/lib/tmpfiles.d/presignd.conf \
    /usr/share/man/man1/presignd.1.gz /usr/share/bash-completion/completions/presignd \
    /usr/share/doc/presignd/copyright /usr/share/doc/presignd/examples/presignd.example.toml; do
    [ -s "$root$file" ] || fail "$file is missing"
    echo "  $file"
done

say "presignd check-config, as the service user, with the keys where LoadCredential= puts them"
# Without them, check-config must fail and say where the keys come from.
rc=0; in_root /usr/bin/presignd check-config --config /etc/presignd/presignd.toml 2>"$work/no-keys.txt" || rc=$?
cat "$work/no-keys.txt"
[ "$rc" -eq 78 ] || fail "check-config without the key files exited $rc, expected 78"
grep -q "from the unit's LoadCredential=" "$work/no-keys.txt" || fail "check-config does not say where the keys come from"
credentials=/run/credentials/presignd.service
install -d -m 0500 "$root$credentials"
printf 'AKIDDEBINSTALLCHECK' >"$root$credentials/access_key_id"
printf 'deb-install-check-secret' >"$root$credentials/secret_access_key"
chmod 0400 "$root$credentials/"*
in_root chown -R presignd:presignd "$credentials"
chroot --userspec=presignd:presignd "$root" /usr/bin/presignd check-config --config /etc/presignd/presignd.toml \
    >"$work/check-config.txt" 2>&1 || { cat "$work/check-config.txt"; fail "check-config failed"; }
cat "$work/check-config.txt"
if grep -q 'deb-install-check-secret' "$work/check-config.txt"; then fail "check-config printed the secret"; fi

say "systemd-analyze verify /lib/systemd/system/presignd.service (in the root: ExecStart, User, Documentation=man:)"
verify_output="$(in_root env SYSTEMD_LOG_LEVEL=notice systemd-analyze verify /lib/systemd/system/presignd.service 2>&1)" \
    || { printf '%s\n' "$verify_output"; fail "systemd-analyze verify failed"; }
[ -z "$verify_output" ] || { printf '%s\n' "$verify_output"; fail "systemd-analyze verify has findings"; }
echo "ok: no findings"

say "bash completion"
# shellcheck disable=SC2016  # a script for the root's bash
completion="$(in_root bash -c '. /usr/share/bash-completion/completions/presignd
    complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _presignd; printf "%s " "${COMPREPLY[@]}"; }
    complete_words presignd ch; echo; complete_words presignd presign --exp; echo')"
printf '%s\n' "$completion"
[ "$completion" = $'check-config \n--expires ' ] || fail "bash completion offered something else"

say "dpkg --purge presignd"
in_root dpkg --purge presignd
[ ! -e "$root/usr/bin/presignd" ] || fail "/usr/bin/presignd is still there"
[ ! -e "$root/etc/presignd/presignd.toml" ] || fail "the conffile survived the purge"
echo "ok: binary and conffile gone (the presignd user stays, as Debian policy asks)"

echo
echo "deb-install-check: OK in $((SECONDS - started))s ($(basename "$deb") in a fresh Debian 12 root)"
