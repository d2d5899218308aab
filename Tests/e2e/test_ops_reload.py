"""Reload on SIGHUP without dropping anything (issue 4).

A 1 GiB download (PRESIGND_OPS_BIG_MIB) is in flight and a keep-alive client sits idle when SIGHUP brings a
config whose bucket moved from /old to /new: the download completes byte for byte, and the idle client's next
request, on the same connection, is routed by the new config. Then SIGHUP with a broken file: the errors are
logged with file:line:col, the reload is counted as failed, and the running config keeps serving.
"""

from __future__ import annotations

import http.client
import os
import re
import signal

from harness import logfmt
from harness.clients import curl
from harness.presignd import Bucket

from conftest import require_presignd_binary
from ops_helpers import (BIG_MIB, PacedDownload, StaticNginx, host_port, metric, nginx_upstream, parse_metrics,
                         start_presignd)


def _reloads(daemon) -> tuple[int, int]:
    samples = parse_metrics(curl(f"{daemon.admin_endpoint}/metrics").body.decode())
    return (int(metric(samples, "presignd_config_reloads_total", result="ok")),
            int(metric(samples, "presignd_config_reloads_total", result="failed")))


def _count(daemon, message: str) -> int:
    return sum(1 for line in daemon.logs if logfmt.parse(line).get("msg") == message)


def test_reload_keeps_transfers_and_keepalive_and_survives_a_broken_file(work_dir):
    size = BIG_MIB << 20
    nginx = StaticNginx().start()
    daemon = None
    try:
        digest = nginx.put_big("big", "big.bin", size)
        nginx.put("photos", "cat.jpg", b"meow")
        upstream = nginx_upstream(nginx)
        daemon = start_presignd(require_presignd_binary(), os.path.join(work_dir, "d"), [upstream],
                                [Bucket("big", "static"), Bucket("photos", "static", mount="/old")])
        host, port = host_port(daemon.listen_addresses[0])

        download = PacedDownload(host, port, "/big/big.bin")
        assert download.response.status == 200
        download.read(8 << 20)

        idle = http.client.HTTPConnection(host, port, timeout=10)
        idle.request("GET", "/old/cat.jpg")
        first = idle.getresponse()
        assert (first.status, first.read()) == (200, b"meow")
        idle_socket = idle.sock
        idle_port = idle_socket.getsockname()[1]

        # Good reload: the bucket moves from /old to /new.
        daemon.config.buckets = [Bucket("big", "static"), Bucket("photos", "static", mount="/new")]
        with open(daemon.config_path, "w") as f:
            f.write(daemon.config.render())
        daemon.proc.send_signal(signal.SIGHUP)
        daemon.wait_for_log(lambda line: logfmt.parse(line).get("msg") == "Reloaded")
        assert _reloads(daemon) == (1, 0)

        download.read(64 << 20)  # the transfer keeps moving under the new config

        idle.request("GET", "/new/cat.jpg")
        moved = idle.getresponse()
        assert (moved.status, moved.read()) == (200, b"meow"), "the idle connection did not see the new mount"
        assert idle.sock is idle_socket and idle.sock.getsockname()[1] == idle_port, "the connection was replaced"
        idle.request("GET", "/old/cat.jpg")
        gone = idle.getresponse()
        gone.read()
        assert gone.status == 404, "the old mount still answers after the reload"

        # Broken reload: errors with file:line:col, old (second) config keeps serving.
        with open(daemon.config_path, "a") as f:
            f.write("\n[server]\nworkers = \"many\"\nunknown_key = 1\n")
        daemon.proc.send_signal(signal.SIGHUP)
        daemon.wait_for_log(lambda line: "Reload failed" in line)
        errors = daemon.wait_for_log(
            lambda line: logfmt.parse(line).get("msg") == "Configuration error"
            and re.search(re.escape(daemon.config_path) + r":\d+:\d+", line) is not None)
        assert errors
        assert _reloads(daemon) == (1, 1)
        idle.request("GET", "/new/cat.jpg")
        still = idle.getresponse()
        assert (still.status, still.read()) == (200, b"meow")
        assert curl(f"{daemon.admin_endpoint}/readyz").status == 200
        idle.close()

        received, got = download.finish()
        assert received == size and got == digest, "the in-flight download was damaged by the reloads"
        assert daemon.is_running()
        assert _count(daemon, "Reloaded") == 1
    finally:
        if daemon is not None:
            if daemon.is_running():
                daemon.stop()
            else:
                daemon.kill()
        nginx.stop()
