"""Reload edges (issue 18, bugs d and g): a reload reaches the decoder limits of connections that are already
open, and unix-socket listener files do not outlive their listeners (reload or shutdown)."""

from __future__ import annotations

import os
import signal
import socket

from harness import logfmt
from harness.rawhttp import RawConnection

from conftest import require_presignd_binary
from ops_helpers import StaticNginx, host_port, nginx_upstream, start_presignd
from harness.presignd import Bucket


def _reload(daemon, **server_extra) -> None:
    daemon.config.server_extra.update(server_extra)
    with open(daemon.config_path, "w") as f:
        f.write(daemon.config.render())
    before = sum(1 for line in daemon.logs if logfmt.parse(line).get("msg") == "Reloaded")
    daemon.proc.send_signal(signal.SIGHUP)
    daemon.wait_for_log(
        lambda _line: sum(1 for line in daemon.logs if logfmt.parse(line).get("msg") == "Reloaded") > before)


def test_reload_reaches_the_header_limit_of_an_open_keepalive_connection(work_dir):
    """Bug d: an idle keep-alive connection opened before the reload decodes its next head with the new limits."""
    nginx = StaticNginx().start()
    daemon = None
    try:
        nginx.put("photos", "cat.jpg", b"meow")
        daemon = start_presignd(require_presignd_binary(), os.path.join(work_dir, "d"), [nginx_upstream(nginx)],
                                [Bucket("photos", "static")])
        host, port = host_port(daemon.listen_addresses[0])
        big = "x" * 4000  # under the default 64 KiB, over the reloaded 2 KiB
        with RawConnection(host, port) as conn:
            first = conn.request("GET", "/photos/cat.jpg", headers={"X-Padding": big})
            assert (first.status, first.body) == (200, b"meow")
            _reload(daemon, **{"limits.max_header_bytes": "2KiB", "limits.max_request_line_bytes": "1KiB"})
            second = conn.request("GET", "/photos/cat.jpg", headers={"X-Padding": big})
            assert second.status == 431, (second.status, second.body[:200])
        with RawConnection(host, port) as conn:
            small = conn.request("GET", "/photos/cat.jpg")
            assert (small.status, small.body) == (200, b"meow")
    finally:
        if daemon is not None:
            daemon.stop() if daemon.is_running() else daemon.kill()
        nginx.stop()


def _unix_get(path: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5)
        sock.connect(path)
        sock.sendall(b"GET /photos/cat.jpg HTTP/1.1\r\nHost: presignd\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data


def test_unix_socket_files_are_removed_on_reload_and_shutdown(work_dir):
    """Bug g: a unix listener's file goes with the listener: when a reload drops it, and at shutdown (the admin
    listener's too)."""
    nginx = StaticNginx().start()
    daemon = None
    first = os.path.join(work_dir, "first.sock")
    second = os.path.join(work_dir, "second.sock")
    admin = os.path.join(work_dir, "admin.sock")
    try:
        nginx.put("photos", "cat.jpg", b"meow")
        daemon = start_presignd(require_presignd_binary(), os.path.join(work_dir, "d"), [nginx_upstream(nginx)],
                                [Bucket("photos", "static")], listen=[f"unix:{first}"], admin_listen=f"unix:{admin}")
        assert _unix_get(first).endswith(b"meow")
        daemon.config.listen = [f"unix:{second}"]
        _reload(daemon)
        assert _unix_get(second).endswith(b"meow")
        assert not os.path.exists(first), "the dropped listener's socket file is still there after the reload"
        assert daemon.stop() == 0
        assert not os.path.exists(second), "the listener's socket file is still there after shutdown"
        assert not os.path.exists(admin), "the admin listener's socket file is still there after shutdown"
    finally:
        if daemon is not None and daemon.is_running():
            daemon.kill()
        nginx.stop()
