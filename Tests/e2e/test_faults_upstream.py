"""Fault injection against a controllable local upstream (issue 5): every failure is a distinct S3 XML error
before the response starts and an aborted connection after it (never a clean short body); client disconnects
close the upstream side; and 1000 repetitions leave presignd's descriptors and live heap where they started.

Timeouts are configured short (first byte 1 s, body idle 1 s, connect 1 s) so the suite stays fast.
"""

from __future__ import annotations

import os
import re
import socket
import time
import urllib.request

import pytest

from harness.faulty_upstream import FaultyUpstream
from harness.net import free_port, wait_until
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.procfs import process_fds, status_kib
from harness.rawhttp import ConnectionClosed, RawConnection
from harness.s3xml import parse_error

from conftest import require_presignd_binary

KEY_ID, SECRET = "AKIDFAULTEXAMPLE", "fault/Secret+Key/EXAMPLEKEY0123456789"
LOOPS = int(os.environ.get("PRESIGND_FAULT_LOOPS", "1000"))


@pytest.fixture(scope="module")
def faulty():
    upstream = FaultyUpstream()
    yield upstream
    upstream.stop()


@pytest.fixture(scope="module")
def fault_daemon(faulty, tmp_path_factory):
    def upstream(name: str, endpoint: str) -> Upstream:
        return Upstream(name=name, endpoint=endpoint, access_key_id=KEY_ID, secret_access_key=SECRET,
                        extra={"first_byte_timeout": "1s", "connect_timeout": "1s"})

    config = PresigndConfig(
        upstreams=[
            upstream("fault", faulty.endpoint),
            upstream("dns", "http://nonexistent.invalid:9000"),
            upstream("refused", f"http://127.0.0.1:{free_port()}"),
        ],
        buckets=[Bucket("fault-bucket", "fault"), Bucket("dns-bucket", "dns"), Bucket("refused-bucket", "refused")],
        server_extra={"limits.body_idle_timeout": "1s", "limits.header_timeout": "2s"},
    )
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path_factory.mktemp("faults"))).start()
    yield daemon
    alive = daemon.is_running()
    if alive:
        daemon.stop()
    else:
        daemon.kill()
    assert alive, f"presignd died during the fault-injection tests (exit {daemon.exit_code}):\n{daemon.log_text()}"
    assert SECRET not in daemon.log_text()


@pytest.fixture(autouse=True)
def _reset(faulty):
    faulty.reset("ok")
    yield
    faulty.release()


def _connect(daemon) -> RawConnection:
    host, port = daemon.listen_addresses[0].rsplit(":", 1)
    return RawConnection(host, int(port), timeout=10)


def _get(daemon, target: str, method: str = "GET"):
    with _connect(daemon) as conn:
        return conn.request(method, target)


def _assert_error(response, status: int, codes: tuple[str, ...]) -> None:
    assert response.status == status, (response.status, response.body[:300])
    code = parse_error(response.body).code
    assert code in codes, code
    assert response.header("x-amz-error-code") == code


# -- before the response starts: distinct S3 errors ---------------------------------------------------------


def test_upstream_closes_on_accept_is_502(fault_daemon, faulty):
    faulty.mode = "close_on_accept"
    _assert_error(_get(fault_daemon, "/fault-bucket/k"), 502, ("UpstreamProtocolError", "UpstreamConnectFailure"))


def test_upstream_garbage_is_502(fault_daemon, faulty):
    faulty.mode = "garbage"
    _assert_error(_get(fault_daemon, "/fault-bucket/k"), 502, ("UpstreamProtocolError",))


def test_dns_failure_is_502_dns(fault_daemon):
    _assert_error(_get(fault_daemon, "/dns-bucket/k"), 502, ("UpstreamDNSFailure",))


def test_connect_refused_is_502_connect(fault_daemon):
    _assert_error(_get(fault_daemon, "/refused-bucket/k"), 502, ("UpstreamConnectFailure",))


def test_stall_before_head_is_504_within_first_byte_timeout(fault_daemon, faulty):
    faulty.mode = "stall_head"
    started = time.monotonic()
    response = _get(fault_daemon, "/fault-bucket/k")
    elapsed = time.monotonic() - started
    _assert_error(response, 504, ("UpstreamTimeout",))
    assert 0.8 <= elapsed <= 4, f"504 after {elapsed:.1f}s with first_byte_timeout = 1s"


# -- after the response started: the client sees an aborted transfer -----------------------------------------


