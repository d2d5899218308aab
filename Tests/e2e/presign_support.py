"""Shared pieces of the presigned-link tests (issue 7): the independent verifying server and a presignd whose
upstream is that server.

The verifier (`presign_verifier.py`) is independent of presignd's signer: it recomputes every presigned URL with
botocore's `S3SigV4QueryAuth` from the raw request it received, checks expiry and the credential scope, and
that every signed header was sent with the signed value. It stores objects in memory and serves ranges.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import urllib.error
import urllib.request

from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from helpers_sigv4 import ACCESS_KEY, SECRET_KEY

REGION = "us-east-1"
TOKEN = "presign-api-test-token-0123456789"
ALLOWED_ORIGIN = "http://allowed.example"


class Verifier:
    def __init__(self):
        script = pathlib.Path(__file__).with_name("presign_verifier.py")
        self.proc = subprocess.Popen(
            [sys.executable, str(script), "--access-key-id", ACCESS_KEY, "--secret-access-key", SECRET_KEY,
             "--region", REGION], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), line
        self.port = int(line.split()[1])
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def links_config(verifier: Verifier, directory: str, *, token: bool = True,
                 origins: list[str] | None = None) -> PresigndConfig:
    server_extra = {"cors_allowed_origins": origins or [ALLOWED_ORIGIN]}
    if token:
        token_file = os.path.join(directory, "admin.token")
        os.makedirs(directory, exist_ok=True)
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(token_file, 0o600)
        server_extra["admin_token_file"] = token_file
    else:
        # A TCP admin listener without a token serves the presign API only when the config opens it (issue 19 §6).
        server_extra["presign_api"] = "open"
    return PresigndConfig(
        upstreams=[Upstream(name="verifier", endpoint=verifier.endpoint, region=REGION,
                            access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY)],
        buckets=[
            Bucket("links", "verifier"),
            Bucket("ro", "verifier", access="read-only"),
            Bucket("limited", "verifier", extra={
                "allowed_prefixes": ["public/"], "allowed_methods": ["GET", "HEAD", "PUT"],
                "max_presign_expiry": "1h", "max_upload_size": "1KiB"}),
            Bucket("redir", "verifier", extra={"redirect": True, "redirect_expires": "2m"}),
            Bucket("redir-ro", "verifier", access="read-only", extra={"redirect": True}),
        ],
        server_extra=server_extra,
    )


def start_presignd(binary: str, config: PresigndConfig, directory: str, name: str) -> Presignd:
    daemon = Presignd(binary, config, directory, name=name)
    try:
        daemon.start()
    except BaseException:
        daemon.kill()
        raise
    return daemon


def http(url, method="GET", data=None, headers=None, timeout=10):
    """(status, headers, body) without following redirects or raising on 4xx/5xx."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect, urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def api(daemon: Presignd, body, token: str | None = TOKEN, headers=None):
    """POST /v1/presign; returns (status, headers, decoded JSON)."""
    all_headers = {"Content-Type": "application/json"}
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    all_headers.update(headers or {})
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, response_headers, raw = http(f"{daemon.admin_endpoint}/v1/presign", "POST", data, all_headers)
    return status, response_headers, json.loads(raw) if raw.strip() else None
