#!/usr/bin/env python3
"""Instructions and reference-count operations per proxied request (issue 8), on 127.0.0.1 only.

The CPU figures of bench_compare.py move by a few percent between runs; these counts do not, so a change of a few
hundred instructions or a handful of retains shows. It starts bench_compare's nginx origin serving /bench/1k,
presignd (release build, 1 worker, access log off, admin off) and a keep-alive client doing sequential GETs, then:

  * default: runs presignd under `valgrind --tool=callgrind` twice, once for --base GETs and once for
    --base + --requests, and prints (Ir(base + N) - Ir(base)) / N: start-up and warm-up cancel out. Both
    callgrind files stay in --out for `callgrind_annotate --inclusive=yes FILE`; diffing two files' functions
    divided by N gives any function's cost per request. Under valgrind OpenSSL takes its non-SHA-NI path: about
    17k of a signed request's instructions are hashing that costs ~0.3 us on the real CPU.
  * --rc: runs presignd with an LD_PRELOAD shim (compiled with cc) that counts swift_retain / swift_release /
    _n calls between two SIGUSR2, and prints the atomic reference-count operations per request by calling
    function (addr2line) and by object type (nm: the isa pointer's metadata symbol).

--distinct sends a fresh `amz-sdk-invocation-id` header on every request (as SDKs do), so no two heads are equal and every request is parsed, rewritten
and signed (as SDK requests are: each carries its own invocation id). Needs nginx, valgrind (default mode), cc + addr2line + nm (--rc).

  swift build -c release --product presignd
  scripts/profile_requests.py [--distinct] [--rc] [--requests 5000] [--base 1000]
"""

import argparse
import collections
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_compare as bench  # noqa: E402  (the origin nginx, presignd's config, free ports, waiting for a port)

RC_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define SLOTS 65536
struct entry { void *caller; void *isa; int kind; unsigned long count; };
static struct entry table[SLOTS];
static volatile int counting = 0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out_path;
static void note(void *caller, void *object, int kind) {
    if (!counting || !object) return;
    uintptr_t p = (uintptr_t)object;
    if (p < 4096 || (p >> 56)) return;  /* tagged or bogus: not a heap object */
    void *isa = *(void **)object;
    uintptr_t h = ((uintptr_t)caller * 31 + (uintptr_t)isa * 7 + (uintptr_t)kind) % SLOTS;
    pthread_mutex_lock(&lock);
    for (;;) {
        if (table[h].count == 0) { table[h] = (struct entry){caller, isa, kind, 1}; break; }
        if (table[h].caller == caller && table[h].isa == isa && table[h].kind == kind) { table[h].count++; break; }
        h = (h + 1) % SLOTS;
    }
    pthread_mutex_unlock(&lock);
}
typedef void *(*retain_fn)(void *);
typedef void (*release_fn)(void *);
typedef void *(*retain_n_fn)(void *, uint32_t);
typedef void (*release_n_fn)(void *, uint32_t);
#define NEXT(type, name) static type real; if (!real) real = (type)dlsym(RTLD_NEXT, name)
void *swift_retain(void *o) { NEXT(retain_fn, "swift_retain"); note(__builtin_return_address(0), o, 0); return real(o); }
void swift_release(void *o) { NEXT(release_fn, "swift_release"); note(__builtin_return_address(0), o, 1); real(o); }
void *swift_retain_n(void *o, uint32_t n) { NEXT(retain_n_fn, "swift_retain_n"); note(__builtin_return_address(0), o, 2); return real(o, n); }
void swift_release_n(void *o, uint32_t n) { NEXT(release_n_fn, "swift_release_n"); note(__builtin_return_address(0), o, 3); real(o, n); }
static void toggle(int sig) {
    (void)sig;
    if (!counting) { memset(table, 0, sizeof table); counting = 1; return; }
    counting = 0;
    FILE *f = fopen(out_path, "w");
    if (!f) return;
    for (int i = 0; i < SLOTS; i++)
        if (table[i].count) fprintf(f, "%lu %d %p %p\n", table[i].count, table[i].kind, table[i].caller, table[i].isa);
    fclose(f);
}
__attribute__((constructor)) static void init(void) {
    out_path = getenv("RC_COUNT_OUT");
    if (out_path) signal(SIGUSR2, toggle);
}
"""


def client(port, count, distinct, first=0, path="/bench/1k"):
    """`count` sequential keep-alive GETs of `path`; every answer must be a 200 with the whole body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    buffer = b""
    for i in range(first, first + count):
        # Distinct as SDK requests are: a fresh amz-sdk-invocation-id each time (an unknown query parameter would be
        # refused by the policy, issue 19).
        extra = (f"amz-sdk-invocation-id: {uuid.UUID(int=i + 1)}\r\namz-sdk-request: attempt=1; max=3\r\n"
                 if distinct else "")
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode())
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end >= 0:
                head = buffer[:end]
                length = int(re.search(rb"(?im)^content-length:\s*(\d+)", head).group(1))
                if len(buffer) >= end + 4 + length:
                    if not head.startswith(b"HTTP/1.1 200"):
                        raise RuntimeError(f"unexpected answer: {head[:200]!r}")
                    buffer = buffer[end + 4 + length:]
                    break
            data = sock.recv(65536)
            if not data:
                raise RuntimeError("presignd closed the connection")
            buffer += data
    sock.close()