def test_reset_mid_body_aborts_the_client_connection(fault_daemon, faulty):
    faulty.mode = "reset_mid_body"
    with _connect(fault_daemon) as conn:
        conn.send(b"GET /fault-bucket/k HTTP/1.1\r\nHost: presignd\r\n\r\n")
        response = conn.read_response()
        assert response.status == 200
        assert not response.complete and len(response.body) < 1048576, "a reset upstream gave a complete body"
        assert conn.closed_by_peer(timeout=2)


def test_reset_mid_close_delimited_body_is_never_a_complete_chunked_body(fault_daemon, faulty):
    """Bug h: a body without length that the upstream cuts with a TCP reset must not reach an HTTP/1.1 client
    as complete (presignd re-chunks it: no last chunk, and the connection closes)."""
    faulty.mode = "reset_until_close"
    with _connect(fault_daemon) as conn:
        conn.send(b"GET /fault-bucket/k HTTP/1.1\r\nHost: presignd\r\n\r\n")
        response = conn.read_response()
        assert response.status == 200
        assert response.header("transfer-encoding") == "chunked"
        assert not response.complete, "a reset upstream gave a complete body"
        assert conn.closed_by_peer(timeout=2)


def test_orderly_close_ends_a_close_delimited_body_completely(fault_daemon, faulty):
    faulty.mode = "eof_until_close"
    with _connect(fault_daemon) as conn:
        conn.send(b"GET /fault-bucket/k HTTP/1.1\r\nHost: presignd\r\n\r\n")
        response = conn.read_response()
        assert response.status == 200 and response.complete
        assert response.body == b"u" * 65536


def _read_http10_until_end(conn) -> tuple[bytes, str]:
    """Everything an HTTP/1.0 client receives, and how the connection ended: 'eof' or 'reset'."""
    data = b""
    conn.sock.settimeout(5)
    while True:
        try:
            chunk = conn.sock.recv(65536)
        except ConnectionResetError:
            return data, "reset"
        if not chunk:
            return data, "eof"
        data += chunk


def test_http10_client_sees_a_reset_when_a_close_delimited_body_is_cut(fault_daemon, faulty):
    """Bug i: an HTTP/1.0 client's body ends with the connection; when the upstream's is cut short, an orderly
    close would look complete, so presignd resets the client connection (SO_LINGER 0), as nginx does."""
    faulty.mode = "reset_until_close"
    with _connect(fault_daemon) as conn:
        conn.send(b"GET /fault-bucket/k HTTP/1.0\r\n\r\n")
        data, ending = _read_http10_until_end(conn)
    assert data.startswith(b"HTTP/1.1 200 "), data[:100]
    assert ending == "reset", f"a cut close-delimited body ended with {ending} after {len(data)} bytes"


def test_http10_client_sees_an_orderly_close_after_a_complete_close_delimited_body(fault_daemon, faulty):
    faulty.mode = "eof_until_close"
    with _connect(fault_daemon) as conn:
        conn.send(b"GET /fault-bucket/k HTTP/1.0\r\n\r\n")
        data, ending = _read_http10_until_end(conn)
    assert ending == "eof"
    assert data.endswith(b"\r\n\r\n" + b"u" * 65536)


def test_fields_named_in_the_upstream_connection_header_are_not_forwarded(fault_daemon, faulty):
    """Bug f: RFC 9110 §7.6.1, a field named by Connection is hop-by-hop for that message."""
    faulty.mode = "connection_named"
    response = _get(fault_daemon, "/fault-bucket/k")
    assert response.status == 200 and response.body == b"ok"
    assert response.header("x-hop-secret") is None, response.headers
    assert response.header("x-kept") == "yes"


def test_stall_mid_body_aborts_after_idle_timeout(fault_daemon, faulty):
    faulty.mode = "stall_body"
    started = time.monotonic()
    with _connect(fault_daemon) as conn:
        conn.send(b"GET /fault-bucket/k HTTP/1.1\r\nHost: presignd\r\n\r\n")
        response = conn.read_response(timeout=10)
        elapsed = time.monotonic() - started
    assert response.status == 200 and not response.complete
    assert len(response.body) == 1000
    assert elapsed <= 4, f"the stalled body was aborted only after {elapsed:.1f}s (body idle timeout 1s)"
    wait_until(lambda: faulty.live("stall_body") == 0, 5, "upstream connection closed after the stall")


# -- a pooled connection the upstream dropped ---------------------------------------------------------------


def _pool_one_connection(daemon, conn: RawConnection) -> None:
    first = conn.request("GET", "/fault-bucket/warm")
    assert first.status == 200 and first.body == b"ok"


