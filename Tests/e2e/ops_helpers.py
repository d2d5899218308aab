"""Helpers for the operations tests (test_ops_*.py): a plain-HTTP nginx upstream serving files from tmpfs (a big
sparse object for in-flight transfers), a presignd instance pointed at it, a paced HTTP download, and a
Prometheus text parser.

nginx serves `<root>/<bucket>/<key>` for GET and ignores the signature, which is what the lifecycle tests need:
bytes that stream for a while. Signature checks are the other tests' business (moto, the recorder).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

from harness.net import free_port, port_accepts, wait_until
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.process import ManagedProcess

# The in-flight object: 1 GiB unless PRESIGND_OPS_BIG_MIB says otherwise (a sparse file on tmpfs: no RAM used).
BIG_MIB = int(os.environ.get("PRESIGND_OPS_BIG_MIB", "1024"))
MARK_EVERY = 64 * 1024 * 1024


def _tmpfs_dir() -> str:
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    path = tempfile.mkdtemp(prefix="presignd-ops-", dir=base)
    os.chmod(path, 0o755)  # nginx workers run unprivileged
    return path


class StaticNginx:
    """nginx on 127.0.0.1:PORT serving `root` over plain HTTP with keep-alive (an S3 stand-in for GETs)."""

    def __init__(self) -> None:
        self.root = _tmpfs_dir()
        self.work = tempfile.mkdtemp(prefix="presignd-ops-nginx-")
        self.port = free_port()
        self.proc: ManagedProcess | None = None

    def put(self, bucket: str, key: str, body: bytes) -> None:
        path = os.path.join(self.root, bucket, key)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        with open(path, "wb") as f:
            f.write(body)
        os.chmod(path, 0o644)

    def put_big(self, bucket: str, key: str, size: int) -> str:
        """A sparse file of `size` bytes with a 32-byte marker every 64 MiB; returns its SHA-256."""
        path = os.path.join(self.root, bucket, key)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        with open(path, "wb") as f:
            f.truncate(size)
            for offset in range(0, size - 32, MARK_EVERY):
                f.seek(offset)
                f.write(hashlib.sha256(str(offset).encode()).digest())
        os.chmod(path, 0o644)
        return sha256_file(path)

    def start(self) -> "StaticNginx":
        conf = os.path.join(self.work, "nginx.conf")
        w = self.work
        with open(conf, "w") as f:
            f.write(f"""
worker_processes 1;
daemon off;
pid {w}/nginx.pid;
error_log {w}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {w}/access.log;
    client_body_temp_path {w}/body;
    proxy_temp_path {w}/proxy;
    fastcgi_temp_path {w}/fastcgi;
    uwsgi_temp_path {w}/uwsgi;
    scgi_temp_path {w}/scgi;
    sendfile on;
    keepalive_requests 10000;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.root};
    }}
}}
""")
        self.proc = ManagedProcess("ops-nginx", ["nginx", "-c", conf, "-p", w],
                                   log_path=os.path.join(w, "nginx.out"))
        wait_until(lambda: port_accepts("127.0.0.1", self.port), 10, "nginx", alive=self.proc.is_running)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.work, ignore_errors=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def nginx_upstream(nginx: StaticNginx, name: str = "static") -> Upstream:
    return Upstream(name=name, endpoint=nginx.endpoint, access_key_id="AKIDOPSTESTEXAMPLE",
                    secret_access_key="ops-test-secret-never-logged")


def start_presignd(binary: str, directory: str, upstreams: list[Upstream], buckets: list[Bucket],
                   env_extra: dict[str, str] | None = None, env_drop: tuple[str, ...] = (), **config) -> Presignd:
    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    env.update(env_extra or {})
    daemon = Presignd(binary, PresigndConfig(upstreams=upstreams, buckets=buckets, **config), directory, env=env)
    return daemon.start()


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class PacedDownload:
    """A GET whose body the test reads when it wants: start, read some, act on the daemon, finish."""

    def __init__(self, host: str, port: int, path: str, timeout: float = 60) -> None:
        self.conn = http.client.HTTPConnection(host, port, timeout=timeout)
        self.conn.request("GET", path)
        self.response = self.conn.getresponse()
        self.digest = hashlib.sha256()
        self.received = 0

    def read(self, count: int) -> None:
        while count > 0:
            chunk = self.response.read(min(count, 1 << 20))
            if not chunk:
                break
            self.digest.update(chunk)
            self.received += len(chunk)
            count -= len(chunk)

    def finish(self) -> tuple[int, str]:
        while chunk := self.response.read(4 << 20):
            self.digest.update(chunk)
            self.received += len(chunk)
        self.conn.close()
        return self.received, self.digest.hexdigest()


def host_port(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host.strip("[]"), int(port)


def connection_refused(address: str) -> bool:
    host, port = host_port(address)
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text: str) -> dict[tuple[str, frozenset], float]:
    """Prometheus text → {(name, frozenset(labels.items())): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        assert m, f"unparsable metrics line: {line!r}"
        labels = frozenset(_LABEL.findall(m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def metric(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def promtool_check(text: str) -> subprocess.CompletedProcess:
    return subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)


def read_until_cut(sock: socket.socket, seconds: float = 5) -> tuple[bool, int]:
    """Reads what `sock` receives for at most `seconds`: whether the server ended the connection (FIN or reset)
    within them, and how many bytes arrived."""
    received, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(1 << 20)
        except ConnectionResetError:
            return True, received
        if not chunk:
            return True, received
        received += len(chunk)
    return False, received
