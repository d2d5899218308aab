"""Daemon lifecycle with its own short-lived instances: fixed-bucket mount, no admin listener, SIGTERM → 0."""

from __future__ import annotations

import os
import signal
import subprocess

from harness import logfmt
from harness.clients import curl
from harness.net import free_port
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream

from conftest import BUCKET, require_presignd_binary


def _moto_upstream(moto, nginx_front, test_ca) -> Upstream:
    return Upstream(name="moto", endpoint=nginx_front.endpoint("good"), ca_file=test_ca.ca_file,
                    access_key_id=moto.access_key_id, secret_access_key=moto.secret_access_key)


def test_fixed_bucket_mount_without_admin(moto, moto_s3, nginx_front, test_ca, work_dir, key_prefix):
    moto_s3.put_object(Bucket=BUCKET, Key=key_prefix + "movie.mp4", Body=b"frames")
    config = PresigndConfig(upstreams=[_moto_upstream(moto, nginx_front, test_ca)],
                            buckets=[Bucket(BUCKET, "moto", mount="/", access="read-only")], admin_listen="")
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "fixed")).start()
    try:
        assert daemon.admin_address is None
        got = curl(f"{daemon.endpoint}/{key_prefix}movie.mp4")
        assert got.status == 200 and got.body == b"frames"
        assert curl("-H", "Range: bytes=1-2", f"{daemon.endpoint}/{key_prefix}movie.mp4").body == b"ra"
    finally:
        daemon.stop()
    assert daemon.exit_code == 0


def test_two_listeners_both_serve(moto, moto_s3, nginx_front, test_ca, work_dir, key_prefix):
    moto_s3.put_object(Bucket=BUCKET, Key=key_prefix + "k", Body=b"both")
    config = PresigndConfig(upstreams=[_moto_upstream(moto, nginx_front, test_ca)],
                            buckets=[Bucket(BUCKET, "moto")], listen=["127.0.0.1:0", "[::1]:0"])
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "two")).start()
    try:
        assert len(set(daemon.endpoints)) == 2
        for endpoint in daemon.endpoints:
            assert curl(f"{endpoint}/{BUCKET}/{key_prefix}k").body == b"both"
    finally:
        daemon.stop()


def test_second_daemon_on_a_served_port_exits_71_address_in_use(moto, moto_s3, nginx_front, test_ca, work_dir,
                                                                key_prefix):
    """SO_REUSEPORT (one socket per worker) must not let a second presignd share a port and take half its clients."""
    moto_s3.put_object(Bucket=BUCKET, Key=key_prefix + "one", Body=b"first")
    port = free_port()
    config = PresigndConfig(upstreams=[_moto_upstream(moto, nginx_front, test_ca)], buckets=[Bucket(BUCKET, "moto")],
                            listen=[f"127.0.0.1:{port}"], admin_listen="", workers=2)
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "first")).start()
    try:
        second = os.path.join(work_dir, "second.toml")
        with open(second, "w") as f:
            f.write(config.render())
        try:
            result = subprocess.run([require_presignd_binary(), "run", "--config", second], capture_output=True,
                                    text=True, timeout=20, env={**os.environ, "SWIFT_BACKTRACE": "enable=no"})
        except subprocess.TimeoutExpired:
            raise AssertionError(f"a second presignd started on 127.0.0.1:{port}, which the first one serves")
        assert result.returncode == 71, (result.returncode, result.stderr)
        assert "in use" in result.stderr.lower() and f"127.0.0.1:{port}" in result.stderr, result.stderr
        for _ in range(8):  # every connection still reaches the first daemon
            assert curl(f"{daemon.endpoint}/{BUCKET}/{key_prefix}one").body == b"first"
    finally:
        daemon.stop()


def test_reload_adding_a_listener_keeps_serving_the_fixed_port(moto, moto_s3, nginx_front, test_ca, work_dir,
                                                               key_prefix):
    """The port check must not refuse a reload the port this daemon itself already serves."""
    moto_s3.put_object(Bucket=BUCKET, Key=key_prefix + "r", Body=b"reloaded")
    port = free_port()
    config = PresigndConfig(upstreams=[_moto_upstream(moto, nginx_front, test_ca)], buckets=[Bucket(BUCKET, "moto")],
                            listen=[f"127.0.0.1:{port}"], admin_listen="", workers=2)
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "grow")).start()
    try:
        config.listen = [f"127.0.0.1:{port}", "127.0.0.1:0"]
        with open(daemon.config_path, "w") as f:
            f.write(config.render())
        daemon.proc.send_signal(signal.SIGHUP)
        daemon.wait_for_log(lambda line: logfmt.parse(line).get("msg") in ("Reloaded", "Reload failed; keeping the "
                                                                           "running configuration"), timeout=10)
        assert not any(logfmt.parse(line).get("msg", "").startswith("Reload failed") for line in daemon.logs), \
            daemon.log_text()
        addresses = [logfmt.parse(line).get("listen.address") for line in daemon.logs
                     if logfmt.parse(line).get("msg") == "Listening"]
        fresh = [a for a in addresses if a != f"127.0.0.1:{port}"]
        assert fresh, daemon.log_text()
        for endpoint in (f"http://127.0.0.1:{port}", f"http://{fresh[-1]}"):
            assert curl(f"{endpoint}/{BUCKET}/{key_prefix}r").body == b"reloaded"
    finally:
        daemon.stop()


def test_sigterm_exits_zero_promptly(moto, nginx_front, test_ca, work_dir):
    config = PresigndConfig(upstreams=[_moto_upstream(moto, nginx_front, test_ca)], buckets=[Bucket(BUCKET, "moto")])
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "term")).start()
    assert daemon.stop(timeout=5) == 0


def test_sigterm_with_several_workers_exits_zero(moto, moto_s3, nginx_front, test_ca, work_dir, key_prefix):
    """Regression: workers ending together coalesced their exit events and the daemon never stopped."""
    moto_s3.put_object(Bucket=BUCKET, Key=key_prefix + "w", Body=b"workers")
    config = PresigndConfig(upstreams=[_moto_upstream(moto, nginx_front, test_ca)], buckets=[Bucket(BUCKET, "moto")],
                            workers=4)
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "workers")).start()
    for _ in range(8):
        assert curl(f"{daemon.endpoint}/{BUCKET}/{key_prefix}w").body == b"workers"
    assert daemon.stop(timeout=5) == 0


def test_unix_listener_serves_with_mode_0660_and_is_removed_on_exit(moto, moto_s3, nginx_front, test_ca, work_dir,
                                                                    key_prefix):
    moto_s3.put_object(Bucket=BUCKET, Key=key_prefix + "u", Body=b"unix")
    socket_path = os.path.join(work_dir, "presignd.sock")
    config = PresigndConfig(upstreams=[_moto_upstream(moto, nginx_front, test_ca)], buckets=[Bucket(BUCKET, "moto")],
                            listen=[f"unix:{socket_path}", "127.0.0.1:0"], workers=2)
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "unix")).start()
    try:
        assert os.stat(socket_path).st_mode & 0o777 == 0o660
        got = curl("--unix-socket", socket_path, f"http://presignd/{BUCKET}/{key_prefix}u")
        assert got.status == 200 and got.body == b"unix"
    finally:
        assert daemon.stop(timeout=5) == 0
    assert not os.path.exists(socket_path)
