"""Limits on bodies (issue 20), against the real daemon and a recording upstream.

- `min_body_rate`: a request body trickling below the rate is cut with 408, and the upstream sees an incomplete
  body; a response the client does not read is cut, one the upstream sends slowly (S3's whitespace) is not.
- Spool space on a small tmpfs (root only; skipped where `mount` is not permitted): uploads beyond
  `max_spool_total` get 503 SlowDown with Retry-After (a length-less upload reserves space as its bytes arrive); an
  upload that meets ENOSPC gets 507 InsufficientStorage and nothing reaches the upstream; the spool directory is
  empty afterwards and the daemon still serves.
- The upstream's largest PUT: an R2 upload declaring 5 GiB is refused with EntityTooLarge from its head.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import threading
import time

import pytest

from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.rawhttp import ConnectionClosed, RawConnection
from harness.s3xml import parse_error

from conftest import require_presignd_binary
from ops_helpers import metric, parse_metrics, read_until_cut

BUCKET = "body-bucket"


def _config(recorder, upstream_extra: dict | None = None, **server_extra) -> PresigndConfig:
    return PresigndConfig(
        upstreams=[Upstream(name="rec", endpoint=recorder.endpoint, region=recorder.region,
                            access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key,
                            extra=upstream_extra or {})],
        buckets=[Bucket(BUCKET, "rec")],
        server_extra=server_extra,
    )


def _ignore_reset(send, data: bytes) -> None:
    try:
        send(data)
    except OSError:
        pass


def _host_port(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host, int(port)


def _connect(daemon: Presignd, timeout: float = 5) -> RawConnection:
    return RawConnection(*_host_port(daemon.listen_addresses[0]), timeout=timeout)


def _stop(daemon: Presignd) -> None:
    alive = daemon.is_running()
    daemon.stop() if alive else daemon.kill()
    assert alive, daemon.log_text()


def _metrics(daemon: Presignd) -> dict:
    with RawConnection(*_host_port(daemon.admin_address), timeout=5) as conn:
        return parse_metrics(conn.request("GET", "/metrics").body.decode())


# -- min_body_rate ----------------------------------------------------------------------------------------------


def test_a_body_trickling_below_min_body_rate_is_cut_with_408_and_the_upstream_sees_it_incomplete(
        recorder, tmp_path):
    daemon = Presignd(require_presignd_binary(),
                      _config(recorder, **{"limits.min_body_rate": "1KiB/s", "limits.body_rate_window": "1s"}),
                      str(tmp_path / "d")).start()
    try:
        key = f"/{BUCKET}/trickle-{time.monotonic_ns()}"
        declared = 100_000
        with _connect(daemon) as conn:
            conn.send(f"PUT {key} HTTP/1.1\r\nHost: presignd\r\nContent-Length: {declared}\r\n\r\n".encode()
                      + b"x" * 200)
            started = time.monotonic()
            sent = 200
            # 20 bytes every 100 ms: 200 B/s, a fifth of the rate, until presignd answers (bounded: 6 s).
            while time.monotonic() - started < 6:
                readable, _, _ = select.select([conn.sock], [], [], 0.1)
                if readable:
                    break
                conn.send(b"x" * 20)
                sent += 20
            cut_after = time.monotonic() - started
            response = conn.read_response(timeout=5)
            assert response.status == 408 and parse_error(response.body).code == "RequestTimeout"
            assert conn.closed_by_peer(timeout=3)
        # Cut at the end of the first or second 1 s window (the sweep runs twice a second).
        assert 0.9 <= cut_after <= 3.0, f"cut after {cut_after:.2f}s"
        deadline = time.monotonic() + 3
        while not recorder.requests_for(key) and time.monotonic() < deadline:
            time.sleep(0.05)
        recorded = recorder.requests_for(key)
        assert recorded, "the upstream never saw the request"
        assert len(recorded[0].body) < declared, "the upstream got a complete body"
        assert metric(_metrics(daemon), "presignd_slow_body_aborts_total") == 1
    finally:
        _stop(daemon)


def test_a_response_slow_because_the_upstream_is_slow_is_not_cut(recorder, tmp_path):
    # S3 keeps a slow copy's 200 alive with a space now and then: far below any rate, and the client reads all of
    # it at once. min_body_rate is about clients that do not read; a slow upstream is body_idle_timeout's.
    daemon = Presignd(require_presignd_binary(),
                      _config(recorder, **{"limits.min_body_rate": "1KiB/s", "limits.body_rate_window": "1s"}),
                      str(tmp_path / "d")).start()
    try:
        pieces = [(0.0, b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")] + [(0.25, b" ")] * 14 + [
            (0.0, b"<ListBucketResult><Name>body-bucket</Name></ListBucketResult>")]
        recorder.script = [(200, {"Content-Type": "application/xml"}, pieces)]
        with _connect(daemon, timeout=30) as conn:
            response = conn.request("GET", f"/{BUCKET}/")
        assert response.status == 200
        assert response.body == b"".join(piece for _, piece in pieces)
        assert metric(_metrics(daemon), "presignd_slow_body_aborts_total") == 0
    finally:
        _stop(daemon)


def test_a_client_reading_a_response_below_min_body_rate_is_cut(recorder, tmp_path):
    daemon = Presignd(require_presignd_binary(),
                      _config(recorder, **{"limits.min_body_rate": "1KiB/s", "limits.body_rate_window": "1s"}),
                      str(tmp_path / "d")).start()
    try:
        key = f"/{BUCKET}/large-{time.monotonic_ns()}"
        size = 32 << 20
        recorder.objects[key] = os.urandom(size)
        with _connect(daemon) as conn:
            conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            conn.send(f"GET {key} HTTP/1.1\r\nHost: presignd\r\n\r\n".encode())
            # Read nothing: once the socket buffers are full, the response stops moving, and within a window or two
            # presignd counts a slow body.
            started = time.monotonic()
            while metric(_metrics(daemon), "presignd_slow_body_aborts_total") < 1:
                assert time.monotonic() - started < 5, "a stalled response was not cut"
                time.sleep(0.05)
            ended, received = read_until_cut(conn.sock)
            assert ended, "the connection was not cut"
            assert received < size, "the whole response arrived: it was never slow"
        assert metric(_metrics(daemon), "presignd_slow_body_aborts_total") == 1
    finally:
        _stop(daemon)


def test_a_client_reading_a_large_response_slowly_but_above_min_body_rate_is_not_cut(recorder, tmp_path):
    # A player reading at its own pace: 64 KiB/s, far above 1 KiB/s. The kernel's send buffer (megabytes on
    # loopback) takes bytes from presignd only in steps of a third of itself, seconds apart at this pace: the rate
    # must be judged by what the client's TCP took, not by what left presignd.
    daemon = Presignd(require_presignd_binary(),
                      _config(recorder, **{"limits.min_body_rate": "1KiB/s", "limits.body_rate_window": "2s"}),
                      str(tmp_path / "d")).start()
    try:
        key = f"/{BUCKET}/paced-{time.monotonic_ns()}"
        size = 24 << 20
        recorder.objects[key] = data = os.urandom(size)
        with _connect(daemon, timeout=10) as conn:
            conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            conn.send(f"GET {key} HTTP/1.1\r\nHost: presignd\r\n\r\n".encode())
            received = b""
            paced_until = time.monotonic() + 7  # three and a half windows at 64 KiB/s
            while time.monotonic() < paced_until:
                chunk = conn.sock.recv(16 << 10)
                assert chunk, f"cut after {len(received)} bytes"
                received += chunk
                time.sleep(0.25)
            while b"\r\n\r\n" not in received or len(received.split(b"\r\n\r\n", 1)[1]) < size:
                chunk = conn.sock.recv(1 << 20)
                assert chunk, f"cut after {len(received)} bytes"
                received += chunk
        assert received.split(b"\r\n\r\n", 1)[1] == data
        assert metric(_metrics(daemon), "presignd_slow_body_aborts_total") == 0
    finally:
        _stop(daemon)


# -- spool space ------------------------------------------------------------------------------------------------


@pytest.fixture
def small_spool(tmp_path):
    """An 8 MiB tmpfs as the spool directory; the test is skipped where it cannot be mounted."""
    directory = tmp_path / "spool"
    directory.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(directory)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {mounted.stderr.strip()}")
    try:
        yield str(directory)
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True)


def _chunked_head(key: str) -> bytes:
    return f"PUT {key} HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: chunked\r\n\r\n".encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def test_uploads_beyond_max_spool_total_get_503_slowdown(recorder, tmp_path, small_spool):
    """Length-less uploads are spooled, their space reserved as their bytes arrive (aws-chunked uploads with a
    known length are streamed since issue 21 and take none): one that would pass the budget gets 503 SlowDown."""
    config = _config(recorder, spool_directory=small_spool, max_spool_total="6MiB")
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path / "d")).start()
    try:
        data = os.urandom(4 << 20)
        first_key, second_key = f"/{BUCKET}/spool-a", f"/{BUCKET}/spool-b"
        with _connect(daemon) as first:
            first.send(_chunked_head(first_key) + _chunk(data))
            deadline = time.monotonic() + 3
            while metric(_metrics(daemon), "presignd_spool_bytes") < len(data):
                assert time.monotonic() < deadline, "the first upload never reserved its spool space"
                time.sleep(0.02)
            with _connect(daemon) as second:
                # 4 MiB more than the 6 MiB budget has left; presignd may answer before it has read them all.
                writer = threading.Thread(
                    target=lambda: _ignore_reset(second.send, _chunked_head(second_key) + _chunk(data)), daemon=True)
                writer.start()
                refused = second.read_response(timeout=5)
                assert refused.status == 503 and parse_error(refused.body).code == "SlowDown"
                assert refused.header("Retry-After") == "1" and refused.interim == []
                writer.join(5)
            first.send(b"0\r\n\r\n")
            assert first.read_response(timeout=10).status == 200
        assert recorder.requests_for(first_key)[-1].body == data
        assert not recorder.requests_for(second_key)
        # The first upload's space came back: the second one fits now.
        with _connect(daemon) as retry:
            retry.send(_chunked_head(second_key) + _chunk(data) + b"0\r\n\r\n")
            assert retry.read_response(timeout=10).status == 200
        assert os.listdir(small_spool) == []
        samples = _metrics(daemon)
        assert metric(samples, "presignd_shed_total", reason="max_spool_total") == 1
        assert metric(samples, "presignd_spool_bytes") == 0
        assert metric(samples, "presignd_spool_budget_bytes") == 6 << 20
    finally:
        _stop(daemon)


def test_an_upload_that_fills_the_spool_disk_gets_507_and_nothing_reaches_the_upstream(recorder, tmp_path,
                                                                                       small_spool):
    config = _config(recorder, spool_directory=small_spool, max_spool_total="64MiB")
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path / "d")).start()
    try:
        key = f"/{BUCKET}/enospc"
        piece = os.urandom(256 << 10)
        with _connect(daemon, timeout=10) as conn:
            # Length-less (chunked): spooled; 12 MiB do not fit the 8 MiB tmpfs.
            conn.send(f"PUT {key} HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
            try:
                for _ in range(48):
                    conn.sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                conn.sock.sendall(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                pass  # presignd answered and closed while the body was still coming
            try:
                response = conn.read_response(timeout=5)
            except ConnectionClosed:
                pytest.fail(f"no answer to the upload that filled the disk:\n{daemon.log_text()}")
            assert response.status == 507 and parse_error(response.body).code == "InsufficientStorage"
        assert not recorder.requests_for(key), "a request reached the upstream"
        deadline = time.monotonic() + 2
        while os.listdir(small_spool) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.listdir(small_spool) == []
        stats = os.statvfs(small_spool)
        assert stats.f_bfree * stats.f_frsize > 7 << 20, "the partial spool file still holds its space"
        # The daemon keeps serving: a small upload through the same spool, then a read.
        with _connect(daemon) as conn:
            assert conn.request("PUT", f"/{BUCKET}/after", body=b"still serving").status == 200
            assert conn.request("GET", f"/{BUCKET}/after").body == b"still serving"
    finally:
        _stop(daemon)


# -- the upstream's largest PUT ---------------------------------------------------------------------------------


class _R2Config(PresigndConfig):
    """The recorder's upstream as provider = "r2" (its endpoint derived from account_id, never reached)."""

    def render(self) -> str:
        text = super().render()
        upstream = self.upstreams[0]
        return text.replace('provider = "custom"', 'provider = "r2"').replace(
            f'endpoint = "{upstream.endpoint}"', 'account_id = "0123456789abcdef0123456789abcdef"')


def test_an_r2_upload_declaring_5_gib_is_refused_with_entity_too_large_before_anything_is_read(recorder, tmp_path):
    base = _config(recorder)
    config = _R2Config(upstreams=base.upstreams, buckets=base.buckets)
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path / "d")).start()
    try:
        for expect_continue in (True, False):
            with _connect(daemon) as conn:
                head = f"PUT /{BUCKET}/big HTTP/1.1\r\nHost: presignd\r\nContent-Length: {5 << 30}\r\n"
                if expect_continue:
                    head += "Expect: 100-continue\r\n"
                conn.send(head.encode() + b"\r\n")
                response = conn.read_response(timeout=3)
                assert response.status == 413 and parse_error(response.body).code == "EntityTooLarge"
                assert response.interim == [], "100 Continue invited a body that would be refused"
                assert response.closes and conn.closed_by_peer(timeout=3)
        assert not recorder.requests_for(f"/{BUCKET}/big")
    finally:
        _stop(daemon)
