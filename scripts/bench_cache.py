#!/usr/bin/env python3
"""Read cache benchmark (issue 23): what a cached GET costs presignd against one that goes to the upstream.

On 127.0.0.1 only, with bench_compare.py's helpers: the origin nginx serving a 64 KiB object (and 1 KiB) over
verified TLS (a throwaway CA), and presignd (--presignd, release build; 1 worker, no access log, pinned to CPU 0;
wrk on CPU 1). Every request is SDK-like: boto3's user-agent and a fresh `amz-sdk-invocation-id` each, so no two
heads are equal. Rows, each with a server started for it (same object, same bucket, same upstream):
  upstream     no [bucket.cache]: every GET signed and sent to the TLS origin (what every GET costs today)
  miss         [bucket.cache] in its own directory with max_size = 64MiB (so eviction runs): every GET a new key
               (benchtls/same-<object>/<run>-<n>, which the origin answers with <object>), so every GET misses,
               goes upstream and fills the cache (X-Cache: MISS)
  revalidated  [bucket.cache] with revalidate_after = "0s" (the default): every GET asks the origin with
               If-None-Match, the origin answers 304, the body goes from the slice file with sendfile
  hit          revalidate_after = "1h": the body goes from the slice file, nothing goes upstream
  nginx        a plain nginx (1 worker, pinned like presignd, sendfile on, access_log off) serving the same file
               from disk on loopback: what a static file server does with the same requests
The cache directory of the revalidated and hit rows is filled before them by one GET through presignd (X-Cache:
MISS); presignd's admin /metrics is then polled (bounded) until presignd_cache_size_bytes of the directory equals
the object's size (the slices are written off the event loop), and a second GET must say X-Cache: HIT. Before and
after each row one GET checks the status, the length and the X-Cache the row expects (the miss row: a new key says
MISS, and is a HIT once its slices are written). For each row: requests/s, latency p50 and p99 (wrk --latency),
and the server's CPU µs per request (utime+stime from /proc over the run / requests), medians of --reps runs, rows
interleaved. Then the ratios to the targets of issue 23: miss >= 0.9x upstream req/s (obj64k) and hit >= 0.8x
nginx req/s (obj1k), and the cached rows against upstream. Exit status 1 when a target fails; a precondition that
fails (a wrong X-Cache, a fill that does not finish) stops the run with a traceback.

Usage: scripts/bench_cache.py [--presignd PATH] [--duration S] [--reps N] [--connections C] [--object obj64k]
                              [--rows upstream,miss,revalidated,hit,nginx]
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

ROWS = ("upstream", "miss", "revalidated", "hit", "nginx")
CACHE = {"miss": "1h", "revalidated": "0s", "hit": "1h", "large": "1h"}  # "large": bench_cache_large.py's
MAX_SIZE = {"miss": "64MiB", "revalidated": "1GiB", "hit": "1GiB", "large": "4GiB"}
X_CACHE = {"upstream": None, "miss": "MISS", "revalidated": "REVALIDATED", "hit": "HIT", "nginx": None}
TARGETS = (("miss", "upstream", 0.9, "obj64k"), ("hit", "nginx", 0.8, "obj1k"))  # row req/s >= factor x base
FILL_TIMEOUT = 10.0

# The SDK-like requests, each for a new key: wrk's path (benchtls/same-<object>/<run>-) and a counter.
MISS_SCRIPT = bc.SDK_SCRIPT.replace("  return wrk.format()\n", "  return wrk.format(nil, wrk.path .. n)\n")
assert MISS_SCRIPT != bc.SDK_SCRIPT


def cache_dir(workdir, row):
    return os.path.join(workdir, "cache-miss" if row == "miss" else "cache")


def write_config(workdir, tls, row, admin=False):
    """presignd's configuration for one row: bucket `benchtls` on the TLS origin, with the row's cache."""
    path = os.path.join(workdir, f"cache-{row}{'-admin' if admin else ''}.toml")
    cache = ""
    if row in CACHE:
        cache = (f'cache = {{ directory = "{cache_dir(workdir, row)}", max_size = "{MAX_SIZE[row]}", '
                 f'revalidate_after = "{CACHE[row]}", x_cache_header = true }}\n')
    with open(path, "w") as f:
        f.write(f"""
[server]
listen = ["127.0.0.1:0"]
admin_listen = "{'127.0.0.1:0' if admin else ''}"
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


