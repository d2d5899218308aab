"""Helpers of the read cache's end-to-end tests (issue 23): the store seeded and read with presignd-cache-probe,
the bytes it seeds, and an upstream that holds one version of each object and answers revalidations."""
from __future__ import annotations

import http.client
import os
import subprocess
import threading

from conftest import require_presignd_binary
from credentials_support import LocalServer, QuietHandler


def probe(*args: str) -> dict[str, str]:
    """Runs presignd-cache-probe (built next to presignd); its `word KEY` lines as {KEY: word}."""
    binary = os.path.join(os.path.dirname(require_presignd_binary()), "presignd-cache-probe")
    result = subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    return {line.split(" ", 1)[1]: line.split(" ", 1)[0] for line in result.stdout.splitlines()}


def seed(config, work_dir: str, bucket: str, *objects: str) -> str:
    """Writes `config` (a PresigndConfig) as seed.toml in `work_dir` and seeds `objects` (KEY, KEY=SIZE or
    KEY=SIZE@ETAG) into `bucket`'s cache directory; returns the file's path (for `probe("lookup", ...)`)."""
    path = os.path.join(work_dir, "seed.toml")
    with open(path, "w") as f:
        f.write(config.render())
    if objects:
        probe("seed", path, bucket, *objects)
    return path


def seeded_bytes(size: int) -> bytes:
    """What `presignd-cache-probe seed` writes for an object of `size` bytes (its ETag is "seed")."""
    return bytes((offset * 31 + 7 + (offset >> 16)) & 0xFF for offset in range(size))


def request(daemon, method: str, path: str, headers: dict | None = None):
    """One request on a connection of its own: (status, headers, body)."""
    connection = http.client.HTTPConnection(daemon.listen_addresses[0].rsplit(":", 1)[0],
                                            daemon.port, timeout=10)
    try:
        connection.request(method, path, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()


class ObjectUpstream(LocalServer):
    """Serves `objects` ({path: (etag, bytes)}) as S3 does for GET and HEAD: 304 to a matching If-None-Match, 412
    to an If-Match of another ETag, 206 to a single Range (416 past the end), 404 for anything else, `failing` (a status) to everything while set; records every request
    as (method, path, If-None-Match, Range)."""

    def __init__(self, objects: dict[str, tuple[str, bytes]]):
        self.objects = objects
        self.failing: int | None = None
        self.missing_code = "NoSuchKey"  # the S3 error code of a 404
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, str | None, str | None]] = []
        outer = self

        class Handler(QuietHandler):
            def serve(self, with_body: bool):
                inm, byte_range = self.headers.get("If-None-Match"), self.headers.get("Range")
                with outer.lock:
                    outer.requests.append((self.command, self.path, inm, byte_range))
                    found = outer.objects.get(self.path)
                if outer.failing:
                    self.answer(outer.failing, b"<Error><Code>InternalError</Code></Error>")
                    return
                if found is None:
                    self.answer(404, f"<Error><Code>{outer.missing_code}</Code></Error>".encode())
                    return
                etag, data = found
                if_match = self.headers.get("If-Match")
                if if_match is not None and if_match != etag:  # as S3: another version than the one asked for
                    self.answer(412, b"<Error><Code>PreconditionFailed</Code></Error>")
                    return
                if inm == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                status, body, extra = 200, data, []
                if byte_range:
                    first, last = byte_range.removeprefix("bytes=").split("-")
                    start = int(first) if first else len(data) - int(last)
                    end = min(int(last), len(data) - 1) if first and last else len(data) - 1
                    if start >= len(data):  # as S3: a range starting past the end is not satisfiable
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    status, body = 206, data[start:end + 1]
                    extra = [("Content-Range", f"bytes {start}-{end}/{len(data)}")]
                self.send_response(status)
                for name, value in [("ETag", etag), ("Content-Type", "application/octet-stream"),
                                    ("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT"),
                                    ("Content-Length", str(len(body)))] + extra:
                    self.send_header(name, value)
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

            def do_GET(self):
                self.serve(True)

            def do_HEAD(self):
                self.serve(False)

        super().__init__(Handler)

    def taken(self) -> list[tuple[str, str, str | None, str | None]]:
        with self.lock:
            taken, self.requests = self.requests, []
        return taken
