"""boto3 (UNSIGNED, path-style) through presignd to moto: the S3 API a user's SDK needs."""

from __future__ import annotations

import hashlib
import os

import botocore.exceptions
import pytest

from harness.keys import SPECIAL_KEYS

from conftest import BUCKET



def _body(name: str, size: int = 1000) -> bytes:
    seed = hashlib.sha256(name.encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


def test_put_get_head_delete(s3, moto_s3, key_prefix):
    key = key_prefix + "object.bin"
    data = os.urandom(100_000)
    put = s3.put_object(Bucket=BUCKET, Key=key, Body=data, ContentType="application/x-test")
    got = s3.get_object(Bucket=BUCKET, Key=key)
    assert got["Body"].read() == data
    assert got["ContentType"] == "application/x-test"
    assert got["ETag"] == put["ETag"]
    head = s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ContentLength"] == len(data) and head["ETag"] == put["ETag"]
    # moto really holds it, under exactly that key.
    assert moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data
    s3.delete_object(Bucket=BUCKET, Key=key)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.head_object(Bucket=BUCKET, Key=key)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_get_missing_key_is_nosuchkey(s3, key_prefix):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=BUCKET, Key=key_prefix + "missing")
    assert e.value.response["Error"]["Code"] == "NoSuchKey"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_list_objects_v2_pagination(s3, key_prefix):
    keys = [f"{key_prefix}item-{i}" for i in range(5)]
    for k in keys:
        s3.put_object(Bucket=BUCKET, Key=k, Body=k.encode())
    seen, pages, token = [], [], None
    while True:
        kwargs = {"Bucket": BUCKET, "Prefix": key_prefix, "MaxKeys": 2}
        if token:
            kwargs["ContinuationToken"] = token
        page = s3.list_objects_v2(**kwargs)
        pages.append(page)
        seen += [o["Key"] for o in page.get("Contents", [])]
        if not page["IsTruncated"]:
            assert "NextContinuationToken" not in page
            break
        token = page["NextContinuationToken"]
        assert token
        assert len(pages) < 10, "pagination does not terminate"
    assert [p["KeyCount"] for p in pages] == [2, 2, 1]
    assert seen == sorted(keys)
    # The SDK's own paginator agrees.
    paginator = s3.get_paginator("list_objects_v2")
    via_paginator = [o["Key"] for p in paginator.paginate(Bucket=BUCKET, Prefix=key_prefix,
                                                          PaginationConfig={"PageSize": 2}) for o in p["Contents"]]
    assert via_paginator == sorted(keys)


def test_list_with_delimiter(s3, key_prefix):
    for k in ("a/1", "a/2", "b/1", "top"):
        s3.put_object(Bucket=BUCKET, Key=key_prefix + k, Body=b"x")
    page = s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix, Delimiter="/")
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == [key_prefix + "a/", key_prefix + "b/"]
    assert [o["Key"] for o in page["Contents"]] == [key_prefix + "top"]


def test_multipart_upload(s3, moto_s3, key_prefix):
    key = key_prefix + "multipart.bin"
    part1 = os.urandom(5 * 1024 * 1024)  # the minimum size of a non-last part
    part2 = os.urandom(1024 * 1024 + 123)
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key=key)
    upload_id = upload["UploadId"]
    try:
        parts = []
        for number, data in ((1, part1), (2, part2)):
            answer = s3.upload_part(Bucket=BUCKET, Key=key, UploadId=upload_id, PartNumber=number, Body=data)
            parts.append({"PartNumber": number, "ETag": answer["ETag"]})
        listed = s3.list_parts(Bucket=BUCKET, Key=key, UploadId=upload_id)
        assert [p["PartNumber"] for p in listed["Parts"]] == [1, 2]
        done = s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload_id,
                                            MultipartUpload={"Parts": parts})
    except Exception:
        s3.abort_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload_id)
        raise
    assert done["ETag"].strip('"').endswith("-2")
    got = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    assert hashlib.sha256(got).digest() == hashlib.sha256(part1 + part2).digest()
    assert moto_s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] == len(part1) + len(part2)


def test_abort_multipart_upload(s3, key_prefix):
    key = key_prefix + "aborted.bin"
    upload_id = s3.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]
    s3.abort_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload_id)
    uploads = s3.list_multipart_uploads(Bucket=BUCKET, Prefix=key_prefix)
    assert upload_id not in [u["UploadId"] for u in uploads.get("Uploads", [])]


def test_ranged_get(s3, key_prefix):
    key = key_prefix + "ranged.bin"
    data = bytes(range(256)) * 4
    s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    got = s3.get_object(Bucket=BUCKET, Key=key, Range="bytes=10-19")
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["ContentRange"] == f"bytes 10-19/{len(data)}"
    assert got["ContentLength"] == 10
    assert got["Body"].read() == data[10:20]


@pytest.mark.parametrize("name", SPECIAL_KEYS)
def test_special_character_keys_round_trip(s3, moto_s3, key_prefix, name):
    key = key_prefix + name
    data = _body(key)
    s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data
    assert s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] == len(data)
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)
    assert [o["Key"] for o in listed.get("Contents", [])] == [key]
    # Stored upstream under exactly this key (not decoded twice, `+` not turned into a space, `//` kept).
    assert moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data
    s3.delete_object(Bucket=BUCKET, Key=key)
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)["KeyCount"] == 0


def test_special_keys_listed_together_with_exact_names(s3, key_prefix):
    keys = sorted(key_prefix + name for name in SPECIAL_KEYS)
    for k in keys:
        s3.put_object(Bucket=BUCKET, Key=k, Body=b"x")
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)
    assert sorted(o["Key"] for o in listed["Contents"]) == keys


def test_copy_object(s3, key_prefix):
    src, dst = key_prefix + "source file", key_prefix + "copy ü"
    s3.put_object(Bucket=BUCKET, Key=src, Body=b"copied bytes")
    s3.copy_object(Bucket=BUCKET, Key=dst, CopySource={"Bucket": BUCKET, "Key": src})
    assert s3.get_object(Bucket=BUCKET, Key=dst)["Body"].read() == b"copied bytes"


def test_delete_objects_batch(s3, key_prefix):
    keys = [key_prefix + f"batch {i}" for i in range(3)]
    for k in keys:
        s3.put_object(Bucket=BUCKET, Key=k, Body=b"x")
    answer = s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": k} for k in keys]})
    assert sorted(d["Key"] for d in answer["Deleted"]) == sorted(keys)
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)["KeyCount"] == 0


def test_user_metadata_round_trip(s3, key_prefix):
    key = key_prefix + "meta"
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"x", Metadata={"color": "blue", "owner": "e2e"})
    assert s3.head_object(Bucket=BUCKET, Key=key)["Metadata"] == {"color": "blue", "owner": "e2e"}
