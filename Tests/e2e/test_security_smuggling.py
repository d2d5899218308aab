"""Request smuggling and malformed input over raw sockets against the real daemon (issue 5, "Must show").

Each row sends one request on a fresh connection and expects presignd's documented answer: an S3 XML error with
the listed status, or a close. presignd's decoder rejects bad framing with an error then `Connection: close`
(the framing can no longer be trusted, RFC 9112 §6.3, §11.2); a request that was well framed but refused (a
foreign absolute-form host, CONNECT) keeps the connection, and the next request on it must be parsed correctly.
Nothing from a rejected request may reach the upstream.
"""

from __future__ import annotations

import os
import socket
import threading

import pytest

from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.rawhttp import ConnectionClosed, RawConnection
from harness.s3xml import parse_error

from conftest import require_presignd_binary

SEC_BUCKET = "sec-bucket"
GOOD = f"GET /{SEC_BUCKET}/good-key HTTP/1.1\r\nHost: presignd\r\n\r\n".encode()


@pytest.fixture(scope="module")
def sec_daemon(recorder, tmp_path_factory):
    config = PresigndConfig(
        upstreams=[Upstream(name="rec", endpoint=recorder.endpoint, region=recorder.region,
                            access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key)],
        buckets=[Bucket(SEC_BUCKET, "rec")],
        admin_listen="",
    )
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path_factory.mktemp("sec-smuggling"))).start()
    recorder.objects[f"/{SEC_BUCKET}/good-key"] = b"good body"
    yield daemon
    alive = daemon.is_running()
    if alive:
        daemon.stop()
    else:
        daemon.kill()
    assert alive, f"presignd died during the smuggling table:\n{daemon.log_text()}"


def _connect(daemon) -> RawConnection:
    host, port = daemon.listen_addresses[0].rsplit(":", 1)
    return RawConnection(host, int(port), timeout=5)


def _sec_requests(recorder) -> list:
    return [r for r in recorder.snapshot() if r.path.startswith(f"/{SEC_BUCKET}/")]


def _next_request_is_parsed(conn: RawConnection) -> None:
    conn.send(GOOD)
    follow = conn.read_response()
    assert follow.status == 200 and follow.body == b"good body", (follow.status, follow.body[:300])


LONG_LINE = b"GET /" + SEC_BUCKET.encode() + b"/" + b"a" * 9000 + b" HTTP/1.1\r\nHost: presignd\r\n\r\n"
MANY_HEADERS = (b"GET /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\n"
                + b"".join(b"X-H%d: v\r\n" % i for i in range(150)) + b"\r\n")
BIG_HEADER = b"GET /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nX-Big: " + b"v" * 70000 + b"\r\n\r\n"

