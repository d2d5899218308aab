"""The read cache's configuration and offline command (issue 23): checked and summarised without a warning, and
`presignd cache stats|purge` on a directory the daemon does not hold."""
import os
import subprocess

from conftest import require_presignd_binary as presignd_binary

CONFIG = """
[upstream.r2]
provider = "r2"
account_id = "0123456789abcdef0123456789abcdef"
access_key_id = "AKID"
secret_access_key = "SECRET"

[[bucket]]
name = "photos"
upstream = "r2"
[bucket.cache]
directory = "cache"
max_size = "1GiB"

[[bucket]]
name = "videos"
upstream = "r2"
cache = { directory = "cache", max_size = "1GiB", slice_size = "4MiB" }
"""


def run(*args):
    return subprocess.run([presignd_binary(), *args], capture_output=True, text=True, timeout=30)


def write_config(tmp_path, text=CONFIG):
    path = tmp_path / "presignd.toml"
    path.write_text(text)
    return str(path)


def test_check_config_summarises_the_cache(tmp_path):
    result = run("check-config", "--config", write_config(tmp_path))
    assert result.returncode == 0, result.stderr
    directory = os.path.join(str(tmp_path), "cache")
    assert f"cache {directory}: max_size 1GiB, buckets photos (slice 1MiB" in result.stdout
    assert "videos (slice 4MiB" in result.stdout
    assert "cache" not in result.stderr  # a working cache is not a warning


def test_a_second_cap_for_a_shared_directory_is_a_config_error(tmp_path):
    text = CONFIG.replace('slice_size = "4MiB"', 'max_size = "2GiB"').replace('max_size = "1GiB", max_size', "max_size")
    result = run("check-config", "--config", write_config(tmp_path, text))
    assert result.returncode == 78, result.stdout
    assert "is shared with bucket 'photos'" in result.stderr


def test_stats_and_purge_work_offline(tmp_path):
    config = write_config(tmp_path)
    result = run("cache", "stats", "--config", config)
    assert result.returncode == 0, result.stderr
    assert "not created yet" in result.stdout
    os.makedirs(tmp_path / "cache" / "objects" / "ab")
    (tmp_path / "cache" / "objects" / "ab" / "stray").write_text("x")
    result = run("cache", "stats", "--config", config)
    assert result.returncode == 0, result.stderr
    assert "integrity check dropped 0 objects and 1 files" in result.stdout
    assert "0 objects, 0 slices, 0 bytes of 1GiB" in result.stdout
    assert "  bucket photos: 0 objects" in result.stdout and "  bucket videos: 0 objects" in result.stdout
    result = run("cache", "purge", "--config", config, "--bucket", "photos", "--prefix", "a/")
    assert result.returncode == 0, result.stderr
    assert "purged 0 objects" in result.stdout


def test_cache_usage_mistakes(tmp_path):
    config = write_config(tmp_path)
    assert run("cache", "--config", config).returncode == 64
    assert run("cache", "stats", "--config", config, "--prefix", "a/").returncode == 64
    result = run("cache", "stats", "--config", config, "--bucket", "nope")
    assert result.returncode == 78 and "no [bucket.cache]" in result.stderr


def test_the_startup_log_names_each_cache_directory_without_a_warning(tmp_path):
    text = '[server]\nlisten = ["127.0.0.1:0"]\nadmin_listen = ""\n' + CONFIG
    daemon = subprocess.Popen([presignd_binary(), "run", "--config", write_config(tmp_path, text)],
                              stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in daemon.stderr:
            lines.append(line)
            if "msg=Listening" in line:
                break
        assert [line for line in lines if "Cache directory open" in line and "level=info" in line], lines
        assert not [line for line in lines if "level=warning" in line and "cache" in line.lower()], lines
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
