#!/usr/bin/env bash
# Builds the libFuzzer targets under Tests/Fuzz/Targets with `swiftc -sanitize=fuzzer,address` and runs each for
# a bounded time over its committed seed corpus (Tests/Fuzz/FUZZING.md).
#   scripts/fuzz.sh               30 s per target, every target
#   scripts/fuzz.sh 10 config     10 s, only the named targets
# Environment: FUZZ_BUILD_DIR (default .build/fuzz), FUZZ_JOBS_RSS_MB (libFuzzer -rss_limit_mb, default 2048).
# Prints per target the executions, the time and "no crash"; exits 1 on a crash (the input is kept under
# $FUZZ_BUILD_DIR/artifacts and its path printed), 2 on a build failure.
set -euo pipefail

cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no  # else a crash can hang in Swift's backtracer for minutes (DESIGN §7)

seconds="${1:-30}"
shift || true
build="${FUZZ_BUILD_DIR:-.build/fuzz}"
rss_mb="${FUZZ_JOBS_RSS_MB:-2048}"
mkdir -p "$build/lib" "$build/bin" "$build/artifacts" "$build/corpus"

# target → the modules under Sources/ it links, each after the ones it imports (the last is the one exercised)
declare -A modules_of=(
    [request]=PresigndHTTP1 [response]=PresigndHTTP1 [chunked]=PresigndHTTP1 [aws-chunked]=PresigndHTTP1
    [config]="PresigndHTTP1 PresigndOpenSSL PresigndSigV4 PresigndPolicy PresigndConfig"
    [sigv4-url]="PresigndHTTP1 PresigndOpenSSL PresigndSigV4"
)
# target → driver sources compiled into the target with its harness (Tests/Fuzz/Drivers: the HTTP/1 decoders')
declare -A drivers_of=(
    [request]=Tests/Fuzz/Drivers [response]=Tests/Fuzz/Drivers [chunked]=Tests/Fuzz/Drivers
    [aws-chunked]=Tests/Fuzz/Drivers
)
all_targets=(request response chunked aws-chunked config sigv4-url)
targets=("$@")
[ "${#targets[@]}" -eq 0 ] && targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
    [ -n "${modules_of[$target]:-}" ] || { echo "fuzz: unknown target '$target' (known: ${all_targets[*]})"; exit 64; }
done

swiftc_flags=("-sanitize=fuzzer,address" -parse-as-library -O -g -swift-version 6 -use-ld=lld)
module_flags() {  # extra flags for a list of modules: the COpenSSL module map and the libraries behind it
    case " $* " in
        *" PresigndOpenSSL "*) echo "-I Sources/COpenSSL -lcrypto -lssl" ;;
        *) echo "" ;;
    esac
}

# True when $1 is missing or older than any file under the following paths.
stale() {
    local out="$1"
    shift
    [ ! -e "$out" ] || [ -n "$(find "$@" -newer "$out" -print -quit)" ]
}

build_module() {  # a static library and module interface of Sources/<module>, instrumented for coverage
    local module="$1" lib="$build/lib/lib$1.a"
    shift
    local inputs=("Sources/$module" scripts/fuzz.sh)
    for dependency in "$@"; do inputs+=("$build/lib/lib$dependency.a"); done
    stale "$lib" "${inputs[@]}" || return 0
    echo "fuzz: building $module (instrumented)"
    rm -f "$lib"
    # shellcheck disable=SC2046  # module_flags is a word list on purpose
    swiftc "${swiftc_flags[@]}" -emit-library -static -emit-module -module-name "$module" \
        -emit-module-path "$build/lib/$module.swiftmodule" -I "$build/lib" $(module_flags "$module" "$@") \
        -o "$lib" "Sources/$module"/*.swift 2>&1 | grep -v 'Cannot export local symbol' || true
    [ -e "$lib" ] || { echo "fuzz: building $module failed"; exit 2; }
}

build_target() {
    local target="$1" bin="$build/bin/fuzz-$1"
    read -r -a modules <<<"${modules_of[$1]}"
    local sources=("Tests/Fuzz/Targets/$target.swift") libraries=()
    if [ -n "${drivers_of[$target]:-}" ]; then sources+=("${drivers_of[$target]}"/*.swift); fi
    local inputs=("${sources[@]}")
    for module in "${modules[@]}"; do inputs+=("$build/lib/lib$module.a"); done
    # Each library before the ones it imports, for the linker.
    for ((index = ${#modules[@]} - 1; index >= 0; index--)); do libraries+=("-l${modules[index]}"); done
    stale "$bin" "${inputs[@]}" || return 0
    echo "fuzz: building fuzz-$target"
    rm -f "$bin"
    # shellcheck disable=SC2046
    swiftc "${swiftc_flags[@]}" -module-name "FuzzTarget" -I "$build/lib" -L "$build/lib" "${libraries[@]}" \
        $(module_flags "${modules[@]}") -o "$bin" "${sources[@]}" 2>&1 \
        | grep -v 'Cannot export local symbol' || true
    [ -x "$bin" ] || { echo "fuzz: building fuzz-$target failed"; exit 2; }
}

declare -A built=()
for target in "${targets[@]}"; do
    read -r -a modules <<<"${modules_of[$target]}"
    for index in "${!modules[@]}"; do
        module="${modules[index]}"
        if [ -z "${built[$module]:-}" ]; then build_module "$module" "${modules[@]:0:index}"; built[$module]=1; fi
    done
    build_target "$target"
done

failures=0
for target in "${targets[@]}"; do
    seeds="Tests/Fuzz/corpus/$target"
    work="$build/corpus/$target"  # new inputs land here, never in the committed corpus
    mkdir -p "$work"
    log="$build/fuzz-$target.log"
    started=$SECONDS
    rc=0
    "$build/bin/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb="$rss_mb" -max_len=8192 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" "$work" "$seeds" \
        </dev/null >"$log" 2>&1 || rc=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    corpus="$(find "$work" -type f | wc -l)"
    if [ "$rc" -eq 0 ]; then
        echo "fuzz: $target: ${runs:-?} executions in $((SECONDS - started))s, seeds $(find "$seeds" -type f | wc -l)," \
            "working corpus $corpus, no crash"
    else
        failures=$((failures + 1))
        echo "fuzz: $target: CRASH (exit $rc) after $((SECONDS - started))s; log $log"
        grep -E 'ERROR: |Fatal error|precondition|Test unit written to' "$log" | head -n 8 || true
    fi
done

if [ "$failures" -ne 0 ]; then
    echo "fuzz: FAILED ($failures target(s) crashed); reproduce with: <binary> <artifact> (Tests/Fuzz/FUZZING.md)"
    exit 1
fi
echo "fuzz: OK (${#targets[@]} target(s), ${seconds}s each, no crash)"