def test_dropped_pooled_connection_is_retried_for_get(fault_daemon, faulty):
    faulty.mode = "drop_second"
    with _connect(fault_daemon) as conn:
        _pool_one_connection(fault_daemon, conn)
        second = conn.request("GET", "/fault-bucket/again")
    assert second.status == 200 and second.body == b"ok"
    assert faulty.requests.count(("GET", "/fault-bucket/again")) == 2, "retried once on a fresh connection"


def test_dropped_pooled_connection_never_duplicates_a_put(fault_daemon, faulty):
    faulty.mode = "drop_second"
    with _connect(fault_daemon) as conn:
        _pool_one_connection(fault_daemon, conn)
        # Larger than retry_body_buffer (64 KiB): streamed without a copy, so once it has left it is never sent
        # again (issue 21; a smaller PUT is kept and sent again, test_proxy_retry.py).
        put = conn.request("PUT", "/fault-bucket/once", body=b"payload" * 40000)
    assert put.status == 502, put.status
    assert faulty.requests.count(("PUT", "/fault-bucket/once")) == 1


def test_dropped_pooled_connection_never_duplicates_a_post(fault_daemon, faulty):
    # Guards Exchange.isRetryableAfter's `requestBodyBytes == 0` clause: once pooled retries work (see the xfail
    # above), a bodyless POST (CreateMultipartUpload) must still not be sent twice (RFC 9110 §9.2.2).
    faulty.mode = "drop_second"
    with _connect(fault_daemon) as conn:
        _pool_one_connection(fault_daemon, conn)
        post = conn.request("POST", "/fault-bucket/mpu?uploads")
    assert faulty.requests.count(("POST", "/fault-bucket/mpu?uploads=")) == 1, (post.status, faulty.requests)


# -- client disconnects --------------------------------------------------------------------------------------


def _upload_and_vanish(daemon, abort: bool) -> None:
    conn = _connect(daemon)
    conn.send(b"PUT /fault-bucket/upload HTTP/1.1\r\nHost: presignd\r\nContent-Length: 10485760\r\n\r\n"
              + b"u" * 65536)
    conn.abort() if abort else conn.close()


def _download_and_vanish(daemon, abort: bool) -> None:
    conn = _connect(daemon)
    conn.send(b"GET /fault-bucket/download HTTP/1.1\r\nHost: presignd\r\n\r\n")
    got = 0
    while got < 65536:
        chunk = conn.sock.recv(65536)
        assert chunk, "presignd closed the download"
        got += len(chunk)
    conn.abort() if abort else conn.close()


def test_client_disconnect_mid_upload_closes_upstream(fault_daemon, faulty):
    faulty.mode = "sink"
    _upload_and_vanish(fault_daemon, abort=False)
    wait_until(lambda: ("PUT", "/fault-bucket/upload") in faulty.requests and faulty.live("sink") == 0, 5,
               "upstream side closed after the client left")
    assert fault_daemon.is_running()


def test_client_disconnect_mid_download_closes_upstream(fault_daemon, faulty):
    faulty.mode = "stream"
    _download_and_vanish(fault_daemon, abort=True)
    wait_until(lambda: faulty.live("stream") == 0, 5, "upstream side closed after the client left")
    assert fault_daemon.is_running()


# -- 1000 repetitions: no descriptor or memory leak ---------------------------------------------------------


