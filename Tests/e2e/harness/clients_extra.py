"""More clients and helpers for the client-compatibility suite (issue 6): s5cmd, rclone, raw-socket uploads
(aws-chunked with a trailer, Expect: 100-continue), shared big data files, a plain-HTTP nginx upstream serving a
sparse file, and a per-client count of the operations the suite ran.

Facts this relies on (docs/TESTING.md): rclone 1.60 fails with `LoadCustomCABundleError` while `AWS_CA_BUNDLE`
is set, so it runs without it; sync tools compare second-resolution mtimes, so test files get mtimes in the past.
"""

from __future__ import annotations

import atexit
import base64
import collections
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass

from .clients import client_env
from .net import free_port, port_accepts, wait_until
from .process import ManagedProcess

# -- operation counts ---------------------------------------------------------------------------------------------

OP_COUNTS: collections.Counter = collections.Counter()
_COUNT_LOCK = threading.Lock()


def count_op(client: str, n: int = 1) -> None:
    with _COUNT_LOCK:
        OP_COUNTS[client] += n


def _report_counts() -> None:
    if not OP_COUNTS:
        return
    text = json.dumps(dict(sorted(OP_COUNTS.items())))
    path = os.environ.get("PRESIGND_E2E_CLIENT_OPS")
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    print(f"\nclient operations run through presignd: {text}", file=sys.stderr)


atexit.register(_report_counts)


def count_boto3_calls(client, name: str = "boto3"):
    """Count every API call a boto3 client makes (one per HTTP request sent, retries are off)."""
    client.meta.events.register("before-send.s3", lambda **kw: count_op(name))
    return client


def client_versions() -> dict[str, str]:
    def first_line(argv: list[str]) -> str:
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=client_env())
            return (out.stdout or out.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "missing"

    import boto3
    import botocore

    return {
        "awscli": first_line(["aws", "--version"]),
        "boto3": f"boto3 {boto3.__version__} botocore {botocore.__version__}",
        "s5cmd": first_line(["s5cmd", "version"]),
        "rclone": first_line(["rclone", "version"]),
        "curl": first_line(["curl", "--version"]),
    }


# -- data files -----------------------------------------------------------------------------------------------------

_DATA_DIR = tempfile.mkdtemp(prefix="presignd-clients-data-")
atexit.register(shutil.rmtree, _DATA_DIR, True)
_DATA_LOCK = threading.Lock()
_DATA: dict[int, tuple[str, str]] = {}


def random_file(size: int) -> tuple[str, str]:
    """A file of `size` random bytes, written once per session; returns (path, sha256 hex). Do not modify it."""
    with _DATA_LOCK:
        if size not in _DATA:
            path = os.path.join(_DATA_DIR, f"random-{size}.bin")
            digest = hashlib.sha256()
            with open(path, "wb") as f:
                left = size
                while left:
                    block = os.urandom(min(left, 4 << 20))
                    digest.update(block)
                    f.write(block)
                    left -= len(block)
            old = time.time() - 3600
            os.utime(path, (old, old))
            _DATA[size] = (path, digest.hexdigest())
        return _DATA[size]


def write_tree(root: str, files: dict[str, bytes], age_seconds: int = 3600) -> None:
    """Write relative-path → bytes under root, with mtimes in the past (sync tools compare them)."""
    old = time.time() - age_seconds
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        os.utime(path, (old, old))


def read_tree(root: str) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# -- s5cmd and rclone -----------------------------------------------------------------------------------------------


def _check(argv: list[str], proc: subprocess.CompletedProcess) -> None:
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(argv)} exited {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
        )


