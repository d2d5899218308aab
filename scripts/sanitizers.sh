#!/usr/bin/env bash
# Unit tests under AddressSanitizer and ThreadSanitizer, then a short end-to-end subset against an ASan-built
# and a TSan-built daemon (worker threads + main thread + admin listener all run).
#   scripts/sanitizers.sh                 both sanitizers
#   scripts/sanitizers.sh address         one of: address thread
# Environment: SANITIZER_BUILD_ROOT (default .build/sanitizers; one scratch path per sanitizer),
#   SANITIZER_E2E (pytest -k expression of the e2e subset; see below).
# Bounded: each step has a timeout; prints what it checked; exits non-zero on any sanitizer report or failure.
#
# The e2e subset: the request-smuggling table, the security limits, the cache fills (the store's writer thread
# beside the workers), and the fault-injection suite with 100
# repetitions instead of 1000 (a sanitized debug daemon is 3-10x slower). Descriptor leaks are still checked;
# the live heap is not (the sanitizers' allocators are not glibc's): the plain build in scripts/test.sh judges it.
# moto/nginx/awscli tests are left out: they exercise the same code paths as the recorder-backed ones at many
# times the run time.
set -euo pipefail

cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no  # else a sanitizer abort can hang in Swift's backtracer (DESIGN §7)
root="${SANITIZER_BUILD_ROOT:-.build/sanitizers}"
subset="${SANITIZER_E2E:-test_security_smuggling or test_security_limits or test_faults_upstream or test_cache_fill}"
sanitizers=("$@")
[ "${#sanitizers[@]}" -eq 0 ] && sanitizers=(address thread)

failures=0
summary=()
# libevent allocates with the system allocator, the one that ships, so the sanitizers check that allocator as it is
# (issue 18): nothing to switch off.
for sanitizer in "${sanitizers[@]}"; do
    scratch="$root/$sanitizer"
    logs="$root/$sanitizer-logs"
    mkdir -p "$logs"
    logs="$(cd "$logs" && pwd)"  # sanitizer log_path must be absolute (the daemon runs from pytest's cwd)
    rm -f "$logs"/report.*
    case "$sanitizer" in
        address)
            export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$logs/report"
            ;;
        thread)
            # report_thread_leaks=0: Daemon.start keeps the worker pthread_t values but never joins or detaches
            # them, so every daemon exit is a TSan "thread leak" (exit 66). Known, reported in issue 5's
            # security branch; drop this option once the daemon joins its workers. Races still fail the run.
            export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:report_thread_leaks=0:log_path=$logs/report"
            ;;
        *) echo "sanitizers: unknown sanitizer '$sanitizer' (address | thread)"; exit 64 ;;
    esac

    # Every lock is PresigndSync.Locked (a pthread mutex, which ThreadSanitizer models), so the multi-threaded
    # cache tests run here too: a report under a lock is a real race.
    echo "==> swift test --sanitize=$sanitizer (scratch $scratch)"
    started=$SECONDS
    if timeout 1500 swift test --sanitize="$sanitizer" --scratch-path "$scratch" >"$logs/unit.log" 2>&1; then
        unit="ok"
    else
        unit="FAILED"
        failures=$((failures + 1))
        tail -n 40 "$logs/unit.log"
    fi
    tests="$(grep -oE 'Test run with [0-9]+ tests?( in [0-9]+ suites?)? passed' "$logs/unit.log" | tail -n 1 || true)"
    echo "sanitizers: $sanitizer unit tests: $unit (${tests:-see $logs/unit.log}) in $((SECONDS - started))s"

    echo "==> e2e subset against the $sanitizer-built daemon: -k '$subset'"
    started=$SECONDS
    swift build --sanitize="$sanitizer" --scratch-path "$scratch" --product presignd >"$logs/build.log" 2>&1
    bin="$(swift build --sanitize="$sanitizer" --scratch-path "$scratch" --show-bin-path)/presignd"
    if PRESIGND_BIN="$bin" PRESIGND_FAULT_LOOPS=100 PRESIGND_SKIP_HEAP_CHECK=1 timeout 900 python3 -m pytest -q Tests/e2e -k "$subset" \
        >"$logs/e2e.log" 2>&1; then
        e2e="ok"
    else
        e2e="FAILED"
        failures=$((failures + 1))
        tail -n 40 "$logs/e2e.log"
    fi
    echo "sanitizers: $sanitizer e2e: $e2e ($(tail -n 1 "$logs/e2e.log")) in $((SECONDS - started))s"

    reports=("$logs"/report.*)
    if [ -e "${reports[0]}" ]; then
        failures=$((failures + 1))
        echo "sanitizers: $sanitizer reports:"
        head -n 60 "${reports[@]}"
        summary+=("$sanitizer: unit $unit, e2e $e2e, ${#reports[@]} report(s)")
    else
        summary+=("$sanitizer: unit $unit, e2e $e2e, no sanitizer report")
    fi
done

printf 'sanitizers: %s\n' "${summary[@]}"
if [ "$failures" -ne 0 ]; then
    echo "sanitizers: FAILED"
    exit 1
fi
echo "sanitizers: OK"
