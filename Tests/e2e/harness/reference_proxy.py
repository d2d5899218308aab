#!/usr/bin/env python3
"""A slow, simple Python stand-in for presignd, used only to validate the end-to-end tests themselves before the
daemon exists (`PRESIGND_BIN=Tests/e2e/harness/reference_proxy.py`). Not the product, not a spec: where it and
the contract disagree, the contract (and the tests) win.

`run --config FILE`: path-style routing by mount, read-only policy, canonical wire path and query, client
credentials stripped, SigV4 with botocore (UNSIGNED-PAYLOAD unless the client sent a hex payload hash), verified
TLS to the upstream, S3 XML errors (404 NoSuchBucket, 403 AccessDenied, 502 upstream failure). Bodies are
buffered (the real daemon streams).
"""

import datetime
import http.client
import signal
import ssl
import sys
import threading
import tomllib
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
              "expect", "host", "content-length", "authorization", "x-amz-security-token", "proxy-authorization"}
WRITE_METHODS = {"PUT", "POST", "DELETE", "PATCH"}


def log(msg: str, **fields: str) -> None:
    parts = [f"level=info msg={msg if ' ' not in msg else repr(msg).replace(chr(39), chr(34))}"]
    parts += [f"{k}={v}" for k, v in fields.items()]
    sys.stderr.write(" ".join(parts) + "\n")
    sys.stderr.flush()


def canonical_path(raw: str) -> str:
    return urllib.parse.quote(urllib.parse.unquote(raw), safe="/")


def canonical_query(raw: str) -> str:
    if not raw:
        return ""
    out = []
    for pair in raw.split("&"):
        k, eq, v = pair.partition("=")
        k, v = urllib.parse.unquote(k), urllib.parse.unquote(v)
        if k.lower().startswith("x-amz-") and k.lower() in (
                "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
                "x-amz-signature", "x-amz-security-token"):
            continue
        out.append(urllib.parse.quote(k, safe="") + "=" + urllib.parse.quote(v, safe=""))
    return "&".join(out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _error(self, status: int, code: str, message: str) -> None:
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
                f"<RequestId>{uuid.uuid4().hex}</RequestId></Error>").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _route(self, path: str):
        for b in self.server.config["bucket"]:
            mount = b.get("mount", "/" + b["name"])
            if mount == "/":
                return b, path
            if path == mount or path.startswith(mount + "/"):
                return b, path[len(mount):] or "/"
        return None, None

    def _handle(self) -> None:
        raw_path, _, raw_query = self.path.partition("?")
        body = self._body()
        bucket, rest = self._route(raw_path)
        if bucket is None:
            return self._error(404, "NoSuchBucket", "The specified bucket does not exist")
        if bucket.get("access", "read-write") == "read-only" and self.command in WRITE_METHODS:
            return self._error(403, "AccessDenied", "Access Denied")
        up = self.server.config["upstream"][bucket["upstream"]]
        endpoint = urllib.parse.urlsplit(up["endpoint"])
        path = "/" + bucket["name"] + (canonical_path(rest) if rest != "/" else "")
        if rest == "/" and raw_path.endswith("/") and bucket.get("mount", "/" + bucket["name"]) != "/":
            path += "/" if False else ""
        query = canonical_query(raw_query)
        target = path + ("?" + query if query else "")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Host"] = endpoint.netloc
        sha = self.headers.get("x-amz-content-sha256", "")
        headers["x-amz-content-sha256"] = sha if len(sha) == 64 else "UNSIGNED-PAYLOAD"
        request = AWSRequest(method=self.command, url=f"{endpoint.scheme}://{endpoint.netloc}{target}",
                             headers=headers, data=body)
        request.context["timestamp"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        headers["X-Amz-Date"] = request.context["timestamp"]
        request.headers["X-Amz-Date"] = request.context["timestamp"]
        signer = S3SigV4Auth(Credentials(up["access_key_id"], up["secret_access_key"]), "s3", up["region"])
        cr = signer.canonical_request(request)
        sig = signer.signature(signer.string_to_sign(request, cr), request)
        headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={signer.scope(request)}, "
                                    f"SignedHeaders={signer.signed_headers(signer.headers_to_sign(request))}, "
                                    f"Signature={sig}")
        headers["Content-Length"] = str(len(body))
        try:
            if endpoint.scheme == "https":
                ctx = ssl.create_default_context(cafile=up.get("ca_file"))
                conn = http.client.HTTPSConnection(endpoint.hostname, endpoint.port, context=ctx, timeout=60)
            else:
                conn = http.client.HTTPConnection(endpoint.hostname, endpoint.port, timeout=60)
            conn.putrequest(self.command, target, skip_host=True, skip_accept_encoding=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            conn.endheaders(body if body else None)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, ssl.SSLError, http.client.HTTPException) as e:
            log("Upstream failed", error=type(e).__name__)
            return self._error(502, "BadGateway", "upstream unreachable or TLS failure")
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in HOP_BY_HOP:
                self.send_header(k, v)
        if self.command == "HEAD":
            self.send_header("Content-Length", resp.getheader("Content-Length") or "0")
        else:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        log("Request", method=self.command, status=str(resp.status))

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _handle


class Admin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b"ok\n"
        self.send_response(200 if self.path in ("/healthz", "/readyz", "/metrics") else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _bind(addr: str, handler, config):
    host, _, port = addr.rpartition(":")
    srv = ThreadingHTTPServer((host.strip("[]"), int(port)), handler)
    srv.daemon_threads = True
    srv.config = config
    return srv, f"{host}:{srv.server_address[1]}"


def main() -> int:
    if sys.argv[1:2] != ["run"] or sys.argv[2:3] != ["--config"]:
        print("usage: reference_proxy.py run --config FILE", file=sys.stderr)
        return 64
    with open(sys.argv[3], "rb") as f:
        config = tomllib.load(f)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # before the listening lines: a test may stop us at once
    servers = []
    for addr in config["server"]["listen"]:
        srv, bound = _bind(addr, Handler, config)
        servers.append(srv)
        log("Listening", **{"listen.address": bound})
    if config["server"].get("admin_listen"):
        srv, bound = _bind(config["server"]["admin_listen"], Admin, config)
        servers.append(srv)
        log("Admin listening", **{"listen.address": bound})
    for srv in servers:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    while not stop.wait(0.2):
        pass
    log("Stopping")
    return 0


if __name__ == "__main__":
    sys.exit(main())
