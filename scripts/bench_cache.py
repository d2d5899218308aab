#!/usr/bin/env python3
"""Read cache benchmark (issue 23): what a cached GET costs presignd against one that goes to the upstream.

On 127.0.0.1 only, with bench_compare.py's helpers: the origin nginx serving a 64 KiB object (and 1 KiB) over
verified TLS (a throwaway CA), and presignd (--presignd, release build; 1 worker, no access log, pinned to CPU 0;
wrk on CPU 1). Every request is SDK-like: boto3's user-agent and a fresh `amz-sdk-invocation-id` each, so no two
heads are equal. Rows, each with a presignd started for it (same object, same bucket, same upstream):
  upstream     no [bucket.cache]: every GET signed and sent to the TLS origin (what every GET costs today)
  revalidated  [bucket.cache] with revalidate_after = "0s" (the default): every GET asks the origin with
               If-None-Match, the origin answers 304, the body goes from the slice file with sendfile
  hit          revalidate_after = "1h": the body goes from the slice file, nothing goes upstream
The cache directory is seeded before the cached rows with presignd-cache-probe (built next to presignd) under the
origin's ETag and size, since presignd does not fill the cache from misses yet; its bytes are the probe's, not the
file's (the cost of sending them is the same). For each row: requests/s, latency p50 and p99 (wrk --latency), and
presignd's CPU µs per request (utime+stime from /proc over the run / requests), medians of --reps runs, rows
interleaved. Then the ratios of the cached rows to the upstream row.

Usage: scripts/bench_cache.py [--presignd PATH] [--duration S] [--reps N] [--connections C] [--object obj64k]
"""
import argparse
import os
import re
import resource
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_compare as bc  # noqa: E402  (the TLS origin, process helpers, the SDK request script)

ROWS = ("upstream", "revalidated", "hit")
CACHE = {"revalidated": "0s", "hit": "1h"}


def write_config(workdir, tls, row):
    """presignd's configuration for one row: bucket `benchtls` on the TLS origin, with the row's cache."""
    path = os.path.join(workdir, f"cache-{row}.toml")
    cache = ""
    if row in CACHE:
        cache = (f'cache = {{ directory = "{os.path.join(workdir, "cache")}", max_size = "1GiB", '
                 f'revalidate_after = "{CACHE[row]}", x_cache_header = true }}\n')
    with open(path, "w") as f:
        f.write(f"""
[server]
listen = ["127.0.0.1:0"]
admin_listen = ""
workers = 1
access_log = false

[upstream.tls]
provider = "custom"
endpoint = "https://127.0.0.1:{tls['port']}"
region = "us-east-1"
access_key_id = "AKIABENCHMARK"
secret_access_key = "bench-secret"
ca_file = "{tls['ca']}"
idle_timeout = "{bc.IDLE_TIMEOUT}"

[[bucket]]
name = "{bc.TLS_BUCKET}"
upstream = "tls"
access = "read-only"
{cache}""")
    return path


def start(binary, config, row):
    proc = subprocess.Popen(["taskset", "-c", bc.SERVER_CPU, binary, "run", "--config", config],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 15
    while time.time() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"msg=Listening listen.address=\S+:(\d+)", line)
        if m:
            threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()
            return bc.Server(row, proc, int(m.group(1)))
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"presignd ({row}) did not start")


def origin_etag(tls, key):
    """The origin's ETag and size for `key` (a HEAD over the verified TLS port)."""
    context = ssl.create_default_context(cafile=tls["ca"])
    request = urllib.request.Request(f"https://127.0.0.1:{tls['port']}/{bc.TLS_BUCKET}/{key}", method="HEAD")
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        return answer.headers["ETag"], int(answer.headers["Content-Length"])


def wrk(port, key, duration, connections, script, pids):
    before = bc.cpu_ticks(pids)
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--timeout", "5s", "--latency",
                          "-s", script, f"http://127.0.0.1:{port}/{bc.TLS_BUCKET}/{key}"],
                         capture_output=True, text=True, timeout=duration + 30)
    cpu = bc.cpu_ticks(pids) - before
    text = out.stdout
    m = re.search(r"(\d+) requests in", text)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"wrk failed: {out.stderr.strip()} {text}")
    if re.search(r"Non-2xx or 3xx responses: (\d+)", text) or "Socket errors" in text:
        raise RuntimeError(f"wrk saw errors:\n{text}")
    requests = int(m.group(1))
    latency = dict(re.findall(r"^\s+(50|99)(?:\.0+)?%\s+(\S+)$", text, re.M))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    return {"rps": rate, "p50": bc.parse_time(latency["50"]), "p99": bc.parse_time(latency["99"]),
            "cpu_us": cpu / bc.CLK_TCK * 1e6 / requests}


