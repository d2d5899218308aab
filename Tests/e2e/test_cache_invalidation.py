"""Writes through presignd drop the cached objects they change (issue 23, step 3), after the policy allowed them;
the admin purge drops them on demand and /metrics shows each directory (step 5).

The store is seeded (presignd-cache-probe seed) while the daemon is stopped, the daemon takes the directory and
serves writes to the S3 test server, then the probe reads the store again once the daemon released it: what the
writes named is gone, what reads, other keys and refused writes touched is still there."""
import json
import os
import urllib.error
import urllib.request

import botocore.exceptions
import pytest

from cache_support import probe, seed, seeded_bytes
from conftest import BUCKET, require_presignd_binary as presignd_binary
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from ops_helpers import metric, parse_metrics, promtool_check


@pytest.fixture
def cached(moto, work_dir):
    config = PresigndConfig(
        upstreams=[Upstream("moto", moto.endpoint, moto.access_key_id, moto.secret_access_key)],
        buckets=[Bucket(BUCKET, "moto", extra={
            "allowed_prefixes": ["cache-inv/open/"],
            # Fresh for an hour: a read is answered from the cache and asks the upstream nothing.
            "cache": {"directory": os.path.join(work_dir, "cache"), "max_size": "64MiB", "revalidate_after": "1h"},
        })],
        admin_listen="")
    return config, seed(config, work_dir, BUCKET)


KEYS = ["cache-inv/open/put", "cache-inv/open/delete", "cache-inv/open/read", "cache-inv/open/copy",
        "cache-inv/closed/put"]


def test_writes_through_presignd_drop_what_they_change_and_nothing_else(moto, moto_s3, work_dir, cached):
    config, path = cached
    assert set(probe("seed", path, BUCKET, *KEYS).values()) == {"seeded"}
    moto_s3.put_object(Bucket=BUCKET, Key="cache-inv/open/read", Body=b"upstream")
    daemon = Presignd(presignd_binary(), config, os.path.join(work_dir, "daemon")).start()
    try:
        s3 = moto.client(endpoint=daemon.endpoint)
        s3.put_object(Bucket=BUCKET, Key="cache-inv/open/put", Body=b"new")
        s3.delete_object(Bucket=BUCKET, Key="cache-inv/open/delete")
        assert s3.get_object(Bucket=BUCKET, Key="cache-inv/open/read")["Body"].read() == seeded_bytes(100)
        s3.copy_object(Bucket=BUCKET, Key="cache-inv/open/copy",
                       CopySource={"Bucket": BUCKET, "Key": "cache-inv/open/read"})
        with pytest.raises(botocore.exceptions.ClientError) as refused:
            s3.put_object(Bucket=BUCKET, Key="cache-inv/closed/put", Body=b"no")
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    finally:
        daemon.stop()
    assert probe("lookup", path, BUCKET, *KEYS) == {
        "cache-inv/open/put": "absent",
        "cache-inv/open/delete": "absent",
        "cache-inv/open/read": "present",  # a read changes nothing
        "cache-inv/open/copy": "absent",  # CopyObject's destination
        "cache-inv/closed/put": "present",  # refused by the policy: nothing was written
    }


def test_delete_objects_drops_the_bucket_from_the_cache(moto, moto_s3, work_dir, cached):
    config, path = cached
    probe("seed", path, BUCKET, "cache-inv/open/a", "cache-inv/open/b")
    daemon = Presignd(presignd_binary(), config, os.path.join(work_dir, "daemon")).start()
    try:
        s3 = moto.client(endpoint=daemon.endpoint)
        s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": "cache-inv/open/a"}]})
    finally:
        daemon.stop()
    # Its keys are read after routing: the whole bucket goes, which is never stale.
    assert probe("lookup", path, BUCKET, "cache-inv/open/a", "cache-inv/open/b") == {
        "cache-inv/open/a": "absent", "cache-inv/open/b": "absent"}


def admin_post(daemon: Presignd, body: bytes, token: str | None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{daemon.admin_endpoint}/v1/cache/purge", data=body, headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def cache_samples(daemon: Presignd, directory: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{daemon.admin_endpoint}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    checked = promtool_check(text)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    samples = parse_metrics(text)
    return {name: metric(samples, name, directory=directory)
            for name in ("presignd_cache_objects", "presignd_cache_size_bytes", "presignd_cache_max_size_bytes")}


def test_the_admin_purge_and_metrics_see_the_store_the_daemon_holds(moto, work_dir, cached):
    config, path = cached
    token = "cache-admin-token-0123456789"
    token_file = os.path.join(work_dir, "admin.token")
    with open(token_file, "w") as f:
        f.write(token + "\n")
    os.chmod(token_file, 0o600)
    config.admin_listen = "127.0.0.1:0"
    config.server_extra = {"admin_token_file": token_file}
    probe("seed", path, BUCKET, "cache-inv/open/x/1", "cache-inv/open/x/2", "cache-inv/open/y")
    directory = os.path.join(work_dir, "cache")
    daemon = Presignd(presignd_binary(), config, os.path.join(work_dir, "daemon")).start()
    try:
        assert cache_samples(daemon, directory) == {
            "presignd_cache_objects": 3, "presignd_cache_size_bytes": 300, "presignd_cache_max_size_bytes": 64 << 20}
        # Behind the admin token, like the other admin actions.
        assert admin_post(daemon, b"{}", None)[0] == 401
        assert admin_post(daemon, b"{}", "wrong-token")[0] == 401
        assert admin_post(daemon, b'{"bucket": "nope"}', token)[0] == 400
        assert admin_post(daemon, b'{"bucket": "' + BUCKET.encode() + b'", "prefx": "a"}', token)[0] == 400
        body = json.dumps({"bucket": BUCKET, "prefix": "cache-inv/open/x/"}).encode()
        assert admin_post(daemon, body, token) == (200, {"purged": 2})
        assert cache_samples(daemon, directory)["presignd_cache_objects"] == 1
        assert admin_post(daemon, b"{}", token) == (200, {"purged": 1})
        assert cache_samples(daemon, directory)["presignd_cache_objects"] == 0
    finally:
        daemon.stop()
