#!/usr/bin/env python3
"""Read cache benchmark, large objects (issue 23): a cached 1 GiB GET from presignd against nginx's proxy_cache.

On 127.0.0.1 only, with bench_compare.py's helpers: a --size file (1 GiB) in a temporary directory under --tmp
(/tmp, removed afterwards) served by the origin nginx over verified TLS (a throwaway CA). Two servers in front of
it, each with its cache under the same temporary directory (the same filesystem), both pinned to CPU 0 with one
worker; the reader (curl -o /dev/null) runs on CPU 1:
  presignd   [bucket.cache] max_size = 4GiB, revalidate_after = "1h": filled by one GET (X-Cache: MISS), then the
             admin /metrics is polled (bounded, --fill-timeout) until presignd_cache_size_bytes of the directory
             equals the object's size (the slices are written off the event loop)
  nginx      proxy_cache (proxy_cache_path use_temp_path=off, proxy_cache_valid 200 1h, proxy_buffering on,
             sendfile on) proxying to the same TLS origin: warmed by one GET
Then each reads the whole object --reads times, interleaved (presignd, nginx, nginx, presignd, ...): curl's
speed_download in MiB/s and the server's CPU seconds per read (utime+stime from /proc); each read must be a 200 of
--size bytes that says HIT (X-Cache, nginx's $upstream_cache_status), or the run stops. Prints the medians and the
ratio to the target: presignd MiB/s >= nginx proxy_cache MiB/s (exit status 1 when it fails). Single reads of
either server vary from about 1300 to 2600 MiB/s on a 2-CPU VM, so the default is 15 reads each: with 3 to 8 the
median ratio moved between 0.84x and 1.04x from run to run for the same build.

Usage: scripts/bench_cache_large.py [--presignd PATH] [--size BYTES] [--reads N] [--tmp DIR] [--fill-timeout S]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cache  # noqa: E402  (presignd start, the /metrics cache size)
import bench_compare as bc  # noqa: E402  (the TLS origin, process helpers)

KEY = "big"
MIB = 1 << 20


def write_object(bucket, size):
    """`size` random bytes as bucket/big, written in 16 MiB pieces."""
    path = os.path.join(bucket, KEY)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            f.write(os.urandom(min(left, 16 * MIB)))
            left -= 16 * MIB
    os.chmod(path, 0o644)


def start_proxy_cache(workdir, tls):
    """nginx with proxy_cache in front of the TLS origin (its cache in workdir, like presignd's)."""
    port = bc.free_port()
    text = f"""
    sendfile on;
    proxy_cache_path {os.path.join(workdir, 'nginx-cache')} levels=1:2 keys_zone=big:10m max_size=4g
                     inactive=1h use_temp_path=off;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass https://127.0.0.1:{tls['port']};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_ssl_trusted_certificate {tls['ca']};
            proxy_ssl_verify on;
            proxy_ssl_name localhost;
            proxy_buffering on;
            proxy_cache big;
            proxy_cache_valid 200 1h;
            add_header X-Cache $upstream_cache_status;
        }}
    }}"""
    return bc.start_nginx("proxy-cache", workdir, {"text": text}, port)


def read(server, size, expected):
    """One whole GET with curl: (MiB/s, server CPU seconds); stops the run unless 200, `size` bytes, X-Cache."""
    url = f"http://127.0.0.1:{server.port}/{bc.TLS_BUCKET}/{KEY}"
    before = bc.cpu_ticks(server.pids)
    out = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-D", "-", "-w", "\n%{http_code} %{size_download} "
                          "%{speed_download}", "--max-time", "300", url], capture_output=True, text=True, timeout=330)
    cpu = (bc.cpu_ticks(server.pids) - before) / bc.CLK_TCK
    if out.returncode != 0:
        raise RuntimeError(f"curl {url}: {out.stderr.strip()}")
    status, length, speed = out.stdout.strip().splitlines()[-1].split()
    m = re.search(r"^x-cache:\s*(\S+)", out.stdout, re.M | re.I)
    x_cache = m.group(1) if m else None
    if status != "200" or int(length) != size or x_cache != expected:
        raise RuntimeError(f"{server.name}: GET answered {status} with {length} bytes, X-Cache {x_cache} "
                           f"(expected {expected})")
    return float(speed) / MIB, cpu


def wait_settled(server, directory, size, timeout):
    """Polls the cache size until it is the object's size, or has not grown for a second (the write queue has
    drained: a fill stopped when its queue went over budget); the size, or the run stops at `timeout`."""
    deadline = time.time() + timeout
    last, since = -1, time.time()
    while time.time() < deadline:
        now = bench_cache.cache_size(server.admin_port, directory)
        if now >= size:
            return now
        if now != last:
            last, since = now, time.time()
        elif time.time() - since >= 1.0:
            return now
        time.sleep(0.02)
    raise RuntimeError(f"the cache of {directory} still changing after {timeout:.0f} s")