X_CACHE = {"upstream": None, "revalidated": "REVALIDATED", "hit": "HIT"}


def check(port, key, size, row):
    """One GET before and after a row: 200 with the whole object, and X-Cache saying where it came from (so a
    revalidated row that turned into misses, or a hit row that asked upstream, fails instead of measuring)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{bc.TLS_BUCKET}/{key}", timeout=10) as answer:
        body = answer.read()
    if answer.status != 200 or len(body) != size or answer.headers["X-Cache"] != X_CACHE[row]:
        raise RuntimeError(f"{row}: GET answered {answer.status} with {len(body)} bytes, X-Cache "
                           f"{answer.headers['X-Cache']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presignd", default=os.path.join(bc.ROOT, ".build/release/presignd"))
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--object", default="obj64k", choices=("obj1k", "obj64k"))
    args = parser.parse_args()
    probe = os.path.join(os.path.dirname(args.presignd), "presignd-cache-probe")
    for tool in (args.presignd, probe):
        if not os.access(tool, os.X_OK):
            sys.exit(f"missing {tool}: swift build -c release")
    if not shutil.which("wrk") or not shutil.which("nginx"):
        sys.exit("wrk and nginx are needed")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    os.sched_setaffinity(0, {bc.LOAD_CPU})

    workdir = tempfile.mkdtemp(prefix="presignd-cache-bench-")
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    data_dir = tempfile.mkdtemp(prefix="presignd-cache-bench-data-", dir=shm)
    bucket = os.path.join(data_dir, "bench")
    os.makedirs(bucket)
    os.symlink("bench", os.path.join(data_dir, bc.TLS_BUCKET))
    for path in (workdir, data_dir, bucket):
        os.chmod(path, 0o755)
    for key, n in (("obj1k", 1024), ("obj64k", 65536)):
        with open(os.path.join(bucket, key), "wb") as f:
            f.write(os.urandom(n))
        os.chmod(os.path.join(bucket, key), 0o644)
    script = os.path.join(workdir, "sdk.lua")
    with open(script, "w") as f:
        f.write(bc.SDK_SCRIPT)

    tls = bc.make_tls(workdir)
    tls["port"] = bc.free_port()
    origin = bc.start_origin(workdir, data_dir, bc.free_port(), bc.free_port(), tls)
    results = {row: [] for row in ROWS}
    try:
        etag, size = origin_etag(tls, args.object)
        seeded = subprocess.run([probe, "seed", write_config(workdir, tls, "hit"), bc.TLS_BUCKET,
                                 f"{args.object}={size}@{etag}"], capture_output=True, text=True, timeout=30)
        if seeded.returncode != 0:
            raise RuntimeError(f"seeding failed: {seeded.stdout} {seeded.stderr}")
        started = time.time()
        for rep in range(args.reps):
            order = ROWS[rep % len(ROWS):] + ROWS[:rep % len(ROWS)]
            for row in order:
                server = start(args.presignd, write_config(workdir, tls, row), row)
                try:
                    check(server.port, args.object, size, row)
                    results[row].append(wrk(server.port, args.object, args.duration, args.connections, script,
                                            server.pids))
                    check(server.port, args.object, size, row)
                finally:
                    server.stop()
    finally:
        origin.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(data_dir, ignore_errors=True)

    print(f"presignd read cache, {args.object} ({size} B) GETs, SDK-like (a fresh amz-sdk-invocation-id each), "
          f"TLS upstream, wrk -c{args.connections} -d{args.duration}s, {args.reps} reps, load before "
          f"{os.getloadavg()[0]:.1f}, {time.time() - started:.0f} s")
    print(f"{'row':<12} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'CPU µs/req':>11}")
    medians = {}
    for row in ROWS:
        medians[row] = {k: bc.med([r[k] for r in results[row]]) for k in ("rps", "p50", "p99", "cpu_us")}
        m = medians[row]
        print(f"{row:<12} {m['rps']:>9.0f} {m['p50']:>8.2f} {m['p99']:>8.2f} {m['cpu_us']:>11.1f}")
    base = medians["upstream"]
    for row in ("revalidated", "hit"):
        m = medians[row]
        print(f"{row} / upstream: CPU per request {m['cpu_us'] / base['cpu_us']:.2f}x, "
              f"p50 {m['p50'] / base['p50']:.2f}x, req/s {m['rps'] / base['rps']:.2f}x")


if __name__ == "__main__":
    main()
