#!/usr/bin/env bash
# The project's test command (README): the release build with warnings as errors (the binary we ship), the unit
# tests (debug build: swift test builds every target again in debug, with warnings as errors), and the end-to-end
# tests against the release binary, so that the shipped build is the tested build.
#   scripts/test.sh               everything
#   scripts/test.sh -k curl       extra arguments go to pytest
# PRESIGND_BIN=PATH runs the end-to-end tests against another binary instead (the release build is still made).
set -euo pipefail

cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

started=$SECONDS
status_build=skipped status_unit=skipped status_e2e=skipped

summary() {
    local rc=$?
    echo
    echo "SUMMARY: build=${status_build} unit=${status_unit} e2e=${status_e2e} ($((SECONDS - started))s) exit=${rc}"
}
trap summary EXIT

echo "==> swift build -c release -Xswiftc -warnings-as-errors (the shipped build; the end-to-end tests run it)"
status_build=failed
swift build -c release -Xswiftc -warnings-as-errors
status_build=ok

echo "==> swift test -Xswiftc -warnings-as-errors (debug)"
status_unit=failed
unit_log="$(mktemp)"
swift test -Xswiftc -warnings-as-errors 2>&1 | tee "$unit_log"
status_unit=ok
# Swift Testing's closing line: "Test run with N tests in M suites passed ...".
unit_passed="$(sed -n 's/.*Test run with \([0-9][0-9]*\) tests\{0,1\} in .* passed.*/\1/p' "$unit_log" | tail -n 1)"
rm -f "$unit_log"

bin_dir="$(swift build -c release --show-bin-path)"
export PRESIGND_BIN="${PRESIGND_BIN:-${bin_dir}/presignd}"
echo "==> python3 -m pytest -q Tests/e2e  (PRESIGND_BIN=${PRESIGND_BIN})"
status_e2e=failed
e2e_log="$(mktemp)"
python3 -m pytest -q Tests/e2e "$@" 2>&1 | tee "$e2e_log"
status_e2e=ok
e2e_passed="$(sed -n 's/^\([0-9][0-9]*\) passed.*/\1/p' "$e2e_log" | tail -n 1)"
rm -f "$e2e_log"
echo "unit tests: ${unit_passed:-0} passed; end-to-end tests: ${e2e_passed:-0} passed"
echo "$(( ${unit_passed:-0} + ${e2e_passed:-0} )) passed, 0 failed"
