#!/usr/bin/env bash
# Builds the Debian package presignd_VERSION-REVISION_ARCH.deb with dpkg-deb (README: "Debian package"; issue 24).
#
#   scripts/build-deb.sh                 writes build-deb/presignd_*.deb and prints its path last
#   OUT_DIR=DIR scripts/build-deb.sh     somewhere else
#   PRESIGND_BIN=PATH …                  package this binary instead of building one (it must be a release build
#                                        with --static-swift-stdlib: Debian has no Swift runtime package)
#   LINTIAN=1 …                          run lintian on the result (apt-get install lintian)
#
# What goes in:
#   /usr/bin/presignd                              release build, --static-swift-stdlib, no $ORIGIN rpath, stripped
#   /lib/systemd/system/presignd.service           systemd/presignd.service with the binary at /usr/bin
#   /usr/lib/sysusers.d/presignd.conf              systemd/presignd.sysusers (the presignd system user)
#   /usr/lib/tmpfiles.d/presignd.conf              systemd/presignd.tmpfiles (/etc/presignd, its credentials/)
#   /etc/presignd/presignd.toml                    config/presignd.toml, a conffile (dpkg keeps local edits)
#   /usr/share/doc/presignd/examples/              config/presignd.example.toml (every key, with defaults)
#   /usr/share/doc/presignd/{copyright,changelog.Debian.gz,README.md.gz}
#   /usr/share/lintian/overrides/presignd          packaging/lintian-overrides (each tag left, and why)
#   /usr/share/man/man1/presignd.1.gz              generated from `presignd --help` and each subcommand's --help
#   /usr/share/bash-completion/completions/presignd   packaging/presignd.bash-completion
# Depends: the packages owning the libraries `ldd` lists (dpkg -S), as the Dockerfile's RUNTIME_PACKAGES are
# chosen, plus ca-certificates (TLS to the upstreams) and procps (/bin/kill for ExecReload). The package does not
# enable or start the service: it needs the account id and keys first (README: "Debian package").
set -euo pipefail

cd "$(dirname "$0")/.."
repo="$PWD"
started=$SECONDS
say() { printf '\n==> %s\n' "$*"; }
die() { echo "build-deb: $*" >&2; exit 1; }

for tool in dpkg-deb dpkg gzip ldd strip sha256sum md5sum; do
    command -v "$tool" >/dev/null || die "$tool not found (apt-get install dpkg-dev binutils)"
done

# Reproducible: every timestamp is the commit's (SOURCE_DATE_EPOCH), the archive is built with --root-owner-group.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
revision="${DEB_REVISION:-1}"
# The maintainer: DEB_MAINTAINER, else whoever made the commit being packaged.
maintainer="${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}"
[ -n "$maintainer" ] || die "set DEB_MAINTAINER='Name <email>' (no git history to take it from)"
arch="$(dpkg --print-architecture)"

if [ -n "${PRESIGND_BIN:-}" ]; then
    binary="$PRESIGND_BIN"
else
    scratch="${SCRATCH_PATH:-.build}"
    # Full RELRO (-z now) as Debian's hardening flags ask; no $ORIGIN rpath (lintian: custom-library-search-path).
    flags=(-c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now --scratch-path "$scratch")
    say "swift build ${flags[*]} --product presignd"
    swift build "${flags[@]}" --product presignd
    binary="$(swift build "${flags[@]}" --show-bin-path)/presignd"
fi
[ -x "$binary" ] || die "no presignd binary at $binary"
version="$("$binary" version | sed -n 's/^presignd \([0-9][0-9A-Za-z.+~-]*\)$/\1/p')"
[ -n "$version" ] || die "cannot read the version from '$binary version'"
if ldd "$binary" | grep -q 'libswiftCore'; then
    die "$binary links the Swift runtime dynamically: build it with --static-swift-stdlib"
fi
package_version="${version}-${revision}"
out="${OUT_DIR:-$repo/build-deb}"
deb="$out/presignd_${package_version}_${arch}.deb"

work="$(mktemp -d "${TMPDIR:-/tmp}/presignd-deb.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/root"
doc="$root/usr/share/doc/presignd"