class S5cmd:
    """`s5cmd --no-sign-request --endpoint-url URL` (path style is its default for non-AWS endpoints)."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.env = client_env({"AWS_REGION": "us-east-1"})

    def run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        argv = ["s5cmd", "--no-sign-request", "--endpoint-url", self.endpoint, *args]
        count_op("s5cmd")
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check:
            _check(argv, proc)
        return proc


class Rclone:
    """rclone with an anonymous S3 remote `presignd:` (provider Other, no keys, path style)."""

    def __init__(self, directory: str, endpoint: str) -> None:
        os.makedirs(directory, exist_ok=True)
        self.config_file = os.path.join(directory, "rclone.conf")
        with open(self.config_file, "w") as f:
            f.write("[presignd]\ntype = s3\nprovider = Other\nenv_auth = false\n"
                    f"endpoint = {endpoint}\nforce_path_style = true\nregion = us-east-1\n"
                    # rclone creates the bucket before an upload unless told not to, and CreateBucket is
                    # bucket administration, which presignd's read-write access does not grant (issue 19).
                    "no_check_bucket = true\n")
        env = client_env({"RCLONE_CONFIG": self.config_file})
        env.pop("AWS_CA_BUNDLE", None)  # rclone 1.60: LoadCustomCABundleError (docs/TESTING.md)
        self.env = env

    def run(self, *args: str, check: bool = True, timeout: float = 120,
            input_text: str | None = None) -> subprocess.CompletedProcess:
        argv = ["rclone", "--config", self.config_file, "--retries", "1", "--low-level-retries", "1", *args]
        count_op("rclone")
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout, input=input_text)
        if check:
            _check(argv, proc)
        return proc


# -- raw uploads ----------------------------------------------------------------------------------------------------


def crc32_b64(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def md5_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def aws_chunked(data: bytes, chunk_size: int = 64 * 1024, trailer: str | None = None) -> bytes:
    """Unsigned aws-chunked encoding (SIGV4-S3-RULES §5.2) with an `x-amz-checksum-crc32` trailer."""
    out = bytearray()
    for i in range(0, len(data), chunk_size):
        chunk = data[i:i + chunk_size]
        out += b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    out += b"0\r\n"
    out += f"x-amz-checksum-crc32:{trailer if trailer is not None else crc32_b64(data)}\r\n".encode()
    out += b"\r\n"
    return bytes(out)


def http_chunked(data: bytes, chunk_size: int = 50_000) -> bytes:
    out = bytearray()
    for i in range(0, len(data), chunk_size):
        chunk = data[i:i + chunk_size]
        out += b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    return bytes(out + b"0\r\n\r\n")


def aws_chunked_headers(data: bytes) -> list[tuple[str, str]]:
    return [
        ("Content-Encoding", "aws-chunked"),
        ("x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"),
        ("x-amz-decoded-content-length", str(len(data))),
        ("x-amz-trailer", "x-amz-checksum-crc32"),
        ("x-amz-sdk-checksum-algorithm", "CRC32"),
    ]


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    interim: list[int]  # 1xx statuses received before the final one

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def raw_request(endpoint: str, method: str, target: str, headers: list[tuple[str, str]], body: bytes = b"",
                wait_for_continue: bool = False, timeout: float = 60) -> RawResponse:
    """Send exactly these bytes over a fresh socket (no header added but Host), read one response.

    `body` goes on the wire as given (already framed: plain, chunked or aws-chunked). With
    `wait_for_continue`, the body is only sent after a `100 Continue` (the test fails without one).
    """
    hostport = endpoint.split("://", 1)[1]
    host, port = hostport.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=timeout)
    try:
        head = f"{method} {target} HTTP/1.1\r\nHost: {hostport}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
        sock.sendall(head.encode("utf-8"))
        interim: list[int] = []
        reader = sock.makefile("rb")
        if wait_for_continue:
            status_line = reader.readline()
            if not status_line.startswith(b"HTTP/1.1 100"):
                raise AssertionError(f"expected 100 Continue before sending the body, got {status_line!r}")
            while reader.readline() not in (b"\r\n", b"\n", b""):
                pass
            interim.append(100)
        sock.sendall(body)
        response = http.client.HTTPResponse(sock, method=method)
        response.fp = reader  # keep reading from the same buffered file
        while True:
            response.begin()
            if response.status >= 200:
                break
            interim.append(response.status)
            response = http.client.HTTPResponse(sock, method=method)
            response.fp = reader
        data = response.read()
        return RawResponse(response.status, {k.lower(): v for k, v in response.getheaders()}, data, interim)
    finally:
        sock.close()


# -- plain-HTTP nginx serving big sparse files ---------------------------------------------------------------------

_NGINX_STATIC = """\
daemon off;
worker_processes 1;
{user}
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/tmp-body;
    proxy_temp_path {dir}/tmp-proxy;
    fastcgi_temp_path {dir}/tmp-fastcgi;
    uwsgi_temp_path {dir}/tmp-uwsgi;
    scgi_temp_path {dir}/tmp-scgi;
    sendfile on;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ }}
    }}
}}
"""


class StaticNginx:
    """nginx on plain HTTP serving `root/<bucket>/<key>` for GET/HEAD (ignores the Authorization header)."""

    def __init__(self, directory: str, root: str) -> None:
        self.dir = directory
        self.root = root
        self.port = 0
        self.proc: ManagedProcess | None = None
        os.makedirs(directory, exist_ok=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "StaticNginx":
        exe = shutil.which("nginx") or "/usr/sbin/nginx"
        self.port = free_port("127.0.0.1")
        conf = os.path.join(self.dir, "nginx.conf")
        user = "user root root;" if os.geteuid() == 0 else ""
        with open(conf, "w") as f:
            f.write(_NGINX_STATIC.format(user=user, dir=self.dir, port=self.port, root=self.root))
        self.proc = ManagedProcess("nginx-static", [exe, "-p", self.dir, "-c", conf],
                                   log_path=os.path.join(self.dir, "nginx.stderr.log"))
        wait_until(lambda: port_accepts("127.0.0.1", self.port), 15, "static nginx", alive=self.proc.is_running)
        return self

    def stop(self) -> None:
        if self.proc:
            self.proc.stop(timeout=10)
            self.proc = None

    def access_log(self) -> str:
        path = os.path.join(self.dir, "access.log")
        return open(path, errors="replace").read() if os.path.exists(path) else ""


def patterned_file(path: str, size: int, block: int = 1 << 20) -> str:
    """A big file cheap to write but position-dependent: one random block repeated, each copy stamped with its
    index (a dropped, repeated or reordered block changes the hash). Returns its sha256 hex."""
    seed = os.urandom(block)
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for i in range(0, size, block):
            chunk = (i // block).to_bytes(8, "big") + seed[8:]
            chunk = chunk[:min(block, size - i)]
            digest.update(chunk)
            f.write(chunk)
    return digest.hexdigest()


def curl_sha256(url: str, *args: str, timeout: float = 120) -> tuple[int, str, int]:
    """GET with curl, hashing the body as it streams (never held in memory). Returns (status, sha256, bytes)."""
    head = tempfile.NamedTemporaryFile(prefix="curl-head-", delete=False)
    head.close()
    argv = ["curl", "-sS", "--noproxy", "*", "--max-time", str(int(timeout)), "-D", head.name, "-o", "-", *args, url]
    count_op("curl")
    digest, total = hashlib.sha256(), 0
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=client_env()) as proc:
        assert proc.stdout is not None
        for block in iter(lambda: proc.stdout.read(1 << 20), b""):
            digest.update(block)
            total += len(block)
        proc.wait(timeout=timeout + 10)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    status_lines = [ln for ln in open(head.name, "rb").read().decode("latin-1").splitlines() if ln.startswith("HTTP/")]
    os.unlink(head.name)
    if proc.returncode != 0:
        raise AssertionError(f"curl exited {proc.returncode}: {err}")
    return int(status_lines[-1].split()[1]), digest.hexdigest(), total
