"""boto3 (botocore UNSIGNED, path style) through presignd to moto over TLS: issue 6's list.

The full object lifecycle, multipart from a non-seekable stream, conditional GETs, presigned-URL fetches and
every awkward key. (test_proxy_basic.py has the single-call basics; this file follows what applications do.)
"""

from __future__ import annotations

import hashlib
import io
import os
import urllib.parse

import boto3
import botocore.config
import botocore.exceptions
import pytest
from boto3.s3.transfer import TransferConfig

from harness.clients import curl, unsigned_s3
from harness.clients_extra import count_boto3_calls, count_op

from conftest import BUCKET


@pytest.fixture(scope="module")
def b3(presignd):
    return count_boto3_calls(unsigned_s3(presignd.endpoint))


def _status(err: botocore.exceptions.ClientError) -> int:
    return err.response["ResponseMetadata"]["HTTPStatusCode"]


def test_full_object_lifecycle(b3, moto_s3, key_prefix):
    key = key_prefix + "life/cycle.json"
    v1 = b'{"v": 1}'
    put = b3.put_object(Bucket=BUCKET, Key=key, Body=v1, ContentType="application/json",
                        CacheControl="max-age=60", ContentDisposition='attachment; filename="c.json"',
                        Metadata={"app": "e2e", "unicode": "yes"}, ChecksumAlgorithm="CRC32")
    etag1 = put["ETag"]
    assert etag1 == '"' + hashlib.md5(v1).hexdigest() + '"'

    head = b3.head_object(Bucket=BUCKET, Key=key)
    assert head["ContentLength"] == len(v1) and head["ContentType"] == "application/json"
    assert head["CacheControl"] == "max-age=60" and head["Metadata"] == {"app": "e2e", "unicode": "yes"}
    got = b3.get_object(Bucket=BUCKET, Key=key)
    assert got["Body"].read() == v1 and got["ContentDisposition"] == 'attachment; filename="c.json"'

    listed = b3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)
    assert [(o["Key"], o["Size"], o["ETag"]) for o in listed["Contents"]] == [(key, len(v1), etag1)]

    # Overwrite, copy with replaced metadata, tag, then delete both.
    v2 = b'{"v": 2, "pad": "' + b"x" * 5000 + b'"}'
    etag2 = b3.put_object(Bucket=BUCKET, Key=key, Body=v2)["ETag"]
    assert etag2 != etag1 and b3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == v2
    copy_key = key_prefix + "life/copy ü.json"
    b3.copy_object(Bucket=BUCKET, Key=copy_key, CopySource={"Bucket": BUCKET, "Key": key},
                   MetadataDirective="REPLACE", Metadata={"copied": "1"}, ContentType="text/plain")
    chead = b3.head_object(Bucket=BUCKET, Key=copy_key)
    assert chead["Metadata"] == {"copied": "1"} and chead["ContentType"] == "text/plain"
    b3.put_object_tagging(Bucket=BUCKET, Key=copy_key, Tagging={"TagSet": [{"Key": "k", "Value": "v w"}]})
    assert b3.get_object_tagging(Bucket=BUCKET, Key=copy_key)["TagSet"] == [{"Key": "k", "Value": "v w"}]

    res = b3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": key}, {"Key": copy_key}]})
    assert sorted(d["Key"] for d in res["Deleted"]) == sorted([key, copy_key]) and not res.get("Errors")
    with pytest.raises(botocore.exceptions.ClientError) as err:
        b3.head_object(Bucket=BUCKET, Key=key)
    assert _status(err.value) == 404
    with pytest.raises(b3.exceptions.NoSuchKey):
        b3.get_object(Bucket=BUCKET, Key=copy_key)
    assert b3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)["KeyCount"] == 0
    assert moto_s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)["KeyCount"] == 0