# (id, request bytes, expected status, the connection closes afterwards)
MALFORMED = [
    ("cl-and-te", b"POST /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nContent-Length: 4\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, True),
    ("te-and-cl", b"POST /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: chunked\r\n"
                  b"Content-Length: 4\r\n\r\n0\r\n\r\n", 400, True),
    ("two-content-lengths", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nContent-Length: 3\r\n"
                            b"Content-Length: 5\r\n\r\nabcde", 400, True),
    ("content-length-list", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nContent-Length: 3, 5\r\n\r\nabcde",
     400, True),
    ("te-chunked-identity", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\n"
                            b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 501, True),
    ("te-identity", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: identity\r\n\r\n", 501, True),
    ("te-chunked-twice", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: chunked\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501, True),
    ("chunk-size-overflow", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: chunked\r\n\r\n"
                            b"10000000000000001\r\nx\r\n0\r\n\r\n", 400, True),
    ("chunk-size-negative", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: chunked\r\n\r\n"
                            b"-1\r\nx\r\n0\r\n\r\n", 400, True),
    ("chunk-size-garbage", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: chunked\r\n\r\n"
                           b"0x5\r\nhello\r\n0\r\n\r\n", 400, True),
    ("content-length-negative", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nContent-Length: -1\r\n\r\n",
     400, True),
    ("content-length-hex", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nContent-Length: 0x10\r\n\r\n",
     400, True),
    ("content-length-plus", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nContent-Length: +3\r\n\r\nabc",
     400, True),
    ("content-length-overflow", b"PUT /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\n"
                                b"Content-Length: 99999999999999999999999\r\n\r\n", 400, True),
    ("obs-fold", b"GET /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nX-A: a\r\n b\r\n\r\n", 400, True),
    ("bare-cr-in-value", b"GET /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nX-A: a\rb\r\n\r\n", 400, True),
    ("bare-cr-line-end", b"GET /sec-bucket/k HTTP/1.1\rHost: presignd\r\n\r\n", 400, True),
    ("bare-lf", b"GET /sec-bucket/k HTTP/1.1\nHost: presignd\n\n", 400, True),
    ("nul-in-header", b"GET /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nX-A: a\x00b\r\n\r\n", 400, True),
    ("nul-in-target", b"GET /sec-bucket/k\x00x HTTP/1.1\r\nHost: presignd\r\n\r\n", 400, True),
    ("space-before-colon", b"GET /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nX-A : b\r\n\r\n", 400, True),
    ("no-host", b"GET /sec-bucket/k HTTP/1.1\r\n\r\n", 400, True),
    ("two-hosts", b"GET /sec-bucket/k HTTP/1.1\r\nHost: presignd\r\nHost: other.example\r\n\r\n", 400, True),
    ("request-line-too-long", LONG_LINE, 414, True),
    ("too-many-headers", MANY_HEADERS, 431, True),
    ("header-section-too-large", BIG_HEADER, 431, True),
    ("http-0.9", b"GET /sec-bucket/k\r\n\r\n", 400, True),
    ("http-2-preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, True),
]


@pytest.mark.parametrize("name,request_bytes,status,closes", MALFORMED, ids=[row[0] for row in MALFORMED])
def test_malformed_request_is_refused(sec_daemon, recorder, name, request_bytes, status, closes):
    before = len(_sec_requests(recorder))
    with _connect(sec_daemon) as conn:
        conn.send(request_bytes)
        try:
            response = conn.read_response()
        except ConnectionClosed:
            pytest.fail(f"{name}: closed without an answer (want {status})")
        assert response.status == status, (name, response.status, response.body[:300])
        error = parse_error(response.body)
        assert error.request_id
        if closes:
            assert response.closes, f"{name}: an error that leaves the framing untrusted must say Connection: close"
            assert conn.closed_by_peer(timeout=5), f"{name}: presignd kept the connection open"
        else:
            _next_request_is_parsed(conn)
    assert len(_sec_requests(recorder)) == before, f"{name}: a rejected request reached the upstream"


# Requests that are well framed but refused: the connection survives and the next request is parsed.
REFUSED_KEEPALIVE = [
    ("absolute-form-other-host", b"GET http://evil.example/sec-bucket/good-key HTTP/1.1\r\nHost: presignd\r\n\r\n",
     400),
    ("absolute-form-other-port", b"GET http://presignd:1/sec-bucket/good-key HTTP/1.1\r\nHost: presignd\r\n\r\n",
     400),
    ("authority-form-get", b"GET evil.example:443 HTTP/1.1\r\nHost: presignd\r\n\r\n", 400),
    ("asterisk-form", b"OPTIONS * HTTP/1.1\r\nHost: presignd\r\n\r\n", 400),
]


@pytest.mark.parametrize("name,request_bytes,status", REFUSED_KEEPALIVE, ids=[row[0] for row in REFUSED_KEEPALIVE])
def test_refused_request_keeps_connection_in_sync(sec_daemon, recorder, name, request_bytes, status):
    before = len(_sec_requests(recorder))
    with _connect(sec_daemon) as conn:
        conn.send(request_bytes)
        response = conn.read_response()
        assert response.status == status, (name, response.status, response.body[:300])
        parse_error(response.body)
        assert not response.closes, f"{name}: a well-framed refusal need not close"
        _next_request_is_parsed(conn)
    assert len(_sec_requests(recorder)) == before + 1, "only the follow-up request reaches the upstream"


def test_connect_is_refused(sec_daemon, recorder):
    before = len(_sec_requests(recorder))
    with _connect(sec_daemon) as conn:
        conn.send(b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n")
        response = conn.read_response()
        assert response.status in (400, 405, 501), response.status
        parse_error(response.body)
        followed = not response.closes
        if followed:
            _next_request_is_parsed(conn)
        else:
            assert conn.closed_by_peer(timeout=5)
    assert len(_sec_requests(recorder)) == before + (1 if followed else 0), "CONNECT never reaches the upstream"


def test_pipelined_smuggling_attempt_stays_one_request(sec_daemon, recorder):
    """A body that looks like a second request is a body, never a request of its own."""
    smuggled = f"GET /{SEC_BUCKET}/smuggled HTTP/1.1\r\nHost: presignd\r\n\r\n".encode()
    with _connect(sec_daemon) as conn:
        conn.send(f"PUT /{SEC_BUCKET}/carrier HTTP/1.1\r\nHost: presignd\r\nContent-Length: {len(smuggled)}\r\n\r\n"
                  .encode() + smuggled + GOOD)
        assert conn.read_response().status == 200
        _follow = conn.read_response()
        assert _follow.status == 200 and _follow.body == b"good body"
    assert recorder.objects.get(f"/{SEC_BUCKET}/carrier") == smuggled
    assert not [r for r in recorder.snapshot() if r.path == f"/{SEC_BUCKET}/smuggled"]


# -- never an open proxy ----------------------------------------------------------------------------------------


class _Tripwire:
    """A listener that must never be contacted: counts connections."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("how", ["absolute-form", "host-header", "forwarded-headers"])
def test_client_cannot_choose_the_upstream(sec_daemon, recorder, how):
    tripwire = _Tripwire()
    evil = f"127.0.0.1:{tripwire.port}"
    key = f"/{SEC_BUCKET}/open-proxy-{how}"
    recorder.objects[key] = b"from the configured upstream"
    if how == "absolute-form":
        request = f"GET http://{evil}{key} HTTP/1.1\r\nHost: {evil}\r\n\r\n"
    elif how == "host-header":
        request = f"GET {key} HTTP/1.1\r\nHost: {evil}\r\n\r\n"
    else:
        request = (f"GET {key} HTTP/1.1\r\nHost: presignd\r\nX-Forwarded-Host: {evil}\r\nX-Forwarded-Proto: https\r\n"
                   f"X-Forwarded-Port: {tripwire.port}\r\nForwarded: host={evil};proto=https\r\n"
                   f"X-Amz-Bucket-Region: evil-1\r\nVia: 1.1 {evil}\r\n\r\n")
    try:
        with _connect(sec_daemon) as conn:
            conn.send(request.encode())
            response = conn.read_response()
        assert response.status == 200 and response.body == b"from the configured upstream"
        arrived = [r for r in recorder.snapshot() if r.path == key]
        assert len(arrived) == 1, "the request goes to the configured upstream"
        assert arrived[-1].header("host") == f"{recorder.host}:{recorder.port}"
        names = arrived[-1].header_names()
        assert not names & {"x-forwarded-host", "x-forwarded-proto", "x-forwarded-port", "forwarded", "via"}
        assert not arrived[-1].problems, arrived[-1].problems
        assert tripwire.hits == 0, "presignd connected to a host named by the client"
    finally:
        tripwire.close()


UPGRADES = [
    "Upgrade: websocket\r\nConnection: Upgrade",
    "Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA",
]


@pytest.mark.parametrize("header", UPGRADES, ids=["websocket", "h2c"])
def test_upgrade_is_never_forwarded(sec_daemon, recorder, header):
    key = f"/{SEC_BUCKET}/upgrade"
    recorder.objects[key] = b"plain"
    with _connect(sec_daemon) as conn:
        conn.send(f"GET {key} HTTP/1.1\r\nHost: presignd\r\n{header}\r\n\r\n".encode())
        response = conn.read_response()
        assert response.status != 101
        if response.status == 200:
            arrived = [r for r in recorder.snapshot() if r.path == key][-1]
            assert "upgrade" not in arrived.header_names() and "http2-settings" not in arrived.header_names()
            _next_request_is_parsed(conn)
        else:
            parse_error(response.body)
