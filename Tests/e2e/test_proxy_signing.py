"""What presignd sends upstream, checked by the verifying recorder (what moto does not check).

Every request through /rec-bucket must carry a SigV4 signature that botocore recomputes to the same value over
exactly what arrived, with the configured region in the scope, every x-amz-* header signed, a payload hash that
matches the body when it is a hash, a canonical wire path, and no client credentials.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.parse

import pytest

from harness.clients import curl
from harness.keys import SPECIAL_KEYS

from conftest import RECORDER_BUCKET


def _only(recorder, prefix: str, method: str | None = None):
    found = [r for r in recorder.requests_for(f"/{RECORDER_BUCKET}/{urllib.parse.quote(prefix)}")
             if method is None or r.method == method]
    assert found, f"the recorder saw no {method or ''} request under {prefix}: {[r.target for r in recorder.snapshot()]}"
    return found


def _assert_clean(requests):
    for r in requests:
        assert r.problems == [], f"{r.method} {r.target}:\n" + "\n".join(r.problems)


def test_get_is_signed_correctly(presignd, recorder, key_prefix):
    key = key_prefix + "hello"
    recorder.objects[f"/{RECORDER_BUCKET}/{key}"] = b"recorded hello"
    got = curl(f"{presignd.endpoint}/{RECORDER_BUCKET}/{key}")
    assert got.status == 200 and got.body == b"recorded hello"
    (req,) = _only(recorder, key_prefix, "GET")
    _assert_clean([req])
    cred = req.header("authorization").split("Credential=")[1].split(",")[0]
    assert cred.split("/")[0] == recorder.access_key_id and cred.split("/")[2] == recorder.region


@pytest.mark.parametrize("name", SPECIAL_KEYS)
def test_special_keys_are_signed_and_sent_canonically(s3, recorder, key_prefix, name):
    key = key_prefix + name
    s3.put_object(Bucket=RECORDER_BUCKET, Key=key, Body=b"payload")
    assert recorder.objects.get(f"/{RECORDER_BUCKET}/{key}") == b"payload", \
        f"stored under {[k for k in recorder.objects if k.startswith('/' + RECORDER_BUCKET + '/' + key_prefix)]}"
    assert s3.get_object(Bucket=RECORDER_BUCKET, Key=key)["Body"].read() == b"payload"
    _assert_clean(_only(recorder, key_prefix))


def test_boto3_put_headers_are_signed_and_expect_is_not(s3, recorder, key_prefix):
    key = key_prefix + "boto3-put"
    s3.put_object(Bucket=RECORDER_BUCKET, Key=key, Body=os.urandom(4096), Metadata={"color": "blue"})
    (req,) = _only(recorder, key_prefix, "PUT")
    _assert_clean([req])
    signed = req.signed_headers()
    assert "x-amz-meta-color" in signed and req.header("x-amz-meta-color") == "blue"
    assert "expect" not in signed
    # boto3 UNSIGNED over http sends a CRC32 checksum header; it must arrive and be signed.
    for name in req.header_names():
        if name.startswith("x-amz-checksum-"):
            assert name in signed


def test_client_credentials_are_stripped(presignd, recorder, key_prefix):
    key = key_prefix + "evil"
    recorder.objects[f"/{RECORDER_BUCKET}/{key}"] = b"x"
    forged = ("AWS4-HMAC-SHA256 Credential=AKIDEVILCLIENT/20200101/us-east-1/s3/aws4_request, "
              "SignedHeaders=host, Signature=" + "0" * 64)
    got = curl("-H", f"Authorization: {forged}", "-H", "X-Amz-Security-Token: evil-token",
               f"{presignd.endpoint}/{RECORDER_BUCKET}/{key}")
    assert got.status == 200
    (req,) = _only(recorder, key_prefix, "GET")
    _assert_clean([req])
    auths = [v for k, v in req.headers if k.lower() == "authorization"]
    assert len(auths) == 1 and "AKIDEVILCLIENT" not in auths[0]
    assert req.header("x-amz-security-token") is None


def test_client_query_signature_is_stripped(presignd, recorder, key_prefix):
    key = key_prefix + "presigned-by-client"
    recorder.objects[f"/{RECORDER_BUCKET}/{key}"] = b"x"
    query = ("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEVIL%2F20200101%2Fus-east-1%2Fs3%2Faws4_request"
             "&X-Amz-Date=20200101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=" + "0" * 64)
    got = curl(f"{presignd.endpoint}/{RECORDER_BUCKET}/{key}?{query}")
    assert got.status == 200
    (req,) = _only(recorder, key_prefix, "GET")
    _assert_clean([req])
    assert "X-Amz-Signature" not in req.target and "AKIDEVIL" not in req.target


def test_client_payload_hash_is_kept_and_signed(presignd, recorder, work_dir, key_prefix):
    key = key_prefix + "hashed"
    data = os.urandom(10_000)
    path = os.path.join(work_dir, "hashed")
    with open(path, "wb") as f:
        f.write(data)
    digest = hashlib.sha256(data).hexdigest()
    put = curl("-X", "PUT", "-H", f"x-amz-content-sha256: {digest}", "--data-binary", "@" + path,
               f"{presignd.endpoint}/{RECORDER_BUCKET}/{key}")
    assert put.status == 200, put.body
    (req,) = _only(recorder, key_prefix, "PUT")
    _assert_clean([req])
    assert req.header("x-amz-content-sha256") == digest and req.body_sha256 == digest


def test_client_amz_headers_are_signed(presignd, recorder, key_prefix):
    key = key_prefix + "meta"
    put = curl("-X", "PUT", "-H", "x-amz-meta-owner: e2e", "-H", "x-amz-storage-class: STANDARD",
               "--data-binary", "x", f"{presignd.endpoint}/{RECORDER_BUCKET}/{key}")
    assert put.status == 200, put.body
    (req,) = _only(recorder, key_prefix, "PUT")
    _assert_clean([req])
    assert {"x-amz-meta-owner", "x-amz-storage-class"} <= set(req.signed_headers())


def test_chunked_client_body_arrives_whole(presignd, recorder, key_prefix):
    key = key_prefix + "chunked"
    data = os.urandom(200_000)
    put = curl("-T", "-", f"{presignd.endpoint}/{RECORDER_BUCKET}/{key}", input=data)
    assert put.status == 200, put.body
    (req,) = _only(recorder, key_prefix, "PUT")
    _assert_clean([req])
    assert req.body == data


def test_expect_is_answered_locally_and_body_forwarded(presignd, recorder, work_dir, key_prefix):
    key = key_prefix + "expect"
    data = os.urandom(32 * 1024)
    path = os.path.join(work_dir, "expect")
    with open(path, "wb") as f:
        f.write(data)
    put = curl("-X", "PUT", "-H", "Expect: 100-continue", "--data-binary", "@" + path,
               f"{presignd.endpoint}/{RECORDER_BUCKET}/{key}")
    assert put.status == 200
    (req,) = _only(recorder, key_prefix, "PUT")
    _assert_clean([req])
    assert req.body == data
    assert "expect" not in req.signed_headers()


def test_repeated_and_interleaved_requests_each_arrive_as_sent(presignd, recorder, key_prefix):
    """Identical and different bodyless requests interleaved on one keep-alive connection must each arrive
    exactly as sent and correctly signed (each is signed on its own: there is no signed-head cache)."""
    from ops_helpers import host_port

    one, two = key_prefix + "one", key_prefix + "two"
    recorder.objects[f"/{RECORDER_BUCKET}/{one}"] = b"the first object"
    recorder.objects[f"/{RECORDER_BUCKET}/{two}"] = b"the second object"
    plan = [(one, None), (one, None), (two, None), (one, "a"), (one, None), (one, "b"), (one, "a"), (two, None)] * 3
    host, port = host_port(presignd.listen_addresses[0])
    conn = http.client.HTTPConnection(host, port, timeout=20)
    try:
        for key, check in plan:
            conn.request("GET", f"/{RECORDER_BUCKET}/{key}", headers={"X-Check": check} if check else {})
            response = conn.getresponse()
            body = response.read()
            assert (response.status, body) == (200, recorder.objects[f"/{RECORDER_BUCKET}/{key}"]), (key, check)
    finally:
        conn.close()
    recorded = _only(recorder, key_prefix, "GET")
    assert [(r.path, r.header("x-check")) for r in recorded] == [
        (f"/{RECORDER_BUCKET}/{key}", check) for key, check in plan]
    _assert_clean(recorded)
