"""`presignd healthcheck` (Docker HEALTHCHECK): 0 against a live admin listener, 1 against a dead port."""

from __future__ import annotations

import subprocess

from harness.net import free_port

from conftest import require_presignd_binary


def _healthcheck(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([require_presignd_binary(), "healthcheck", *args], capture_output=True, text=True,
                          timeout=15)


def test_healthcheck_exits_0_against_live_admin(presignd):
    assert _healthcheck("--admin", presignd.admin_address).returncode == 0
    assert _healthcheck("--admin", presignd.admin_address, "--path", "/healthz").returncode == 0


def test_healthcheck_exits_1_against_dead_port():
    result = _healthcheck("--admin", f"127.0.0.1:{free_port()}", "--timeout", "2")
    assert result.returncode == 1
    assert "no answer" in result.stderr


def test_healthcheck_exits_1_on_a_non_200_path(presignd):
    assert _healthcheck("--admin", presignd.admin_address, "--path", "/nope").returncode == 1


def test_healthcheck_usage_error_is_64():
    assert _healthcheck("--admin", "no-port").returncode == 64