say "runtime dependencies: the packages owning what ldd lists"
# ldd prints /lib/… names; on a merged-/usr system dpkg knows some of them only as /usr/lib/… (or the reverse).
owner_of() {
    local path=$1 candidate
    for candidate in "$path" "/usr$path" "${path#/usr}" "$(readlink -f "$path")"; do
        [ -n "$candidate" ] || continue
        if dpkg -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1; then return 0; fi
    done
    return 1
}
depends=()
while read -r library; do
    package="$(owner_of "$library")" || die "no package owns $library (ldd $binary)"
    printf '  %-48s %s\n' "$library" "$package"
    depends+=("$package")
done < <(ldd "$binary" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
# Beyond the libraries: ca-certificates (TLS to the upstreams verifies against the system store) and procps (the
# unit's ExecReload=/bin/kill -HUP, as openssh-server's).
mapfile -t depends < <(printf '%s\n' "${depends[@]}" ca-certificates procps | sort -u)
# The image and the package must agree on what the binary needs: each library package (libc6 and libgcc-s1 are
# in every Debian base image) must be in the Dockerfile's runtime stage.
runtime_packages=" $(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' Dockerfile) "
for package in "${depends[@]}"; do
    case "$package" in libc6 | libgcc-s1 | procps) continue ;; esac
    [[ "$runtime_packages" == *" $package "* ]] \
        || die "ldd needs $package, which the Dockerfile's RUNTIME_PACKAGES lacks: add it there"
done
depends_field="$(printf '%s, ' "${depends[@]}")"
depends_field="${depends_field%, }"
echo "Depends: $depends_field"

say "files"
install -D -m 0755 "$binary" "$root/usr/bin/presignd"
# As dh_strip does for executables; the Swift runtime's reflection metadata lives in sections strip keeps.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/presignd"

install -d "$root/lib/systemd/system"
{
    echo "# presignd as a system service (installed by the presignd Debian package; README: \"Debian package\")."
    echo "# Keys: /etc/presignd/credentials/access_key_id and secret_access_key (root only, mode 0600)."
    sed -e '/^\[Unit\]/,$!d' -e 's|/usr/local/bin/presignd|/usr/bin/presignd|g' \
        -e 's|^Description=.*|&\nDocumentation=man:presignd(1) file:///usr/share/doc/presignd/examples/presignd.example.toml|' \
        systemd/presignd.service
} >"$root/lib/systemd/system/presignd.service"
grep -q '^ExecStart=/usr/bin/presignd ' "$root/lib/systemd/system/presignd.service" \
    || die "the unit's ExecStart does not name /usr/local/bin/presignd any more: update this script"
chmod 0644 "$root/lib/systemd/system/presignd.service"
install -D -m 0644 systemd/presignd.sysusers "$root/usr/lib/sysusers.d/presignd.conf"
install -D -m 0644 systemd/presignd.tmpfiles "$root/usr/lib/tmpfiles.d/presignd.conf"
install -D -m 0644 config/presignd.toml "$root/etc/presignd/presignd.toml"
install -D -m 0644 config/presignd.example.toml "$doc/examples/presignd.example.toml"