def start(binary, config, row, admin=False):
    """presignd pinned to the server CPU; its port (and with admin, its admin port as server.admin_port)."""
    proc = subprocess.Popen(["taskset", "-c", bc.SERVER_CPU, binary, "run", "--config", config],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 15
    port = admin_port = None
    lines = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        m = re.search(r"msg=Listening listen.address=\S+:(\d+)", line)
        port = int(m.group(1)) if m else port
        m = re.search(r'msg="Admin listening" listen.address=\S+:(\d+)', line)
        admin_port = int(m.group(1)) if m else admin_port
        if port and (admin_port or not admin):
            threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()
            server = bc.Server(row, proc, port)
            server.admin_port = admin_port
            return server
        if not line and proc.poll() is not None:
            break
    proc.kill()
    proc.wait()
    raise RuntimeError(f"presignd ({row}) did not start: {''.join(lines[-5:]).strip()}")


def start_static(workdir, data_dir):
    """A plain nginx serving the data directory from disk (the same URL paths as presignd's bucket)."""
    port = bc.free_port()
    text = f"""
    sendfile on;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        root {data_dir};
    }}"""
    return bc.start_nginx("static", workdir, {"text": text}, port)


def origin_size(tls, key):
    """The origin's size for `key` (a HEAD over the verified TLS port)."""
    context = ssl.create_default_context(cafile=tls["ca"])
    request = urllib.request.Request(f"https://127.0.0.1:{tls['port']}/{bc.TLS_BUCKET}/{key}", method="HEAD")
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        return int(answer.headers["Content-Length"])


def wrk(port, path, duration, connections, script, pids):
    before = bc.cpu_ticks(pids)
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--timeout", "5s", "--latency",
                          "-s", script, f"http://127.0.0.1:{port}/{bc.TLS_BUCKET}/{path}"],
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


def get(port, path, size, expected, row):
    """One GET: 200 with the whole object and X-Cache `expected`, or the run stops."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{bc.TLS_BUCKET}/{path}", timeout=10) as answer:
        body = answer.read()
    if answer.status != 200 or len(body) != size or answer.headers["X-Cache"] != expected:
        raise RuntimeError(f"{row}: GET {path} answered {answer.status} with {len(body)} bytes, X-Cache "
                           f"{answer.headers['X-Cache']} (expected {expected})")


def cache_size(admin_port, directory):
    """presignd_cache_size_bytes{directory=...} from the admin /metrics (0 when absent)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    pattern = r'^presignd_cache_size_bytes\{directory="' + re.escape(directory) + r'"[^}]*\}\s+(\S+)$'
    m = re.search(pattern, text, re.M)
    return int(float(m.group(1))) if m else 0


def wait_filled(admin_port, directory, size, timeout=FILL_TIMEOUT):
    """Polls the cache size until it reaches `size` (the slices are written off the event loop); the seconds it
    took, or the run stops."""
    started = time.time()
    while time.time() - started < timeout:
        if cache_size(admin_port, directory) >= size:
            return time.time() - started
        time.sleep(0.02)
    raise RuntimeError(f"the cache of {directory} holds {cache_size(admin_port, directory)} bytes after "
                       f"{timeout:.0f} s, not {size}")


def fill(binary, workdir, tls, key, size):
    """Fills the hit/revalidated rows' cache with one GET through presignd (MISS); a HIT once it is written."""
    server = start(binary, write_config(workdir, tls, "hit", admin=True), "fill", admin=True)
    try:
        get(server.port, key, size, "MISS", "fill")
        took = wait_filled(server.admin_port, cache_dir(workdir, "hit"), size)
        get(server.port, key, size, "HIT", "fill")
        return took
    finally:
        server.stop()


def check(server, row, key, size, tag):
    """One GET before and after a row: 200 with the whole object, and X-Cache saying where it came from (so a
    revalidated row that turned into misses, or a hit row that asked upstream, fails instead of measuring). The miss
    row's GET is of a new key, and that key must be a HIT once its slices are written (the fill works)."""
    if row != "miss":
        get(server.port, key, size, X_CACHE[row], row)
        return
    path = f"same-{key}/check-{tag}"
    get(server.port, path, size, "MISS", row)
    deadline = time.time() + FILL_TIMEOUT
    while True:  # bounded: the deadline
        try:
            get(server.port, path, size, "HIT", row)
            return
        except RuntimeError:
            if time.time() > deadline:
                raise
        time.sleep(0.02)


