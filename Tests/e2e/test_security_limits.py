"""Safe defaults, limits and timeouts against the real daemon (issue 5): slowloris, idle keep-alive, max
connections per worker (excess connections get 503 SlowDown at once, issue 20), allowed_clients, and refusing a
non-loopback listen address without allow_remote (exit 78, before any bind).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.rawhttp import ConnectionClosed, RawConnection
from harness.s3xml import parse_error

from conftest import require_presignd_binary

BUCKET = "lim-bucket"


def _config(recorder, **server_extra) -> PresigndConfig:
    return PresigndConfig(
        upstreams=[Upstream(name="rec", endpoint=recorder.endpoint, region=recorder.region,
                            access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key)],
        buckets=[Bucket(BUCKET, "rec")],
        admin_listen="",
        server_extra=server_extra,
    )


@pytest.fixture(scope="module")
def lim_daemon(recorder, tmp_path_factory):
    config = _config(recorder, **{"limits.header_timeout": "1s", "limits.idle_timeout": "1s",
                                  "limits.max_connections": 2, "allowed_clients": ["127.0.0.1/32"]})
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path_factory.mktemp("limits"))).start()
    recorder.objects[f"/{BUCKET}/k"] = b"limits"
    yield daemon
    alive = daemon.is_running()
    daemon.stop() if alive else daemon.kill()
    assert alive, f"presignd died during the limits tests:\n{daemon.log_text()}"


def _connect(daemon, source: str | None = None, timeout: float = 5) -> RawConnection:
    host, port = daemon.listen_addresses[0].rsplit(":", 1)
    return RawConnection(host, int(port), timeout=timeout, source=source)


GET = f"GET /{BUCKET}/k HTTP/1.1\r\nHost: presignd\r\n\r\n".encode()


def test_slowloris_head_gets_408_and_close(lim_daemon):
    started = time.monotonic()
    with _connect(lim_daemon) as conn:
        response = None
        for byte in GET:
            try:
                conn.send(bytes([byte]))
            except OSError:
                break
            time.sleep(0.1)
            if time.monotonic() - started > 1.3:
                break
        response = conn.read_response(timeout=5)
        assert response.status == 408 and parse_error(response.body).code == "RequestTimeout"
        assert response.closes and conn.closed_by_peer(timeout=3)
    assert time.monotonic() - started < 4


def test_silent_connection_after_first_byte_gets_408(lim_daemon):
    with _connect(lim_daemon) as conn:
        conn.send(b"G")
        started = time.monotonic()
        response = conn.read_response(timeout=5)
        assert response.status == 408
        assert 0.8 <= time.monotonic() - started <= 3
        assert conn.closed_by_peer(timeout=3)


def test_idle_keepalive_connection_is_closed(lim_daemon):
    with _connect(lim_daemon) as conn:
        conn.send(GET)
        assert conn.read_response().status == 200
        started = time.monotonic()
        assert conn.closed_by_peer(timeout=5), "an idle keep-alive connection stayed open past idle_timeout"
        assert conn.buffer == b"", "presignd wrote something to an idle connection"
        assert 0.8 <= time.monotonic() - started <= 3


def test_excess_connections_get_503_slowdown_at_once_and_a_freed_slot_serves_again(lim_daemon):
    # Issue 20: an excess connection is no longer left unanswered in the kernel backlog.
    first, second = _connect(lim_daemon), _connect(lim_daemon)
    try:
        for conn in (first, second):
            conn.sock.sendall(b"GET /" + BUCKET.encode() + b"/k HTTP/1.1\r\nHost: presignd\r\n\r\n")
            assert conn.read_response().status == 200
        # Both slots are taken (max_connections = 2, one worker) for the next ~1 s (idle_timeout).
        with _connect(lim_daemon) as third:
            third.send(GET)
            response = third.read_response(timeout=0.5)
            assert response.status == 503 and parse_error(response.body).code == "SlowDown"
            assert response.header("Retry-After") == "1" and response.closes
            assert third.closed_by_peer(timeout=1)
        first.close()
        deadline = time.monotonic() + 0.5  # the slot frees as soon as presignd sees the close
        while True:
            with _connect(lim_daemon) as fourth:
                fourth.send(GET)
                response = fourth.read_response(timeout=0.4)
            if response.status == 200 or time.monotonic() > deadline:
                break
        assert response.status == 200 and response.body == b"limits"
    finally:
        first.close()
        second.close()


def test_client_outside_allowed_clients_is_refused(lim_daemon):
    with _connect(lim_daemon, source="127.0.0.2") as conn:
        try:
            conn.send(GET)
        except OSError:
            pass
        with pytest.raises((ConnectionClosed, ConnectionResetError, BrokenPipeError)):
            conn.read_response(timeout=5)
    lim_daemon.wait_for_log(lambda line: "allowed_clients" in line and "127.0.0.2" in line)
    with _connect(lim_daemon, source="127.0.0.1") as conn:  # the allowed range still gets in
        conn.send(GET)
        assert conn.read_response().status == 200


@pytest.mark.parametrize("key", ["listen", "admin_listen"])
def test_non_loopback_listen_without_allow_remote_exits_78_before_binding(recorder, tmp_path, key):
    # Hold the port on 0.0.0.0: had presignd tried to bind it, it would fail with EADDRINUSE (exit 71),
    # not with the allow_remote refusal (exit 78).
    holder = socket.socket()
    holder.bind(("0.0.0.0", 0))  # never listen(): nothing is reachable through it
    port = holder.getsockname()[1]
    try:
        config = _config(recorder)
        if key == "listen":
            config.listen = [f"0.0.0.0:{port}"]
        else:
            config.admin_listen = f"0.0.0.0:{port}"
        path = tmp_path / "remote.toml"
        path.write_text(config.render())
        result = subprocess.run([require_presignd_binary(), "run", "--config", str(path)], capture_output=True,
                                text=True, timeout=20, env={**os.environ, "SWIFT_BACKTRACE": "enable=no"})
    finally:
        holder.close()
    assert result.returncode == 78, (result.returncode, result.stderr)
    assert "allow_remote" in result.stderr and "loopback" in result.stderr, result.stderr
    assert "in use" not in result.stderr.lower(), "presignd tried to bind before refusing"