def fill_presignd(server, directory, size, timeout, gets):
    """GETs (the first a MISS) until the slices written are the whole object, at most `gets` of them: what each
    GET said and the cache size after it, and the seconds it all took. One GET is meant to fill the cache; a fill
    stops when presignd's write queue is over its budget (64 MiB waiting for the disk), so a large object may take
    several."""
    started = time.time()
    steps = []
    for n in range(gets):
        try:
            read(server, size, "MISS" if n == 0 else "HIT")
            said = "MISS" if n == 0 else "HIT"
        except RuntimeError as error:
            if n == 0:
                raise
            said = str(error).split("X-Cache ")[1].split(" ")[0]
        steps.append((said, wait_settled(server, directory, size, timeout)))
        if steps[-1][1] >= size:
            return steps, time.time() - started
    raise RuntimeError(f"the cache of {directory} holds {steps[-1][1]} bytes after {gets} GETs, not {size}: "
                       f"{steps}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presignd", default=os.path.join(bc.ROOT, ".build/release/presignd"))
    parser.add_argument("--size", type=int, default=1 << 30)
    parser.add_argument("--reads", type=int, default=15,
                        help="reads of each server (single reads vary by 2x on a busy machine; the median needs many)")
    parser.add_argument("--tmp", default="/tmp", help="where the object and both caches go (one filesystem)")
    parser.add_argument("--fill-timeout", type=float, default=60.0, help="per filling GET")
    parser.add_argument("--fill-gets", type=int, default=30, help="the most GETs to fill presignd's cache")
    args = parser.parse_args()
    if not os.access(args.presignd, os.X_OK):
        sys.exit(f"missing {args.presignd}: swift build -c release")
    if not shutil.which("curl") or not shutil.which("nginx"):
        sys.exit("curl and nginx are needed")
    if shutil.disk_usage(args.tmp).free < 4 * args.size:
        sys.exit(f"{args.tmp}: fewer than {4 * args.size} bytes free (the object and two caches of it)")
    os.sched_setaffinity(0, {bc.LOAD_CPU})

    workdir = tempfile.mkdtemp(prefix="presignd-cache-large-", dir=args.tmp)
    servers = []
    try:
        data_dir = os.path.join(workdir, "data")
        bucket = os.path.join(data_dir, "bench")
        os.makedirs(bucket)
        os.symlink("bench", os.path.join(data_dir, bc.TLS_BUCKET))
        for path in (workdir, data_dir, bucket):
            os.chmod(path, 0o755)
        write_object(bucket, args.size)
        tls = bc.make_tls(workdir)
        tls["port"] = bc.free_port()
        servers.append(bc.start_origin(workdir, data_dir, bc.free_port(), bc.free_port(), tls))
        presignd = bench_cache.start(args.presignd, bench_cache.write_config(workdir, tls, "large", admin=True), "presignd",
                                     admin=True)
        servers.append(presignd)
        nginx = start_proxy_cache(workdir, tls)
        servers.append(nginx)

        started = time.time()
        steps, fill_seconds = fill_presignd(presignd, bench_cache.cache_dir(workdir, "large"), args.size,
                                            args.fill_timeout, args.fill_gets)
        read(nginx, args.size, "MISS")
        results = {"presignd": [], "nginx": []}
        for n in range(args.reads):
            order = (("presignd", presignd), ("nginx", nginx))
            for name, server in order if n % 2 == 0 else reversed(order):
                results[name].append(read(server, args.size, "HIT"))
    finally:
        for server in reversed(servers):
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"presignd read cache, one {args.size / MIB:.0f} MiB object, whole GETs with curl (CPU 1), servers on "
          f"CPU 0, caches under {args.tmp}, {args.reads} reads each interleaved, load {os.getloadavg()[0]:.1f}, "
          f"{time.time() - started:.0f} s")
    print(f"presignd's cache filled by {len(steps)} GET(s) in {fill_seconds:.1f} s (X-Cache, MiB cached after each: "
          f"{', '.join(f'{said} {cached / MIB:.0f}' for said, cached in steps)})")
    print(f"{'server':<22} {'MiB/s':>8} {'CPU s/read':>11}  (MiB/s of each read)")
    medians = {}
    for name, label in (("presignd", "presignd cache hit"), ("nginx", "nginx proxy_cache hit")):
        speeds = [r[0] for r in results[name]]
        medians[name] = (bc.med(speeds), bc.med([r[1] for r in results[name]]))
        print(f"{label:<22} {medians[name][0]:>8.0f} {medians[name][1]:>11.2f}  "
              f"({' '.join(f'{s:.0f}' for s in speeds)})")
    ratio = medians["presignd"][0] / medians["nginx"][0]
    cpu = medians["presignd"][1] / medians["nginx"][1] if medians["nginx"][1] else float("nan")
    print(f"target presignd MiB/s >= 1.0x nginx proxy_cache MiB/s: {ratio:.2f}x {'PASS' if ratio >= 1 else 'FAIL'}; "
          f"CPU s/read {cpu:.2f}x")
    sys.exit(0 if ratio >= 1 else 1)


if __name__ == "__main__":
    main()
