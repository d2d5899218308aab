"""Client-side timeouts must not cut a response that is simply slow.

Regression: the pump's read timeout armed for the request head (header_timeout) stayed scheduled
after the request was complete, because `event_add(ev, NULL)` keeps an existing timeout; a response
slower than header_timeout was then aborted with nothing sent.
"""
from __future__ import annotations

import os
import socket
import threading
import time

from harness.clients import curl
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream

from conftest import require_presignd_binary


class SlowServer:
    """Answers every request after `delay` seconds, then streams the body slowly."""

    def __init__(self, delay: float, body: bytes, pause: float) -> None:
        self.delay, self.body, self.pause = delay, body, pause
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            time.sleep(self.delay)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(self.body))
            half = len(self.body) // 2
            conn.sendall(self.body[:half])
            time.sleep(self.pause)
            conn.sendall(self.body[half:])


def test_slow_response_outlives_header_and_idle_timeouts(work_dir):
    body = os.urandom(100_000)
    server = SlowServer(delay=2.5, body=body, pause=2.0)
    config = PresigndConfig(
        upstreams=[Upstream(name="slow", endpoint=f"http://127.0.0.1:{server.port}", access_key_id="AKIASLOW",
                            secret_access_key="slow-secret", extra={"first_byte_timeout": "10s"})],
        buckets=[Bucket("b", "slow")],
        server_extra={"limits.header_timeout": "1s", "limits.idle_timeout": "1s", "limits.body_idle_timeout": "5s"})
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "slow")).start()
    try:
        started = time.monotonic()
        got = curl(f"{daemon.endpoint}/b/slow")
        assert got.status == 200 and got.body == body
        assert time.monotonic() - started >= 4.5
    finally:
        daemon.stop()
        server.sock.close()