def run_row(args, row, workdir, tls, data_dir, size, scripts, tag):
    if row == "nginx":
        server = start_static(workdir, data_dir)
    else:
        server = start(args.presignd, write_config(workdir, tls, row), row)
    try:
        check(server, row, args.object, size, f"{tag}a")
        path = f"same-{args.object}/{tag}-" if row == "miss" else args.object
        result = wrk(server.port, path, args.duration, args.connections, scripts[row == "miss"], server.pids)
        check(server, row, args.object, size, f"{tag}b")
        return result
    finally:
        server.stop()


def report(args, results, size, seconds, fill_seconds):
    """Prints the rows and the ratios; True when a target stated for this object fails."""
    print(f"presignd read cache, {args.object} ({size} B) GETs, SDK-like (a fresh amz-sdk-invocation-id each), "
          f"TLS upstream, wrk -c{args.connections} -d{args.duration}s, {args.reps} reps, load "
          f"{os.getloadavg()[0]:.1f}, {seconds:.0f} s" +
          (f"; cache filled by one GET, slices written {fill_seconds * 1000:.0f} ms after it" if fill_seconds
           else ""))
    print(f"{'row':<12} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'CPU µs/req':>11}  (req/s of each rep)")
    medians = {}
    for row in args.rows:
        medians[row] = {k: bc.med([r[k] for r in results[row]]) for k in ("rps", "p50", "p99", "cpu_us")}
        m = medians[row]
        reps = " ".join(f"{r['rps']:.0f}" for r in results[row])
        print(f"{row:<12} {m['rps']:>9.0f} {m['p50']:>8.2f} {m['p99']:>8.2f} {m['cpu_us']:>11.1f}  ({reps})")
    if "upstream" in medians:
        base = medians["upstream"]
        for row in ("miss", "revalidated", "hit", "nginx"):
            if row in medians:
                m = medians[row]
                print(f"{row} / upstream: CPU per request {m['cpu_us'] / base['cpu_us']:.2f}x, "
                      f"p50 {m['p50'] / base['p50']:.2f}x, req/s {m['rps'] / base['rps']:.2f}x")
    failed = False
    for row, base, factor, obj in TARGETS:
        if row in medians and base in medians:
            ratio = medians[row]["rps"] / medians[base]["rps"]
            cpu = medians[row]["cpu_us"] / medians[base]["cpu_us"]
            stated = obj == args.object
            verdict = ("PASS" if ratio >= factor else "FAIL") if stated else f"(the target is stated for {obj})"
            print(f"target {row} req/s >= {factor}x {base} req/s: {ratio:.2f}x {verdict}; CPU µs/req {cpu:.2f}x")
            failed |= stated and ratio < factor
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presignd", default=os.path.join(bc.ROOT, ".build/release/presignd"))
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--object", default="obj64k", choices=("obj1k", "obj64k"))
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated, of " + ",".join(ROWS))
    args = parser.parse_args()
    args.rows = tuple(args.rows.split(","))
    if not set(args.rows) <= set(ROWS):
        sys.exit(f"--rows: of {','.join(ROWS)}")
    if not os.access(args.presignd, os.X_OK):
        sys.exit(f"missing {args.presignd}: swift build -c release")
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
    scripts = []
    for name, text in (("sdk.lua", bc.SDK_SCRIPT), ("sdk-miss.lua", MISS_SCRIPT)):
        scripts.append(os.path.join(workdir, name))
        with open(scripts[-1], "w") as f:
            f.write(text)

    tls = bc.make_tls(workdir)
    tls["port"] = bc.free_port()
    origin = bc.start_origin(workdir, data_dir, bc.free_port(), bc.free_port(), tls)
    results = {row: [] for row in args.rows}
    fill_seconds = 0.0
    try:
        size = origin_size(tls, args.object)
        if {"revalidated", "hit"} & set(args.rows):
            fill_seconds = fill(args.presignd, workdir, tls, args.object, size)
        started = time.time()
        for rep in range(args.reps):
            order = args.rows[rep % len(args.rows):] + args.rows[:rep % len(args.rows)]
            for row in order:
                results[row].append(run_row(args, row, workdir, tls, data_dir, size, scripts, f"r{rep}"))
    finally:
        origin.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(data_dir, ignore_errors=True)
    sys.exit(1 if report(args, results, size, time.time() - started, fill_seconds) else 0)


if __name__ == "__main__":
    main()
