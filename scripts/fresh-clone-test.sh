#!/usr/bin/env bash
# Proves that the unit suite needs nothing outside the checkout (issue 24): clones this checkout's HEAD into a new
# temporary directory, checks that no ancestor of the clone has a shared/ folder (where the SigV4 vectors once
# lived), and runs `swift test` there with its own build directory.
#
#   scripts/fresh-clone-test.sh            commit first: the clone has HEAD, not the work tree
#   KEEP_CLONE=1 scripts/fresh-clone-test.sh
set -euo pipefail

cd "$(dirname "$0")/.."
started=$SECONDS

git rev-parse --is-inside-work-tree >/dev/null 2>&1 \
    || { echo "fresh-clone-test: $PWD is not a git checkout" >&2; exit 1; }
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "fresh-clone-test: note: uncommitted changes are not in the clone (it tests HEAD $(git rev-parse --short HEAD))"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/presignd-clone.XXXXXX")"
cleanup() {
    if [ "${KEEP_CLONE:-0}" = "1" ]; then echo "clone kept at $work/presignd"; else rm -rf "$work"; fi
}
trap cleanup EXIT

clone="$work/presignd"
git clone --quiet --no-hardlinks "$PWD" "$clone"
echo "clone: $clone at $(git -C "$clone" rev-parse --short HEAD)"

directory="$clone"
while :; do
    if [ -e "$directory/shared" ]; then
        echo "fresh-clone-test: $directory/shared exists: the clone would not prove anything" >&2
        exit 1
    fi
    [ "$directory" = "/" ] && break
    directory="$(dirname "$directory")"
done
echo "no shared/ in $clone or any ancestor"

log="$work/swift-test.log"
(cd "$clone" && SWIFT_BACKTRACE=enable=no swift test -Xswiftc -warnings-as-errors) >"$log" 2>&1 && rc=0 || rc=$?
summary="$(grep -E 'Test run with [0-9]+ tests? .*(passed|failed)' "$log" | tail -n 1 || true)"
if [ "$rc" -ne 0 ]; then
    grep -E '✘|error:' "$log" | head -n 40 || tail -n 40 "$log"
    echo "fresh-clone-test: FAILED (swift test exit ${rc}) ${summary}" >&2
    exit 1
fi
echo "${summary}"
echo "fresh-clone-test: OK in $((SECONDS - started))s (unit suite from a clone with nothing beside it)"