# The man page: the help texts as they are, in sections (roff: a backslash is \e; a line may not start with . or ').
roff_block() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/-/\\-/g'; }
help_of() { "$binary" "$@" --help; }
subcommands=(run check-config sign presign healthcheck)
date_text="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)"
{
    printf '.TH PRESIGND 1 "%s" "presignd %s" "User Commands"\n' "$date_text" "$version"
    printf '.SH NAME\npresignd \\- signing proxy for S3\\-compatible storage (Cloudflare R2, AWS S3, MinIO)\n'
    printf '.SH SYNOPSIS\n.B presignd\n.RI [ SUBCOMMAND ] " " [ OPTIONS ]\n'
    printf '.SH DESCRIPTION\n'
    printf 'presignd takes plain, unsigned HTTP requests from local clients, signs them with AWS Signature\n'
    printf 'Version 4 and forwards them to the configured S3\\-compatible upstream, streaming the response back.\n'
    printf 'The keys stay in presignd.\n.PP\n.nf\n'
    help_of | roff_block
    printf '.fi\n.SH SUBCOMMANDS\n'
    for sub in "${subcommands[@]}"; do
        printf '.SS %s\n.nf\n' "$sub"
        help_of "$sub" | roff_block
        printf '.fi\n'
    done
    printf '.SH FILES\n'
    printf '.TP\n.I /etc/presignd/presignd.toml\nthe configuration the unit runs with (a dpkg conffile)\n'
    printf '.TP\n.I /etc/presignd/credentials/\nthe access key id and secret key, root only; the unit hands them over with LoadCredential=\n'
    printf '.TP\n.I /usr/share/doc/presignd/examples/presignd.example.toml\nevery configuration key with its default and unit\n'
    printf '.SH EXIT STATUS\n0 success or clean shutdown; 1 healthcheck: not healthy; 64 usage error;\n'
    printf '71 a listener cannot be bound; 78 configuration error.\n'
    printf '.SH SEE ALSO\n.BR systemctl (1),\n.BR journalctl (1),\n.BR systemd.exec (5)\n'
} >"$work/presignd.1"
install -d "$root/usr/share/man/man1"
gzip -9nc "$work/presignd.1" >"$root/usr/share/man/man1/presignd.1.gz"

# Bash completion: reads the subcommands and their options from presignd's --help when completing.
install -D -m 0644 packaging/presignd.bash-completion "$root/usr/share/bash-completion/completions/presignd"

# Documentation.
gzip -9nc README.md >"$doc/README.md.gz"
commit_date="$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
copyright_year="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)"
cat >"$work/changelog.Debian" <<EOF
presignd (${package_version}) unstable; urgency=medium

  * Package built by scripts/build-deb.sh from presignd commit ${commit}.

 -- ${maintainer}  ${commit_date}