def callgrind_total(path):
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def run_callgrind(args, config, port, requests, out):
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", args.presignd, "run",
                             "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):  # valgrind starts slowly
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("presignd under valgrind exited")
                time.sleep(0.1)
        client(port, requests, args.distinct, path=args.path)
    finally:
        proc.send_signal(signal.SIGINT)  # a clean exit writes the callgrind file
        proc.wait(timeout=120)
    return callgrind_total(out)


def pie_base(pid, binary):
    real = os.path.realpath(binary)
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if line.rstrip().endswith(real):
                return int(line.split("-")[0], 16)
    raise RuntimeError("presignd's mapping not found")


def demangle(names):
    if not shutil.which("swift") or not names:
        return names
    out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(names),
                         capture_output=True, text=True).stdout.split("\n")
    return out[:len(names)] if len(out) >= len(names) else names


def run_rc(args, config, port, workdir):
    shim = os.path.join(workdir, "rc_count.so")
    source = os.path.join(workdir, "rc_count.c")
    with open(source, "w") as f:
        f.write(RC_SHIM)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", shim, source, "-ldl", "-lpthread"], check=True)
    counts = os.path.join(workdir, "rc_counts.txt")
    env = dict(os.environ, LD_PRELOAD=shim, RC_COUNT_OUT=counts)
    proc = subprocess.Popen([args.presignd, "run", "--config", config], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        bench.wait_port(port, proc, "presignd")
        client(port, args.base, args.distinct, path=args.path)
        base = pie_base(proc.pid, args.presignd)
        proc.send_signal(signal.SIGUSR2)
        client(port, args.requests, args.distinct, first=args.base, path=args.path)
        proc.send_signal(signal.SIGUSR2)
        for _ in range(100):
            if os.path.exists(counts):
                break
            time.sleep(0.05)
        time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    rows = []
    with open(counts) as f:
        for line in f:
            count, kind, caller, isa = line.split()
            rows.append((int(count), int(kind), int(caller, 16) - base, int(isa, 16) - base))
    total = sum(r[0] for r in rows) / args.requests
    print(f"{total:.1f} atomic reference-count operations per request (swift_retain/release/_n calls)")
    offsets = sorted({r[2] for r in rows if 0 <= r[2] < 1 << 32})
    functions = {}
    if offsets:
        out = subprocess.run(["addr2line", "-f", "-e", args.presignd] + [hex(o) for o in offsets],
                             capture_output=True, text=True).stdout.split("\n")
        functions = {o: out[2 * i] for i, o in enumerate(offsets)}
    symbols = {}
    for line in subprocess.run(["nm", args.presignd], capture_output=True, text=True).stdout.split("\n"):
        parts = line.split()
        if len(parts) == 3:
            symbols[int(parts[0], 16)] = parts[2]
    by_function, by_type = collections.Counter(), collections.Counter()
    for count, _, caller, isa in rows:
        by_function[functions.get(caller, "(outside presignd: runtime or libraries)")] += count
        name = type_symbol(symbols, isa)
        by_type[name or "(metadata outside presignd: arrays, strings, ...)"] += count
    for title, counter in (("by calling function", by_function), ("by object type", by_type)):
        print(f"\n{title}:")
        top = counter.most_common(args.top)
        for (name, count), shown in zip(top, demangle([name for name, _ in top])):
            print(f"  {count / args.requests:6.1f}  {shown[:140]}")
    if args.sites:
        print_sites(args, rows, symbols)


def type_symbol(symbols, isa):
    """The metadata symbol an object's isa pointer points into (it may point 8 or 16 bytes past the symbol)."""
    return symbols.get(isa) or symbols.get(isa - 16) or symbols.get(isa - 8)


def print_sites(args, rows, symbols):
    """--sites: retains and releases by call site (source line, inlined frames innermost first) and object type."""
    by_site = collections.Counter()
    for count, kind, caller, isa in rows:
        if 0 <= caller < 1 << 32:
            by_site[(caller, kind, isa)] += count
    top = by_site.most_common(args.top)
    # One addr2line per address: with -i each prints as many lines as the site has inlined frames.
    print("\nby call site (retain/release, object type, source lines innermost first):")
    kinds = ("retain", "release", "retain_n", "release_n")
    for (caller, kind, isa), count in top:
        frames = subprocess.run(["addr2line", "-i", "-e", args.presignd, hex(caller)],
                                capture_output=True, text=True).stdout.split()
        frames = [os.path.relpath(f, bench.ROOT) if f.startswith("/") else f for f in frames]
        name = type_symbol(symbols, isa) or "(runtime type)"
        shown = demangle([name])[0].replace("type metadata for ", "")
        print(f"  {count / args.requests:5.1f}  {kinds[kind]:9} {shown[:28]:28}  {' < '.join(frames)[:200]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--presignd", default=".build/release/presignd")
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--base", type=int, default=1000)
    parser.add_argument("--distinct", action="store_true", help="a fresh amz-sdk-invocation-id on every request")
    parser.add_argument("--rc", action="store_true", help="count reference-count operations instead")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sites", action="store_true", help="with --rc: also by call site (source line)")
    parser.add_argument("--out", default=None, help="where callgrind files go (default: a new /tmp directory)")
    parser.add_argument("--size", choices=("1k", "64k"), default="1k", help="the object fetched (default 1k)")
    parser.add_argument("--tls", action="store_true",
                        help="the upstream over verified TLS (bench_compare's TLS origin and bucket)")
    args = parser.parse_args()
    args.path = f"/{bench.TLS_BUCKET if args.tls else 'bench'}/{args.size}"
    needed = ["nginx"] + (["cc", "addr2line", "nm"] if args.rc else ["valgrind"])
    missing = [tool for tool in needed if not shutil.which(tool)]
    if missing or not os.path.exists(args.presignd):
        print(f"profile_requests: missing {missing or args.presignd} (build: swift build -c release --product "
              "presignd)", file=sys.stderr)
        return 2
    workdir = tempfile.mkdtemp(prefix="presignd-profile-")
    out = args.out or tempfile.mkdtemp(prefix="presignd-callgrind-")  # kept for callgrind_annotate
    os.makedirs(out, exist_ok=True)
    data = os.path.join(workdir, "data")
    os.makedirs(os.path.join(data, "bench"))
    with open(os.path.join(data, "bench", args.size), "wb") as f:
        f.write(os.urandom(1024 if args.size == "1k" else 65536))
    os.symlink("bench", os.path.join(data, bench.TLS_BUCKET))
    tls = dict(bench.make_tls(workdir), port=bench.free_port()) if args.tls else None
    origin = bench.start_origin(workdir, data, bench.free_port(), bench.free_port(), tls)
    try:
        port = bench.free_port()
        upstream_tls = {"port": tls["port"], "ca": tls["ca"]} if tls else None
        config = bench.write_presignd_config(workdir, origin.port, 16, None, listen=f"127.0.0.1:{port}",
                                             tls=upstream_tls)
        kind = ("distinct heads (every request signed)" if args.distinct else "one URL") + (
            ", upstream over TLS" if args.tls else "")
        if args.rc:
            print(f"presignd {args.presignd}, {args.requests} GETs of {args.path} after {args.base}, {kind}")
            run_rc(args, config, port, workdir)
        else:
            files = [os.path.join(out, f"callgrind.{n}.out") for n in (args.base, args.base + args.requests)]
            low = run_callgrind(args, config, port, args.base, files[0])
            high = run_callgrind(args, config, port, args.base + args.requests, files[1])
            print(f"presignd {args.presignd}, GETs of {args.path}, {kind}: {(high - low) / args.requests:,.0f} "
                  f"instructions per request under callgrind ({args.base} vs {args.base + args.requests} requests)")
            print(f"callgrind files: {files[0]} {files[1]}")
    finally:
        origin.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