class _NonSeekable(io.RawIOBase):
    """A stream boto3 cannot seek or ask the length of (like a pipe)."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buf) -> int:
        n = min(len(buf), len(self._data) - self._pos)
        buf[:n] = self._data[self._pos:self._pos + n]
        self._pos += n
        return n


def test_multipart_upload_fileobj_from_non_seekable_stream(b3, moto_s3, key_prefix):
    data = os.urandom(17 * 1024 * 1024 + 3)  # three 8 MiB parts (the last short)
    key = key_prefix + "stream.bin"
    cfg = TransferConfig(multipart_threshold=8 * 1024 * 1024, multipart_chunksize=8 * 1024 * 1024, max_concurrency=4)
    b3.upload_fileobj(io.BufferedReader(_NonSeekable(data)), BUCKET, key, Config=cfg)
    head = moto_s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ContentLength"] == len(data) and head["ETag"].endswith('-3"'), head["ETag"]
    out = io.BytesIO()
    b3.download_fileobj(BUCKET, key, out, Config=cfg)  # ranged GETs in parallel
    assert hashlib.sha256(out.getvalue()).digest() == hashlib.sha256(data).digest()
    moto_s3.delete_object(Bucket=BUCKET, Key=key)


def test_conditional_gets(b3, key_prefix):
    key = key_prefix + "conditional"
    etag = b3.put_object(Bucket=BUCKET, Key=key, Body=b"conditional body")["ETag"]
    assert b3.get_object(Bucket=BUCKET, Key=key, IfMatch=etag)["Body"].read() == b"conditional body"
    with pytest.raises(botocore.exceptions.ClientError) as err:
        b3.get_object(Bucket=BUCKET, Key=key, IfNoneMatch=etag)
    assert _status(err.value) == 304
    with pytest.raises(botocore.exceptions.ClientError) as err:
        b3.get_object(Bucket=BUCKET, Key=key, IfMatch='"0123456789abcdef0123456789abcdef"')
    assert _status(err.value) == 412 and err.value.response["Error"]["Code"] == "PreconditionFailed"
    assert b3.get_object(Bucket=BUCKET, Key=key, IfNoneMatch='"other"')["Body"].read() == b"conditional body"
    with pytest.raises(botocore.exceptions.ClientError) as err:
        b3.head_object(Bucket=BUCKET, Key=key, IfNoneMatch=etag)
    assert _status(err.value) == 304


def test_conditional_get_with_curl_304_has_no_body(presignd, b3, key_prefix):
    key = key_prefix + "cond-curl"
    etag = b3.put_object(Bucket=BUCKET, Key=key, Body=b"x" * 1000)["ETag"]
    count_op("curl", 2)
    url = f"{presignd.endpoint}/{BUCKET}/{urllib.parse.quote(key)}"
    not_modified = curl("-H", f"If-None-Match: {etag}", url)
    assert not_modified.status == 304 and not_modified.body == b""
    failed = curl("-H", 'If-Match: "nope"', url)
    assert failed.status == 412 and b"PreconditionFailed" in failed.body


@pytest.mark.parametrize("method", ["get_object", "head_object", "put_object"])
def test_presigned_url_fetch(presignd, b3, key_prefix, method):
    """boto3's presigned URLs (generated without credentials as a client would: any key, presignd strips the
    client's query signature and signs itself)."""
    key = key_prefix + "presigned ü+.txt"
    b3.put_object(Bucket=BUCKET, Key=key, Body=b"presigned")
    signer = boto3.session.Session(aws_access_key_id="AKIDCLIENTSIDE", aws_secret_access_key="client-side",
                                   region_name="us-east-1").client(
        "s3", endpoint_url=presignd.endpoint,
        config=botocore.config.Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    url = signer.generate_presigned_url(method, Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=300)
    assert "X-Amz-Signature=" in url
    count_op("boto3")
    count_op("curl")
    if method == "get_object":
        got = curl(url)
        assert got.status == 200 and got.body == b"presigned"
    elif method == "head_object":
        got = curl("-I", url)
        assert got.status == 200 and got.header("content-length") == "9"
    else:
        got = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "new body", url)
        assert got.status == 200, got.body
        assert b3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == b"new body"


AWKWARD_KEYS = [
    "ünïcödé/latin-ü-ß-é",
    "greek/ελληνικά",
    "cyrillic/кириллица",
    "cjk/日本語-中文-한국어",
    "rtl/עברית-العربية",
    "indic/हिन्दी-தமிழ்",
    "emoji/😀-🪣-👩‍👩‍👧",
    "spaces/ with  spaces .txt",
    "reserved/+ % = & ~ ! * ' ( ) $ , ; : @",
    "reserved/a+b%20c%2Fd=e&f~g!h*i'j(k)l$m,n;o:p@q",
    "slashes//double//slash",
    "slashes/trailing/",
    "slashes/trailing-double//",
]
# "dots/./and/../dots" was here until issue 19: '.' and '..' segments are now refused (400 InvalidURI), since
# not every S3-compatible server keeps them literal; test_security_operations.py covers the refusal.


@pytest.mark.parametrize("name", AWKWARD_KEYS + ["long/" + "k" * 995], ids=lambda n: n[:40])
def test_awkward_keys_lifecycle(b3, moto_s3, key_prefix, name):
    key = key_prefix + name
    if len(name) >= 1000:
        key = (key_prefix + name)[:1000]  # exactly 1000 bytes, under S3's 1024-byte limit
        assert len(key.encode()) == 1000
    data = hashlib.sha256(key.encode()).digest() * 50
    b3.put_object(Bucket=BUCKET, Key=key, Body=data)
    assert b3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] == len(data)
    assert b3.get_object(Bucket=BUCKET, Key=key, Range="bytes=0-9")["Body"].read() == data[:10]
    assert [o["Key"] for o in b3.list_objects_v2(Bucket=BUCKET, Prefix=key)["Contents"]] == [key]
    assert moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data  # stored under exactly this key
    copy = key + ".copy"
    b3.copy_object(Bucket=BUCKET, Key=copy, CopySource={"Bucket": BUCKET, "Key": key})
    assert b3.get_object(Bucket=BUCKET, Key=copy)["Body"].read() == data
    b3.delete_object(Bucket=BUCKET, Key=key)
    b3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": copy}]})
    assert moto_s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)["KeyCount"] == 0


def test_awkward_keys_listed_together(b3, key_prefix):
    keys = sorted(key_prefix + n for n in AWKWARD_KEYS)
    for k in keys:
        b3.put_object(Bucket=BUCKET, Key=k, Body=b"k")
    pages = b3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=key_prefix,
                                                         PaginationConfig={"PageSize": 4})
    listed = [o["Key"] for page in pages for o in page.get("Contents", [])]
    assert listed == keys
    # Delimiter listing: common prefixes come back exactly (including the "" segment of a `//`).
    top = b3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix, Delimiter="/")
    prefixes = sorted(p["Prefix"] for p in top.get("CommonPrefixes", []))
    assert prefixes == sorted({key_prefix + n.split("/", 1)[0] + "/" for n in AWKWARD_KEYS})
    # An explicit url-encoded listing (botocore decodes it only when it asked itself) decodes to the same keys.
    enc = b3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix, EncodingType="url")
    assert sorted(urllib.parse.unquote_plus(o["Key"]) for o in enc["Contents"]) == keys
    b3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": k} for k in keys]})
    assert b3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)["KeyCount"] == 0
