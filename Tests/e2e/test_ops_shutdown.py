"""Graceful shutdown (issue 4, DESIGN §5): SIGTERM during a 1 GiB transfer (PRESIGND_OPS_BIG_MIB) lets it
finish intact and exits 0; new connections are refused from SIGTERM on; /readyz answers 503 while draining."""

from __future__ import annotations

import http.client
import os
import signal
import time

from harness.clients import curl
from harness.net import wait_until
from harness.presignd import Bucket

from conftest import require_presignd_binary
from ops_helpers import BIG_MIB, PacedDownload, StaticNginx, connection_refused, host_port, nginx_upstream, start_presignd


def test_sigterm_finishes_in_flight_transfer_and_refuses_new_connections(work_dir):
    size = BIG_MIB << 20
    nginx = StaticNginx().start()
    daemon = None
    try:
        digest = nginx.put_big("big", "big.bin", size)
        nginx.put("files", "small", b"small")
        daemon = start_presignd(require_presignd_binary(), os.path.join(work_dir, "d"), [nginx_upstream(nginx)],
                                [Bucket("big", "static"), Bucket("files", "static")])
        address = daemon.listen_addresses[0]
        host, port = host_port(address)

        download = PacedDownload(host, port, "/big/big.bin")
        assert download.response.status == 200
        download.read(16 << 20)
        idle = http.client.HTTPConnection(host, port, timeout=10)
        idle.request("GET", "/files/small")
        assert idle.getresponse().read() == b"small"

        daemon.proc.send_signal(signal.SIGTERM)
        wait_until(lambda: connection_refused(address), 5, "listener closed after SIGTERM")
        assert curl(f"{daemon.admin_endpoint}/readyz").status == 503
        assert curl(f"{daemon.admin_endpoint}/healthz").status == 200
        # The idle keep-alive connection is closed by the drain (no request was in flight on it).
        wait_until(lambda: idle.sock.recv(1) == b"", 5, "idle keep-alive connection closed by the drain")
        idle.close()
        assert daemon.is_running(), "presignd exited with a transfer in flight"

        time.sleep(0.3)
        received, got = download.finish()
        assert received == size and got == digest, "the in-flight transfer was cut or damaged by SIGTERM"
        code = daemon.proc.wait(timeout=10)
        daemon.exit_code = code
        assert code == 0, daemon.log_text()
        assert connection_refused(address)
        daemon.wait_for_log(lambda line: "msg=Stopped" in line)  # the stderr reader may lag the exit
        assert "error.code=aborted" not in daemon.log_text()
    finally:
        if daemon is not None and daemon.is_running():
            daemon.kill()
        nginx.stop()
