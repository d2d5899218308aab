"""curl through presignd: GET, ranged GET, HEAD, PUT (Content-Length, chunked without a length, Expect:
100-continue), DELETE, and big downloads whose SHA-256 must match: 64 MiB through moto over TLS, and 1 GiB
from a plain-HTTP nginx upstream serving a file (moto keeps objects in memory and is far too slow for 1 GiB:
64 MiB alone takes a few seconds there).
"""

from __future__ import annotations

import hashlib
import os
import time
import urllib.parse

import pytest

from harness.clients import curl as _curl
from harness.clients_extra import StaticNginx, count_op, curl_sha256, patterned_file, random_file
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream

from conftest import BUCKET, require_presignd_binary

OCTETS = ("-H", "Content-Type: application/octet-stream")  # see harness.clients.curl


def curl(*args, **kwargs):
    count_op("curl")
    return _curl(*args, **kwargs)


def _url(presignd, key: str, bucket: str = BUCKET) -> str:
    return f"{presignd.endpoint}/{bucket}/{urllib.parse.quote(key)}"


def test_get_range_head_delete(presignd, moto_s3, key_prefix):
    key = key_prefix + "curl ü+=.bin"
    data = os.urandom(100_000)
    moto_s3.put_object(Bucket=BUCKET, Key=key, Body=data, ContentType="application/x-curl")
    url = _url(presignd, key)

    got = curl(url)
    assert got.status == 200 and got.body == data
    assert got.header("content-type") == "application/x-curl" and got.header("etag")

    part = curl("-r", "1000-1999", url)
    assert part.status == 206 and part.body == data[1000:2000]
    assert part.header("content-range") == "bytes 1000-1999/100000"
    tail = curl("-H", "Range: bytes=-10", url)
    assert tail.status == 206 and tail.body == data[-10:]
    bad = curl("-H", "Range: bytes=200000-", url)
    assert bad.status == 416 and b"InvalidRange" in bad.body

    head = curl("-I", url)
    assert head.status == 200 and head.header("content-length") == "100000"
    assert head.header("etag") == got.header("etag")

    assert curl("-X", "DELETE", url).status == 204
    assert curl("-I", url).status == 404
    missing = curl(url)
    assert missing.status == 404 and b"<Code>NoSuchKey</Code>" in missing.body


def test_put_with_content_length(presignd, moto_s3, key_prefix):
    key = key_prefix + "cl.bin"
    path, digest = random_file(1_000_003)
    put = curl("-T", path, *OCTETS, "-H", "Expect:", _url(presignd, key))  # Content-Length, no Expect
    assert put.status == 200, put.body
    assert hashlib.sha256(moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()).hexdigest() == digest


def test_put_chunked_without_length(presignd, moto_s3, key_prefix):
    key = key_prefix + "chunked.bin"
    data = os.urandom(2 * 1024 * 1024 + 5)
    put = curl("-T", "-", *OCTETS, _url(presignd, key), input=data)  # Transfer-Encoding: chunked, no length
    assert put.status == 200, put.body
    assert moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data
    assert curl(_url(presignd, key)).body == data


def test_put_expect_100_continue(presignd, moto_s3, key_prefix):
    key = key_prefix + "expect.bin"
    path, digest = random_file(3 * 1024 * 1024 + 1)
    put = curl("-T", path, *OCTETS, "-H", "Expect: 100-continue", "--expect100-timeout", "30", _url(presignd, key))
    assert put.status == 200, put.body
    assert any(line.startswith("HTTP/1.1 100") for line in put.all_head_lines), put.all_head_lines
    assert hashlib.sha256(moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()).hexdigest() == digest


def test_put_expect_100_continue_refused_early(presignd, key_prefix):
    """A write the daemon refuses (read-only bucket) with Expect: the refusal comes without the body."""
    path, _ = random_file(1_000_003)
    t0 = time.monotonic()
    put = curl("-T", path, *OCTETS, "-H", "Expect: 100-continue", "--expect100-timeout", "30",
               _url(presignd, key_prefix + "nope", bucket="e2e-readonly"))
    assert put.status == 403 and b"AccessDenied" in put.body, put.body
    assert time.monotonic() - t0 < 20


def test_download_64mib_through_moto_sha256(presignd, moto_s3, key_prefix):
    key = key_prefix + "big64.bin"
    path, digest = random_file(64 * 1024 * 1024 + 12345)
    with open(path, "rb") as f:
        moto_s3.put_object(Bucket=BUCKET, Key=key, Body=f)
    status, got, size = curl_sha256(_url(presignd, key))
    assert (status, size, got) == (200, 64 * 1024 * 1024 + 12345, digest)
    moto_s3.delete_object(Bucket=BUCKET, Key=key)


GIB = 1024 * 1024 * 1024


@pytest.fixture(scope="module")
def static_presignd(tmp_path_factory):
    """presignd → nginx (plain HTTP) serving `<root>/big/<key>` from a file, for the 1 GiB download."""
    binary = require_presignd_binary()
    base = tmp_path_factory.mktemp("curl-big")
    root = base / "root"
    (root / "big").mkdir(parents=True)
    digest = patterned_file(str(root / "big" / "one gib.bin"), GIB)
    nginx = StaticNginx(str(base / "nginx"), str(root)).start()
    config = PresigndConfig(
        upstreams=[Upstream(name="static", endpoint=nginx.endpoint, access_key_id="AKIDSTATICNGINX",
                            secret_access_key="static-nginx-secret")],
        buckets=[Bucket("big", "static", access="read-only")],
    )
    daemon = Presignd(binary, config, str(base / "presignd"), name="presignd-static")
    try:
        daemon.start()
        yield daemon, nginx, digest
    finally:
        daemon.stop() if daemon.is_running() else daemon.kill()
        nginx.stop()
        os.remove(root / "big" / "one gib.bin")  # pytest keeps old tmp dirs: do not leave 1 GiB behind


def test_download_1gib_sha256(static_presignd):
    daemon, nginx, digest = static_presignd
    t0 = time.monotonic()
    status, got, size = curl_sha256(f"{daemon.endpoint}/big/one%20gib.bin", timeout=180)
    elapsed = time.monotonic() - t0
    assert (status, size) == (200, GIB)
    assert got == digest, "1 GiB body changed on the way through presignd"
    assert 'GET /big/one%20gib.bin HTTP/1.1" 200' in nginx.access_log()
    print(f"1 GiB through presignd in {elapsed:.1f}s ({GIB / elapsed / 2**20:.0f} MiB/s)")
    # A ranged read deep into the file (after the 1 GiB stream, the connection pool is still sane).
    part = curl("-r", f"{GIB - 100}-", f"{daemon.endpoint}/big/one%20gib.bin")
    assert part.status == 206 and len(part.body) == 100
