"""The cache stores' lifecycle in the daemon (issue 23, step 1): each directory opened before serving and held
while running, a directory another process holds is a start failure with a clear message, a reload that stops
naming a directory lets it go, and one that names it again opens it again."""
import os
import signal
import subprocess
import time

from conftest import require_presignd_binary as presignd_binary
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream


def config(cache_dir: str | None) -> PresigndConfig:
    extra = {"cache": {"directory": cache_dir, "max_size": "64MiB"}} if cache_dir else {}
    return PresigndConfig(
        upstreams=[Upstream("s3", "http://127.0.0.1:9", "AKID", "SECRET")],
        buckets=[Bucket("photos", "s3", access="read-only", extra=extra)],
        admin_listen="")


def cache_stats(config_path: str) -> subprocess.CompletedProcess:
    return subprocess.run([presignd_binary(), "cache", "stats", "--config", config_path],
                          capture_output=True, text=True, timeout=30)


def count(daemon: Presignd, message: str) -> int:
    return sum(1 for line in daemon.logs if f"msg=\"{message}\"" in line or f"msg={message} " in line)


def test_the_daemon_holds_its_directory_and_a_second_owner_cannot_start(work_dir):
    cache_dir = os.path.join(work_dir, "cache")
    daemon = Presignd(presignd_binary(), config(cache_dir), work_dir).start()
    try:
        assert count(daemon, "Cache directory open") == 1, daemon.log_text()
        held = cache_stats(daemon.config_path)
        assert held.returncode == 1 and "in use by another process" in held.stderr, held
        second = Presignd(presignd_binary(), config(cache_dir), work_dir, name="second")
        try:
            second.start(timeout=10)
            raise AssertionError("a second daemon started on a held cache directory")
        except RuntimeError as failure:
            assert "exited with 71" in str(failure), failure
            assert f"cannot open cache directory {cache_dir}" in str(failure), failure
            assert "in use by another process" in str(failure), failure
        # Nothing of the second daemon was served: it failed before binding.
        assert not any("msg=Listening" in line for line in second.logs), second.log_text()
    finally:
        daemon.stop()
    assert cache_stats(daemon.config_path).returncode == 0


def wait_until(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)


def test_a_reload_lets_go_of_a_directory_no_bucket_names_and_opens_it_again(work_dir):
    cache_dir = os.path.join(work_dir, "cache")
    daemon = Presignd(presignd_binary(), config(cache_dir), work_dir).start()
    try:
        with open(daemon.config_path, "w") as f:
            f.write(config(None).render())
        daemon.proc.send_signal(signal.SIGHUP)
        daemon.wait_for_log(lambda line: "msg=Reloaded" in line, timeout=10)
        # The workers take the new settings on their loops; then the store is closed and its lock free.
        wait_until(lambda: cache_stats(config_path_with_cache(work_dir, cache_dir)).returncode == 0)
        with open(daemon.config_path, "w") as f:
            f.write(config(cache_dir).render())
        daemon.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: count(daemon, "Reloaded") == 2)
        assert count(daemon, "Cache directory open") == 2, daemon.log_text()
        held = cache_stats(daemon.config_path)
        assert held.returncode == 1 and "in use by another process" in held.stderr, held
    finally:
        daemon.stop()


def config_path_with_cache(work_dir: str, cache_dir: str) -> str:
    path = os.path.join(work_dir, "with-cache.toml")
    with open(path, "w") as f:
        f.write(config(cache_dir).render())
    return path
