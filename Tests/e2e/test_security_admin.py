"""Who may use the admin listener's presign API (issue 19 §6), end to end.

A TCP admin listener without `admin_token_file` serves health and metrics but not the presign API unless the config
says `presign_api = "open"`; `check-config` says what to write. A unix admin listener has its own mode and owner
(`admin_socket_mode`, `admin_socket_owner`, `admin_socket_group`), so a user the mode leaves out cannot connect at
all, while the proxy socket beside it stays open to them.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile

import pytest

from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from presign_support import http

from conftest import BUCKET, require_presignd_binary

NOBODY = 65534


def _config(moto, **kwargs) -> PresigndConfig:
    return PresigndConfig(
        upstreams=[Upstream(name="moto", endpoint=moto.endpoint, access_key_id=moto.access_key_id,
                            secret_access_key=moto.secret_access_key)],
        buckets=[Bucket(BUCKET, "moto")],
        **kwargs)


def _presign(endpoint: str) -> tuple[int, dict]:
    status, _, body = http(f"{endpoint}/v1/presign", "POST", json.dumps({"bucket": BUCKET, "key": "k"}).encode(),
                           {"Content-Type": "application/json"})
    return status, json.loads(body)


def test_tcp_admin_without_token_keeps_the_presign_api_closed_unless_opened(moto, tmp_path):
    binary = require_presignd_binary()
    closed = Presignd(binary, _config(moto), str(tmp_path)).start()
    try:
        status, answer = _presign(closed.admin_endpoint)
        assert status == 403 and answer["error"]["code"] == "AccessDenied", answer
        assert 'presign_api = "open"' in answer["error"]["message"]
        assert http(f"{closed.admin_endpoint}/healthz")[0] == 200, "health must stay served"
        check = subprocess.run([binary, "check-config", "--config", closed.config_path], capture_output=True,
                               text=True, timeout=30)
        assert check.returncode == 0, check.stderr
        assert "presign API: off" in check.stdout and 'presign_api = "open"' in check.stdout, check.stdout
    finally:
        closed.stop()
    opened = Presignd(binary, _config(moto, server_extra={"presign_api": "open"}), str(tmp_path), name="opened").start()
    try:
        status, answer = _presign(opened.admin_endpoint)
        assert status == 200 and answer["url"].startswith("http://"), answer
    finally:
        opened.stop()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_unix_admin_socket_has_its_own_mode_and_owner(moto, tmp_path):
    socket_dir = tempfile.mkdtemp(prefix="presignd-admin-")
    os.chmod(socket_dir, 0o755)  # another local user must reach the directory
    try:
        config = _config(moto, listen=[f"unix:{socket_dir}/proxy.sock"], admin_listen=f"unix:{socket_dir}/admin.sock",
                         server_extra={"unix_socket_mode": "0666", "admin_socket_mode": "0660",
                                       "admin_socket_group": str(NOBODY - 1)})
        daemon = Presignd(require_presignd_binary(), config, str(tmp_path)).start()
        try:
            admin = os.stat(f"{socket_dir}/admin.sock")
            assert stat.S_IMODE(admin.st_mode) == 0o660 and admin.st_gid == NOBODY - 1 and admin.st_uid == 0
            assert stat.S_IMODE(os.stat(f"{socket_dir}/proxy.sock").st_mode) == 0o666

            def curl(sock: str, url: str, *args: str, uid: int | None = None) -> subprocess.CompletedProcess:
                argv = ["curl", "-s", "--unix-socket", sock, "-w", "\n%{http_code}", *args, url]
                if uid is not None:
                    argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]
                return subprocess.run(argv, capture_output=True, text=True, timeout=30)

            request = ["-X", "POST", "-H", "Content-Type: application/json", "--data",
                       json.dumps({"bucket": BUCKET, "key": "k"})]
            stranger = curl(f"{socket_dir}/admin.sock", "http://localhost/v1/presign", *request, uid=NOBODY)
            assert stranger.returncode == 7, f"nobody must not connect to the admin socket: {stranger}"
            # The admin socket's group may: open by default on a unix admin listener.
            member = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY - 1}", "--clear-groups", "curl", "-s",
                      "--unix-socket", f"{socket_dir}/admin.sock", "-w", "\n%{http_code}", *request,
                      "http://localhost/v1/presign"]
            allowed = subprocess.run(member, capture_output=True, text=True, timeout=30)
            assert allowed.stdout.endswith("\n200") and '"url"' in allowed.stdout, allowed
            # The proxy socket beside it stays open to the stranger (0666).
            proxied = curl(f"{socket_dir}/proxy.sock", f"http://localhost/{BUCKET}/missing", uid=NOBODY)
            assert proxied.returncode == 0 and proxied.stdout.endswith("\n404"), proxied
        finally:
            daemon.stop()
    finally:
        shutil.rmtree(socket_dir, ignore_errors=True)
