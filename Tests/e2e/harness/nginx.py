"""NginxTLSFront: nginx terminating TLS in front of moto, as a byte-faithful pass-through reverse proxy.

One nginx, three server blocks on three loopback ports:
- `good`:       certificate from the trusted test CA for 127.0.0.1 / localhost
- `untrusted`:  certificate from a CA nobody trusts
- `wrong_name`: certificate from the trusted CA, but for `wrong.example`

Each block writes its own access log (with the Authorization header, so tests can see which signatures
presignd sent and assert that a TLS-rejected front never saw a request). Everything nginx writes lives in the
test's directory; nginx runs in the foreground as our subprocess.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from .net import free_port, port_accepts, wait_until
from .process import ManagedProcess
from .tls import CertPair, TestCA

FRONTS = ("good", "untrusted", "wrong_name")

_CONF = """\
daemon off;
master_process on;
worker_processes 1;
{user}
pid {dir}/nginx.pid;
error_log {dir}/error.log info;

events {{
    worker_connections 512;
}}

http {{
    client_body_temp_path {dir}/tmp/client_body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;

    log_format e2e '$request_method "$request_uri" $status auth="$http_authorization" '
                   'sha256="$http_x_amz_content_sha256" req_len=$request_length sent=$bytes_sent';
    access_log off;

    # Forward the request target byte for byte (docs/TESTING.md).
    merge_slashes off;
    client_max_body_size 0;
    proxy_request_buffering off;
    proxy_buffering off;
    proxy_http_version 1.1;
    proxy_set_header Host $http_host;
    proxy_set_header Connection "";
    proxy_read_timeout 120s;
    proxy_send_timeout 120s;

    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:e2e:1m;

{servers}
}}
"""

_SERVER = """\
    server {{
        listen {host}:{port} ssl;
        server_name _;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        access_log {dir}/access-{name}.log e2e;
        location / {{
            proxy_pass http://{upstream};
        }}
    }}
"""


class NginxTLSFront:
    def __init__(self, directory: str, ca: TestCA, upstream_host: str, upstream_port: int,
                 host: str = "127.0.0.1") -> None:
        self.dir = directory
        self.ca = ca
        self.host = host
        self.upstream = f"{upstream_host}:{upstream_port}"
        self.ports: dict[str, int] = {}
        self.proc: ManagedProcess | None = None
        os.makedirs(os.path.join(directory, "tmp"), exist_ok=True)

    def endpoint(self, front: str = "good") -> str:
        return f"https://{self.host}:{self.ports[front]}"

    def access_log_path(self, front: str) -> str:
        return os.path.join(self.dir, f"access-{front}.log")

    def access_log(self, front: str) -> list[str]:
        path = self.access_log_path(front)
        if not os.path.exists(path):
            return []
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()

    def error_log(self) -> str:
        path = os.path.join(self.dir, "error.log")
        if not os.path.exists(path):
            return ""
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def _certs(self) -> dict[str, CertPair]:
        return {"good": self.ca.good, "untrusted": self.ca.untrusted, "wrong_name": self.ca.wrong_name}

    def write_config(self) -> str:
        certs = self._certs()
        servers = "".join(
            _SERVER.format(host=self.host, port=self.ports[name], cert=certs[name].cert, key=certs[name].key,
                           dir=self.dir, name=name, upstream=self.upstream)
            for name in FRONTS
        )
        # As root, workers would drop to `nobody`, who cannot read pytest's 0700 tmp dirs.
        user = "user root root;" if os.geteuid() == 0 else ""
        path = os.path.join(self.dir, "nginx.conf")
        with open(path, "w") as f:
            f.write(_CONF.format(user=user, dir=self.dir, servers=servers))
        return path

    def start(self, timeout: float = 15.0, attempts: int = 3) -> "NginxTLSFront":
        exe = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(exe):
            raise RuntimeError("nginx not found (apt-get install nginx)")
        last_error: Exception | None = None
        for _ in range(attempts):  # a picked port can be taken before nginx binds it: retry with new ones
            self.ports = {name: free_port(self.host) for name in FRONTS}
            conf = self.write_config()
            base = [exe, "-p", self.dir, "-c", conf, "-e", os.path.join(self.dir, "error.log")]
            check = subprocess.run([*base, "-t"], capture_output=True, text=True, timeout=30)
            if check.returncode != 0:
                raise RuntimeError(f"nginx -t failed:\n{check.stderr}")
            self.proc = ManagedProcess("nginx", base, log_path=os.path.join(self.dir, "nginx.stderr.log"))
            try:
                wait_until(
                    lambda: all(port_accepts(self.host, p) for p in self.ports.values()),
                    timeout,
                    "nginx TLS front",
                    alive=self.proc.is_running,
                    details=lambda: self.proc.log_tail() + self.error_log()[-3000:],
                )
                return self
            except (RuntimeError, TimeoutError) as e:
                last_error = e
                self.proc.stop()
                self.proc = None
        raise RuntimeError(f"nginx did not start: {last_error}")

    def stop(self) -> None:
        if self.proc:
            self.proc.stop(timeout=10)  # SIGTERM: fast shutdown
            self.proc = None
