"""Browser upload (issue 7): headless Chromium loads a page from a local server; the page asks presignd's
presign API (CORS) for an upload link and PUTs a file with fetch; the object then reads back byte-identical
from the independent verifying server (presign_verifier.py)."""
from __future__ import annotations

import json
import os
import pathlib
import queue
import shutil
import signal
import subprocess
import threading
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import require_presignd_binary
from presign_support import TOKEN, Verifier, api, http, links_config, start_presignd

PAGE = pathlib.Path(__file__).with_name("browser") / "upload.html"


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class PageServer:
    """Serves the test page and the payload, and collects the page's report."""

    def __init__(self, payload: bytes):
        results: queue.Queue = queue.Queue()
        page = PAGE.read_bytes()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body, content_type):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                if path == "/upload.html":
                    return self._send(200, page, "text/html; charset=utf-8")
                if path == "/payload.bin":
                    return self._send(200, payload, "application/octet-stream")
                return self._send(404, b"", "text/plain")

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                results.put(json.loads(body))
                self._send(204, b"", "text/plain")

        self.results = results
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def test_browser_uploads_with_a_presigned_link(tmp_path):
    browser = chromium_binary()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    payload = os.urandom(200_000) + "é😀".encode()
    pages = PageServer(payload)
    verifier = Verifier()
    daemon = None
    chrome = None
    try:
        config = links_config(verifier, str(tmp_path), origins=[pages.origin])
        daemon = start_presignd(require_presignd_binary(), config, str(tmp_path), "presignd-browser")
        key = f"browser/{uuid.uuid4().hex}.png"
        query = urllib.parse.urlencode({"api": daemon.admin_endpoint, "token": TOKEN, "bucket": "links",
                                        "key": key, "type": "image/png"})
        chrome = subprocess.Popen(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", f"--user-data-dir={tmp_path / 'profile'}",
             f"{pages.origin}/upload.html?{query}"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "chromium.log", "wb"), start_new_session=True)
        try:
            result = pages.results.get(timeout=60)
        except queue.Empty:
            pytest.fail(f"the page reported nothing within 60 s; chromium log:\n{(tmp_path / 'chromium.log').read_text()[-3000:]}")
        assert result == {"stage": "put", "status": 200, "size": len(payload),
                          "headers": {"Content-Type": "image/png"}}, result
        status, _, link = api(daemon, {"bucket": "links", "key": key})
        assert status == 200
        status, headers, body = http(link["url"])
        assert status == 200 and body == payload and headers["Content-Type"] == "image/png"
    finally:
        if chrome is not None:
            os.killpg(chrome.pid, signal.SIGTERM)
            try:
                chrome.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(chrome.pid, signal.SIGKILL)
                chrome.wait()
        if daemon is not None:
            daemon.stop()
        verifier.stop()
        pages.stop()
