"""Pipelined requests (RFC 9112 §9.3.2): several requests sent at once on one connection are answered in order and
the connection stays open. The requests after the first are decoded while the previous answer's events are still
being handled; each one's end must still reach the connection's state machine, or the connection would wait for a
body that never comes and close after the next answer."""
import os
import socket

import pytest

from cache_support import ObjectUpstream
from conftest import require_presignd_binary as presignd_binary
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream

OBJECTS = {f"/photos/k{i}": (f'"e{i}"', bytes([i]) * (1000 * i + 1)) for i in range(1, 6)}


@pytest.fixture
def daemon(work_dir):
    upstream = ObjectUpstream(dict(OBJECTS))
    config = PresigndConfig(
        upstreams=[Upstream("s3", upstream.endpoint, "AKID", "SECRET", extra={"max_attempts": 1})],
        buckets=[Bucket("photos", "s3", access="read-only")])
    running = Presignd(presignd_binary(), config, os.path.join(work_dir, "daemon")).start()
    try:
        yield running
    finally:
        running.stop()
        upstream.stop()


def read_answer(reader) -> tuple[int, dict, bytes]:
    status = int(reader.readline().split()[1])
    headers = {}
    while (line := reader.readline().rstrip(b"\r\n")):
        name, value = line.decode().split(":", 1)
        headers[name.strip().lower()] = value.strip()
    return status, headers, reader.read(int(headers["content-length"]))


def test_pipelined_gets_are_all_answered_in_order_on_one_open_connection(daemon):
    paths = list(OBJECTS) + ["/photos/k1"]
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as client:
        client.sendall(b"".join(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode() for path in paths))
        reader = client.makefile("rb")
        for path in paths:
            status, headers, body = read_answer(reader)
            assert (status, body) == (200, OBJECTS[path][1]), path
            assert "close" not in headers.get("connection", "")
        # Still open: one more request on the same connection.
        client.sendall(b"GET /photos/k2 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_answer(reader)[2] == OBJECTS["/photos/k2"][1]
