"""curl through presignd: the plain-HTTP user story (GET/PUT/HEAD/DELETE, chunked, Expect: 100-continue)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import urllib.parse

from harness.clients import curl

from conftest import BUCKET


def _url(presignd, key: str) -> str:
    return f"{presignd.endpoint}/{BUCKET}/{urllib.parse.quote(key)}"


OCTETS = ("-H", "Content-Type: application/octet-stream")  # see harness.clients.curl


def _write(path: str, data: bytes) -> str:
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_put_with_content_length_then_get(presignd, moto_s3, work_dir, key_prefix):
    key = key_prefix + "curl put.bin"
    data = os.urandom(200_000)
    path = _write(os.path.join(work_dir, "f"), data)
    put = curl("-X", "PUT", *OCTETS, "--data-binary", "@" + path, _url(presignd, key))
    assert put.status == 200, put.body
    got = curl(_url(presignd, key))
    assert got.status == 200 and got.body == data
    assert got.header("content-length") == str(len(data))
    assert moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data


def test_head(presignd, moto_s3, key_prefix):
    key = key_prefix + "head"
    moto_s3.put_object(Bucket=BUCKET, Key=key, Body=b"0123456789")
    head = curl("-I", _url(presignd, key))
    assert head.status == 200
    assert head.header("content-length") == "10"


def test_delete(presignd, moto_s3, key_prefix):
    key = key_prefix + "delete me"
    moto_s3.put_object(Bucket=BUCKET, Key=key, Body=b"x")
    assert curl("-X", "DELETE", _url(presignd, key)).status == 204
    assert moto_s3.list_objects_v2(Bucket=BUCKET, Prefix=key)["KeyCount"] == 0


def test_chunked_put_from_stdin(presignd, key_prefix):
    key = key_prefix + "chunked"
    data = os.urandom(300_000)
    put = curl("-T", "-", _url(presignd, key), input=data)  # curl sends Transfer-Encoding: chunked, no length
    assert put.status == 200, put.body
    assert curl(_url(presignd, key)).body == data


def test_chunked_put_with_explicit_header(presignd, work_dir, key_prefix):
    key = key_prefix + "chunked-header"
    data = os.urandom(70_000)
    put = curl("-X", "PUT", *OCTETS, "-H", "Transfer-Encoding: chunked", "--data-binary",
               "@" + _write(os.path.join(work_dir, "c"), data), _url(presignd, key))
    assert put.status == 200, put.body
    assert curl(_url(presignd, key)).body == data


def test_put_with_expect_100_continue(presignd, work_dir, key_prefix):
    key = key_prefix + "expect"
    data = os.urandom(64 * 1024)
    put = curl("-X", "PUT", *OCTETS, "-H", "Expect: 100-continue", "--expect100-timeout", "10", "--data-binary",
               "@" + _write(os.path.join(work_dir, "e"), data), _url(presignd, key))
    assert put.status == 200, put.body
    assert any(line.startswith("HTTP/1.1 100") for line in put.all_head_lines), \
        f"presignd should answer 100 Continue itself: {put.all_head_lines}"
    got = curl(_url(presignd, key))
    assert hashlib.sha256(got.body).hexdigest() == hashlib.sha256(data).hexdigest()


def test_range_request(presignd, moto_s3, key_prefix):
    key = key_prefix + "range"
    data = bytes(range(256))
    moto_s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    got = curl("-H", "Range: bytes=10-19", _url(presignd, key))
    assert got.status == 206
    assert got.body == data[10:20]
    assert got.header("content-range") == "bytes 10-19/256"


def test_keep_alive_reuses_connection(presignd, moto_s3, key_prefix):
    key = key_prefix + "keepalive"
    moto_s3.put_object(Bucket=BUCKET, Key=key, Body=b"k")
    url = _url(presignd, key)
    proc = subprocess.run(["curl", "-sS", "-v", "--noproxy", "*", "--max-time", "30", "-o", os.devnull,
                           "-o", os.devnull, url, url], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("< HTTP/1.1 200") == 2, proc.stderr
    assert "Re-using existing connection" in proc.stderr or "Reusing existing connection" in proc.stderr, \
        "presignd should keep the client connection alive between requests"
