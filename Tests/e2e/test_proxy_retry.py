"""A pooled upstream connection that turns out to be dead before any response byte.

The upstream here answers the first request on each connection with keep-alive, then closes the
connection without a byte when a second request arrives on it: exactly what a server's keep-alive
timeout racing a reuse looks like. presignd must retry an idempotent request once on a fresh
connection, and must not retry a request whose body has already left (unless it kept the body: issue 21).
"""
from __future__ import annotations

import os
import socket
import threading
import xml.etree.ElementTree as ET

import pytest

from harness.clients import curl
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream

from conftest import require_presignd_binary


class OneShotKeepAliveServer:
    """Serves one request per connection, then drops the connection on the next request."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.dropped = 0
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _read_request(conn: socket.socket, buffered: bytes) -> tuple[bytes, bytes] | None:
        data = buffered
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, rest = data.split(b"\r\n\r\n", 1)
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            rest += chunk
        return head, rest[length:]

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            first = self._read_request(conn, b"")
            if first is None:
                return
            body = b"fresh"
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: keep-alive\r\n\r\n" % len(body) + body)
            second = self._read_request(conn, first[1])
            if second is not None:
                with self.lock:
                    self.dropped += 1
            # Close without answering: the stale keep-alive connection.

    def close(self) -> None:
        self.closed = True
        self.sock.close()


@pytest.fixture
def stale_setup(work_dir):
    server = OneShotKeepAliveServer()
    config = PresigndConfig(
        upstreams=[Upstream(name="oneshot", endpoint=f"http://127.0.0.1:{server.port}",
                            access_key_id="AKIARETRY", secret_access_key="retry-secret")],
        buckets=[Bucket("b", "oneshot")])
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "retry")).start()
    try:
        yield server, daemon
    finally:
        daemon.stop()
        server.close()


def test_idempotent_request_on_a_stale_pooled_connection_is_retried_once(stale_setup):
    server, daemon = stale_setup
    first = curl(f"{daemon.endpoint}/b/one")
    assert first.status == 200 and first.body == b"fresh"
    second = curl(f"{daemon.endpoint}/b/two")
    assert second.status == 200 and second.body == b"fresh"
    assert server.dropped == 1, "the second request must have gone to the pooled connection first"
    assert server.connections == 2, "and then once to a fresh connection"


def test_request_whose_body_left_is_not_retried(stale_setup):
    server, daemon = stale_setup
    assert curl(f"{daemon.endpoint}/b/one").status == 200
    # Larger than retry_body_buffer (64 KiB): streamed without a copy, so it cannot be sent twice.
    put = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "@-",
               f"{daemon.endpoint}/b/two", input=b"p" * (256 * 1024))
    assert put.status == 502
    assert ET.fromstring(put.body).findtext("Code") == "UpstreamProtocolError"
    assert server.connections == 1, "a body that already left must not be sent twice"


def test_a_small_body_kept_in_memory_is_sent_again_on_a_fresh_connection(stale_setup):
    server, daemon = stale_setup
    assert curl(f"{daemon.endpoint}/b/one").status == 200
    put = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "payload",
               f"{daemon.endpoint}/b/two")
    assert put.status == 200 and put.body == b"fresh"
    assert server.dropped == 1 and server.connections == 2
