"""Shared by the credential-provider e2e tests (issue 22): an upstream that accepts only keys the test's
credential source issued, unexpired, with their session token, verifying each SigV4 signature like S3; and the
readiness and GET helpers."""
from __future__ import annotations

import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness.presignd import PresigndConfig, toml_str
from harness.recorder import verify_request


class RefreshingConfig(PresigndConfig):
    """The harness config with one upstream whose keys come from `credentials` (TOML lines such as
    `credential_process = "…"`) instead of access_key_id/secret_access_key, and one bucket `data` on it."""

    def __init__(self, upstream_name: str, endpoint: str, credentials: dict):
        super().__init__(upstreams=[], buckets=[], workers=2)
        self.upstream_name, self.endpoint, self.credentials = upstream_name, endpoint, credentials

    def render(self) -> str:
        return "\n".join([
            "[server]", f"listen = {json.dumps(self.listen)}", f"admin_listen = {toml_str(self.admin_listen)}",
            f"workers = {self.workers}", 'presign_api = "open"', "",
            f"[upstream.{self.upstream_name}]", 'provider = "custom"', f"endpoint = {toml_str(self.endpoint)}",
            *[f"{key} = {toml_str(value)}" for key, value in self.credentials.items()], "",
            "[[bucket]]", 'name = "data"', f"upstream = {toml_str(self.upstream_name)}", "",
        ])


def issue_key(state: str, lifetime: int, prefix: str = "AKIDROTATING") -> dict:
    """Records a new key in STATE/issued.jsonl (the upstream's list of valid keys) and returns it."""
    path = os.path.join(state, "issued.jsonl")
    with open(path, "a+") as f:
        f.seek(0)
        n = sum(1 for _ in f) + 1
        key = {"id": "%s%04d" % (prefix, n), "secret": "rotating-secret-%04d" % n, "token": "rotating-token-%04d" % n,
               "expires": int(time.time()) + lifetime}
        f.write(json.dumps(key) + "\n")
    return key


def issued(state) -> list[dict]:
    with open(os.path.join(str(state), "issued.jsonl")) as f:
        return [json.loads(line) for line in f.read().splitlines()]


def iso(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def get(url: str, headers: dict | None = None) -> tuple[int, bytes, float]:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as response:
            return response.status, response.read(), time.monotonic() - started
    except urllib.error.HTTPError as error:
        return error.code, error.read(), time.monotonic() - started


def ready(daemon) -> tuple[int, str]:
    status, body, _ = get(daemon.admin_endpoint + "/readyz")
    return status, body.decode()


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no request log, `answer(status, body)` with a Content-Length."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status: int, body: bytes):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class LocalServer:
    """A threading HTTP server on 127.0.0.1:0 with `handler`."""

    def __init__(self, handler):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class KeyCheckingUpstream(LocalServer):
    """Answers 200 only to requests signed (SigV4, verified like S3) with an issued, unexpired key and its token."""

    def __init__(self, state: str):
        self.state = state
        self.lock = threading.Lock()
        self.keys_used: list[str] = []
        self.refusals: list[str] = []
        outer = self

        class Handler(QuietHandler):
            def do_GET(self):
                problem, key_id = outer.check(self.command, self.path, list(self.headers.items()))
                with outer.lock:
                    (outer.refusals.append(problem) if problem else outer.keys_used.append(key_id))
                self.answer(403 if problem else 200, b"denied: " + problem.encode() if problem else b"object body")

        super().__init__(Handler)

    def check(self, method, target, headers):
        auth = dict((k.lower(), v) for k, v in headers).get("authorization", "")
        match = re.search(r"Credential=([^/]+)/", auth)
        if not match:
            return "no credential", ""
        with open(os.path.join(self.state, "issued.jsonl")) as f:
            issued = {key["id"]: key for key in map(json.loads, f)}
        key = issued.get(match.group(1))
        if key is None:
            return f"unknown key {match.group(1)}", ""
        if time.time() >= key["expires"]:
            return f"expired key {key['id']}", ""
        token = dict((k.lower(), v) for k, v in headers).get("x-amz-security-token")
        if token != key["token"]:
            return f"wrong session token for {key['id']}", ""
        problems, _ = verify_request(method, target, headers, b"", key["id"], key["secret"], "us-east-1")
        return ("; ".join(problems), key["id"]) if problems else ("", key["id"])
