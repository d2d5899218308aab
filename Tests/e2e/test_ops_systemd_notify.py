"""sd_notify over a fake $NOTIFY_SOCKET (issue 4): READY=1 once the listener accepts, WATCHDOG=1 pings at half of
$WATCHDOG_USEC, RELOADING=1 then READY=1 around SIGHUP, STOPPING=1 on SIGTERM, and STATUS= summaries."""

from __future__ import annotations

import os
import signal
import socket
import time

from harness.clients import curl
from harness.presignd import Bucket

from conftest import require_presignd_binary
from ops_helpers import StaticNginx, nginx_upstream, start_presignd


class NotifySocket:
    """The datagram socket systemd would listen on; collects every message presignd sends."""

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.messages: list[tuple[float, str]] = []
        self.cursor = 0  # wait_for looks at messages from here on

    def collect(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                return
            self.messages.append((time.monotonic(), data.decode()))

    def wait_for(self, field: str, timeout: float = 5.0) -> str:
        """The first message after the previous match that contains the line `field`."""
        deadline = time.monotonic() + timeout
        while True:
            for index in range(self.cursor, len(self.messages)):
                message = self.messages[index][1]
                if field in message.split("\n"):
                    self.cursor = index + 1
                    return message
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {field} within {timeout}s; got {[m for _, m in self.messages]}"
            self.collect(min(remaining, 0.2))

    def lines(self) -> list[str]:
        return [line for _, message in self.messages for line in message.split("\n")]

    def close(self) -> None:
        self.sock.close()


def test_sd_notify_ready_watchdog_reload_stopping(work_dir):
    nginx = StaticNginx().start()
    nginx.put("files", "hello.txt", b"hello")
    notify = NotifySocket(work_dir)
    daemon = None
    try:
        daemon = start_presignd(
            require_presignd_binary(), os.path.join(work_dir, "d"), [nginx_upstream(nginx)],
            [Bucket("files", "static")],
            env_extra={"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"})
        ready = notify.wait_for("READY=1")
        # READY=1 means the listener accepts: a request right now is served.
        assert curl(f"{daemon.endpoint}/files/hello.txt").body == b"hello"
        assert any(line.startswith("STATUS=serving on ") for line in ready.split("\n")), ready
        assert daemon.listen_addresses[0] in ready

        # WATCHDOG_USEC=200ms: pings every ~100ms from the main loop.
        before = len([m for _, m in notify.messages if m == "WATCHDOG=1"])
        notify.collect(1.0)
        pings = [t for t, m in notify.messages if m == "WATCHDOG=1"]
        assert len(pings) - before >= 5, f"only {len(pings) - before} WATCHDOG=1 pings in 1s"
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        assert max(gaps) < 0.2, f"watchdog gaps {gaps}"

        daemon.proc.send_signal(signal.SIGHUP)
        reloading = notify.wait_for("RELOADING=1")
        assert any(line.startswith("MONOTONIC_USEC=") for line in reloading.split("\n")), reloading
        after = notify.wait_for("READY=1")
        assert "reloads: 1 ok, 0 failed" in after, after

        daemon.proc.send_signal(signal.SIGTERM)
        notify.wait_for("STOPPING=1")
        assert daemon.proc.wait(timeout=10) == 0
        daemon.exit_code = 0
        order = [line for line in notify.lines() if line in ("READY=1", "RELOADING=1", "STOPPING=1")]
        assert order == ["READY=1", "RELOADING=1", "READY=1", "STOPPING=1"], order
    finally:
        if daemon is not None and daemon.is_running():
            daemon.kill()
        notify.close()
        nginx.stop()


def test_sd_notify_silent_without_socket_and_with_foreign_watchdog_pid(work_dir):
    """No $NOTIFY_SOCKET: nothing is sent and the daemon runs; WATCHDOG_PID of another process: no pings."""
    nginx = StaticNginx().start()
    nginx.put("files", "a", b"a")
    notify = NotifySocket(work_dir)
    try:
        env = {"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": "1"}
        daemon = start_presignd(require_presignd_binary(), os.path.join(work_dir, "d"), [nginx_upstream(nginx)],
                                [Bucket("files", "static")], env_extra=env)
        notify.wait_for("READY=1")
        notify.collect(0.5)
        assert "WATCHDOG=1" not in notify.lines()
        daemon.stop()

        quiet = start_presignd(require_presignd_binary(), os.path.join(work_dir, "q"), [nginx_upstream(nginx)],
                               [Bucket("files", "static")],
                               env_drop=("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"))
        assert curl(f"{quiet.endpoint}/files/a").body == b"a"
        quiet.stop()
    finally:
        notify.close()
        nginx.stop()
