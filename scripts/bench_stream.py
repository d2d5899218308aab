#!/usr/bin/env python3
"""Streaming benchmark: 1 GiB GET and PUT through presignd to a local nginx upstream.

Prints throughput (MiB/s) and presignd's peak RSS (VmHWM) for one transfer alone and for
8 at once, then checks that a slow reader (curl --limit-rate) keeps RSS flat.
Everything runs on 127.0.0.1; every transfer is bounded by a curl --max-time.

Usage: scripts/bench_stream.py [--presignd PATH] [--size-mib 1024] [--parallel 8]
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "e2e"))

from harness.procfs import reset_peak_rss, status_kib  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(workdir, data_dir, port):
    conf = os.path.join(workdir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes 1;
user root;
daemon off;
pid {workdir}/nginx.pid;
error_log {workdir}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {data_dir}/.body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi;
    uwsgi_temp_path {workdir}/uwsgi;
    scgi_temp_path {workdir}/scgi;
    sendfile on;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 0;
        root {data_dir};
        location / {{
            # PUT sink: WebDAV PUT reads the whole body (into tmpfs) before answering.
            dav_methods PUT;
            create_full_put_path on;
        }}
    }}
}}
""")
    proc = subprocess.Popen(["nginx", "-c", conf, "-p", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start")


def start_presignd(binary, workdir, upstream_port):
    conf = os.path.join(workdir, "presignd.toml")
    with open(conf, "w") as f:
        f.write(f"""
[server]
listen = ["127.0.0.1:0"]
admin_listen = ""
workers = 1
access_log = false

[upstream.local]
provider = "custom"
endpoint = "http://127.0.0.1:{upstream_port}"
region = "us-east-1"
access_key_id = "AKIABENCHMARK"
secret_access_key = "bench-secret"

[[bucket]]
name = "bench"
upstream = "local"
access = "read-write"
""")
    proc = subprocess.Popen([binary, "run", "--config", conf], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"msg=Listening listen.address=(\S+)", line)
        if m:
            threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()
            return proc, m.group(1)
    raise RuntimeError("presignd did not start")


def remove_uploads(data_dir):
    bucket = os.path.join(data_dir, "bench")
    for name in os.listdir(bucket):
        if name.startswith("upload"):
            os.unlink(os.path.join(bucket, name))


def curl(args, max_time):
    out = subprocess.run(
        ["curl", "-sS", "--max-time", str(max_time), "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{size_upload} %{time_total}"] + args,
        capture_output=True, text=True)
    parts = out.stdout.split()
    if len(parts) != 4:
        raise RuntimeError(f"curl failed: {out.stderr.strip()}")
    return int(parts[0]), int(parts[1]), int(parts[2]), float(parts[3])


def run_parallel(n, make_args, max_time):
    results = [None] * n
    def work(i):
        results[i] = curl(make_args(i), max_time)
    start = time.time()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads: t.start()
    for t in threads: t.join()
    return results, time.time() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--presignd", default=os.path.join(ROOT, ".build/release/presignd"))
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--slow-seconds", type=int, default=8)
    args = ap.parse_args()
    if not os.path.exists(args.presignd):
        sys.exit(f"no presignd binary at {args.presignd} (swift build -c release)")
    size = args.size_mib * 1024 * 1024
    workdir = tempfile.mkdtemp(prefix="presignd-bench-")
    data_dir = tempfile.mkdtemp(prefix="presignd-bench-data-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.makedirs(os.path.join(data_dir, "bench"))
    for path in (workdir, data_dir, os.path.join(data_dir, "bench")):
        os.chmod(path, 0o755)  # nginx workers run unprivileged
    obj = os.path.join(data_dir, "bench", "big.bin")
    with open(obj, "wb") as f:
        f.truncate(size)  # sparse on tmpfs: the read path still copies every byte
    os.chmod(obj, 0o644)
    nginx_port = free_port()
    nginx = start_nginx(workdir, data_dir, nginx_port)
    presignd, address = start_presignd(args.presignd, workdir, nginx_port)
    pid = presignd.pid
    max_time = 600
    rows = []
    try:
        url = f"http://{address}/bench/big.bin"
        # Warm-up.
        curl(["-r", "0-1048575", url], 30)
        baseline = status_kib(pid, "VmRSS")

        reset_peak_rss(pid)
        code, down, _, secs = curl([url], max_time)
        assert code == 200 and down == size, (code, down)
        rows.append(("GET 1x", size / secs / 2**20, status_kib(pid, "VmHWM")))

        reset_peak_rss(pid)
        res, secs = run_parallel(args.parallel, lambda i: [url], max_time)
        assert all(r[0] == 200 and r[1] == size for r in res), res
        rows.append((f"GET {args.parallel}x", args.parallel * size / secs / 2**20, status_kib(pid, "VmHWM")))

        reset_peak_rss(pid)
        code, _, up, secs = curl(["-T", obj, f"http://{address}/bench/upload.bin"], max_time)
        assert code in (200, 201, 204) and up == size, (code, up)
        rows.append(("PUT 1x", size / secs / 2**20, status_kib(pid, "VmHWM")))
        remove_uploads(data_dir)

        reset_peak_rss(pid)
        res, secs = run_parallel(args.parallel, lambda i: ["-T", obj, f"http://{address}/bench/upload{i}.bin"], max_time)
        assert all(r[0] in (200, 201, 204) and r[2] == size for r in res), res
        rows.append((f"PUT {args.parallel}x", args.parallel * size / secs / 2**20, status_kib(pid, "VmHWM")))
        remove_uploads(data_dir)

        # Slow reader: RSS must stay flat while the upstream could send far faster.
        reset_peak_rss(pid)
        slow = subprocess.Popen(["curl", "-sS", "--limit-rate", "1M", "--max-time", str(args.slow_seconds), "-o", "/dev/null", url],
                                stderr=subprocess.DEVNULL)
        samples = []
        for _ in range(args.slow_seconds * 2):
            time.sleep(0.5)
            samples.append(status_kib(pid, "VmRSS"))
        slow.wait()
        rows.append(("GET slow 1 MiB/s", None, status_kib(pid, "VmHWM")))

        print(f"presignd streaming benchmark: {args.size_mib} MiB objects, upstream nginx on 127.0.0.1, 1 worker")
        print(f"idle RSS after warm-up: {baseline/1024:.1f} MiB")
        print(f"{'case':<20} {'MiB/s':>10} {'peak RSS MiB':>14}")
        for name, rate, hwm in rows:
            print(f"{name:<20} {('%.0f' % rate) if rate else '-':>10} {hwm/1024:>14.1f}")
        print(f"slow reader RSS samples (MiB): min {min(samples)/1024:.1f} max {max(samples)/1024:.1f}")
        worst = max(r[2] for r in rows) / 1024
        verdict = "PASS" if worst <= 48 else "FAIL"
        print(f"peak RSS target <= 48 MiB: worst {worst:.1f} MiB: {verdict}")
        return 0 if verdict == "PASS" else 1
    finally:
        presignd.send_signal(signal.SIGTERM)
        nginx.send_signal(signal.SIGQUIT)
        try:
            presignd.wait(timeout=10)
            nginx.wait(timeout=10)
        except subprocess.TimeoutExpired:
            presignd.kill(); nginx.kill()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