EOF
gzip -9nc "$work/changelog.Debian" >"$doc/changelog.Debian.gz"
{
    cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: presignd
Comment: The presignd binary links the Swift standard library statically (--static-swift-stdlib), and the source
 tree carries the SigV4 test vectors of awslabs/aws-c-auth and boto/botocore (Apache-2.0; test data only, not
 installed).

Files: *
Copyright: ${copyright_year} the presignd developers
EOF
    if [ -f LICENSE ]; then
        echo "License: $(sed -n 's/^SPDX-License-Identifier: *//p' LICENSE | head -n 1)"
        sed -e 's/^$/./' -e 's/^/ /' LICENSE
    else
        # The project has not published a licence yet: say so instead of guessing one.
        echo "License: presignd-unlicensed"
        echo " The presignd project has not chosen a licence yet (no LICENSE file in the source tree);"
        echo " until it does, no rights beyond running this package are granted."
    fi
    cat <<'EOF'

Files: usr/bin/presignd (the statically linked Swift standard library)
Copyright: Apple Inc. and the Swift project authors
License: Apache-2.0 with Runtime Library Exception
 Licensed under the Apache License, Version 2.0, with the Runtime Library Exception
 (https://swift.org/LICENSE.txt). On Debian systems, the full text of the Apache License 2.0 can be found in
 /usr/share/common-licenses/Apache-2.0.
 .
 As an exception, if you use this Software to compile your source code and portions of this Software are
 embedded into the binary product as a result, you may redistribute such product without providing
 attribution as would otherwise be required by Sections 4(a), 4(b) and 4(d) of the License.
EOF
} >"$doc/copyright"
chmod 0644 "$doc/copyright" "$doc/changelog.Debian.gz" "$doc/README.md.gz"
install -D -m 0644 packaging/lintian-overrides "$root/usr/share/lintian/overrides/presignd"

# Maintainer scripts: what dh_installsysusers, dh_installtmpfiles and dh_installsystemd would write, except that
# the service is only registered, not enabled or started (it cannot run before its keys are in place).
install -d "$root/DEBIAN"
cat >"$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = "configure" ]; then
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers presignd.conf
    elif ! getent passwd presignd >/dev/null; then
        useradd --system --user-group --home-dir /nonexistent --shell /usr/sbin/nologin presignd
    fi
    if command -v systemd-tmpfiles >/dev/null 2>&1; then
        systemd-tmpfiles --create presignd.conf
    else
        install -d -m 0750 -o root -g presignd /etc/presignd
        install -d -m 0700 -o root -g root /etc/presignd/credentials
    fi
    # The configuration may name keys or files: readable by root and the service only.
    if [ -z "$2" ] && ! dpkg-statoverride --list /etc/presignd/presignd.toml >/dev/null; then
        chgrp presignd /etc/presignd/presignd.toml
        chmod 0640 /etc/presignd/presignd.toml
    fi
fi
if [ "$1" = "configure" ] || [ "$1" = "abort-upgrade" ] || [ "$1" = "abort-deconfigure" ] || [ "$1" = "abort-remove" ]; then
    if command -v deb-systemd-helper >/dev/null 2>&1; then
        deb-systemd-helper unmask presignd.service >/dev/null || true
        # Registered, not enabled: once the keys are in /etc/presignd/credentials/,
        # run: systemctl enable --now presignd
        deb-systemd-helper update-state presignd.service >/dev/null || true
    fi
    if [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
        if [ -n "$2" ] && command -v deb-systemd-invoke >/dev/null 2>&1; then
            deb-systemd-invoke try-restart presignd.service >/dev/null || true
        fi
    fi
fi
if [ "$1" = "configure" ] && [ -z "$2" ]; then
    echo "presignd: edit /etc/presignd/presignd.toml, put the keys in /etc/presignd/credentials/ (mode 0600),"
    echo "presignd: then: systemctl enable --now presignd"
fi
exit 0
EOF
cat >"$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ] && command -v deb-systemd-invoke >/dev/null 2>&1; then
    deb-systemd-invoke stop presignd.service >/dev/null || true
fi
exit 0
EOF
cat >"$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = "purge" ]; then
    if command -v deb-systemd-helper >/dev/null 2>&1; then
        deb-systemd-helper purge presignd.service >/dev/null || true
    fi
    # Keys the administrator put in credentials/ stay; an empty directory goes.
    rmdir --ignore-fail-on-non-empty /etc/presignd/credentials /etc/presignd 2>/dev/null || true
fi
exit 0
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
echo "/etc/presignd/presignd.toml" >"$root/DEBIAN/conffiles"

installed_kib="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat >"$root/DEBIAN/control" <<EOF
Package: presignd
Version: ${package_version}
Architecture: ${arch}
Maintainer: ${maintainer}
Installed-Size: ${installed_kib}
Depends: ${depends_field}
Section: net
Priority: optional
Description: signing proxy for S3-compatible storage (R2, S3, MinIO)
 presignd takes plain, unsigned HTTP requests from programs on the same machine,
 maps each one to a configured bucket, signs it with AWS Signature Version 4 and
 forwards it over verified TLS to Cloudflare R2, AWS S3 or another S3-compatible
 service, streaming bodies in both directions. The keys stay in presignd: curl,
 a video player or an SDK without credentials can use a private bucket.
 .
 The package installs the daemon, a sandboxed systemd unit (not enabled), its
 system user and directories, and /etc/presignd/presignd.toml to edit.
EOF
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 0755 {} +
find "$root" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +

say "dpkg-deb --build"
mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
dpkg-deb --contents "$deb"

if [ "${LINTIAN:-0}" = "1" ]; then
    command -v lintian >/dev/null || die "lintian not installed (apt-get install lintian)"
    say "lintian $(basename "$deb")"
    # Every tag, informational ones too; warnings and errors fail (each override is explained in
    # packaging/lintian-overrides).
    lintian_log="$work/lintian.txt"
    lintian --display-info --show-overrides --fail-on error,warning "$deb" 2>&1 | grep -v '^running with root' \
        | tee "$lintian_log" || true
    lintian --fail-on error,warning "$deb" >/dev/null 2>&1 || die "lintian: warnings or errors (above)"
    echo "lintian: no errors or warnings ($(grep -c '^I: ' "$lintian_log" || true) info, $(grep -c '^O: ' "$lintian_log" || true) overridden)"
fi

echo
echo "build-deb: OK in $((SECONDS - started))s"
echo "$deb"
