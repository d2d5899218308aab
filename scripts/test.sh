#!/usr/bin/env bash
# The project's test command (README): build with warnings as errors, unit tests, end-to-end tests.
#   scripts/test.sh               everything
#   scripts/test.sh -k curl       extra arguments go to pytest
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

echo "==> swift build -Xswiftc -warnings-as-errors (debug)"
status_build=failed
swift build -Xswiftc -warnings-as-errors
status_build=ok

echo "==> swift test"
status_unit=failed
swift test -Xswiftc -warnings-as-errors
status_unit=ok

bin_dir="$(swift build --show-bin-path)"
export PRESIGND_BIN="${PRESIGND_BIN:-${bin_dir}/presignd}"
echo "==> python3 -m pytest -q Tests/e2e  (PRESIGND_BIN=${PRESIGND_BIN})"
status_e2e=failed
python3 -m pytest -q Tests/e2e "$@"
status_e2e=ok