def _settled_fds(pid: int, baseline: int, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while True:
        fds = process_fds(pid)
        if fds <= baseline or time.monotonic() > deadline:
            return fds
        time.sleep(0.1)


def _one_fault(daemon, faulty, kind: str) -> None:
    if kind == "refused":
        assert _get(daemon, "/refused-bucket/k").status == 502
    elif kind == "dns":
        assert _get(daemon, "/dns-bucket/k").status == 502
    elif kind == "garbage":
        faulty.mode = "garbage"
        assert _get(daemon, "/fault-bucket/k").status == 502
    elif kind == "close_on_accept":
        faulty.mode = "close_on_accept"
        assert _get(daemon, "/fault-bucket/k").status == 502
    elif kind == "reset_mid_body":
        faulty.mode = "reset_mid_body"
        assert not _get(daemon, "/fault-bucket/k").complete
    elif kind == "upload_disconnect":
        faulty.mode = "sink"
        _upload_and_vanish(daemon, abort=False)
    elif kind == "download_disconnect":
        faulty.mode = "stream"
        _download_and_vanish(daemon, abort=True)
    else:
        raise AssertionError(kind)


def _gauge(text: str, name: str) -> int:
    found = re.search(rf"^{name} (\d+)$", text, re.M)
    assert found, f"{name} missing from /metrics"
    return int(found.group(1))


def _heap_in_use(daemon) -> int:
    """The live heap once presignd has let go of every client connection of the loop: a client's close reaches
    presignd a moment after the upstream side's, and a connection still open holds its buffers."""
    def metrics() -> str:
        with urllib.request.urlopen(f"{daemon.admin_endpoint}/metrics", timeout=5) as response:
            return response.read().decode()
    wait_until(lambda: _gauge(metrics(), "presignd_requests_in_flight") == 0
               and _gauge(metrics(), "presignd_client_connections_open") == 0, 10,
               "presignd's client connections closed")
    return _gauge(metrics(), "presignd_heap_in_use_bytes")


@pytest.mark.parametrize("kind", ["refused", "dns", "garbage", "close_on_accept", "reset_mid_body",
                                  "upload_disconnect", "download_disconnect"])
def test_fault_loop_leaks_nothing(fault_daemon, faulty, kind):
    """LOOPS repetitions in two equal windows. Descriptors must be back at the baseline after each. Memory: the live
    heap (presignd_heap_in_use_bytes, glibc's bytes allocated and not freed) must not grow by more than 1 KiB per
    repetition in either window. RSS is no leak check here: glibc keeps freed buffers in the worker's arena and
    raises its mmap threshold as large blocks are freed, so RSS follows the peak of concurrent connections, not what
    is still allocated (measured: 30 MiB after 1000 disconnected uploads, 43 MiB after 6000, flat to 12,000). Skipped
    under sanitizers (PRESIGND_SKIP_HEAP_CHECK=1: their allocators are not glibc's)."""
    pid = fault_daemon.proc.pid
    busy = ("sink", "stream", "stall_head", "stall_body")
    # Warm up pools and caches (DNS failures, metrics series, per-worker buffers) before the baseline.
    for _ in range(100):
        _one_fault(fault_daemon, faulty, kind)
    wait_until(lambda: sum(faulty.live(m) for m in busy) == 0, 10, "upstream connections closed after warm-up")
    fds_before = _settled_fds(pid, 0, timeout=1)
    heap = [_heap_in_use(fault_daemon)]
    for _window in range(2):
        for _ in range(LOOPS // 2):
            _one_fault(fault_daemon, faulty, kind)
        wait_until(lambda: sum(faulty.live(m) for m in busy) == 0, 10,
                   f"upstream connections closed after {LOOPS // 2} x {kind}")
        fds_after = _settled_fds(pid, fds_before)
        assert fds_after <= fds_before, f"{kind}: {fds_after - fds_before} descriptors leaked"
        heap.append(_heap_in_use(fault_daemon))
    print(f"{kind}: live heap {heap} bytes, RSS {status_kib(pid, 'VmRSS')} KiB")
    if os.environ.get("PRESIGND_SKIP_HEAP_CHECK") != "1":
        growth = max(heap[1] - heap[0], heap[2] - heap[1])
        assert growth <= 1024 * (LOOPS // 2), f"{kind}: live heap grew {growth} bytes in {LOOPS // 2} repetitions: {heap}"
    faulty.reset("ok")
    assert _get(fault_daemon, "/fault-bucket/after").status == 200


def test_ten_thousand_abandoned_connections(fault_daemon, faulty):
    pid = fault_daemon.proc.pid
    host, port = fault_daemon.listen_addresses[0].rsplit(":", 1)
    fds_before = process_fds(pid)
    heap_before = _heap_in_use(fault_daemon)
    batch: list[socket.socket] = []
    for i in range(10_000):
        s = socket.create_connection((host, int(port)), timeout=5)
        if i % 3 == 1:
            s.sendall(b"GET /fault-bucket/k HTTP/1.1\r\nHo")  # a partial head, then gone
        elif i % 3 == 2:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        batch.append(s)
        if len(batch) == 200:
            for b in batch:
                b.close()
            batch.clear()
    for b in batch:
        b.close()
    fds_after = _settled_fds(pid, fds_before)
    assert fds_after <= fds_before, f"{fds_after - fds_before} descriptors left after 10,000 abandoned connections"
    if os.environ.get("PRESIGND_SKIP_HEAP_CHECK") != "1":
        heap_after = _heap_in_use(fault_daemon)
        assert heap_after - heap_before <= 512 * 1024, f"live heap {heap_before} -> {heap_after} bytes"
    assert _get(fault_daemon, "/fault-bucket/alive").status == 200
