"""presignd's own errors: S3 XML with the right status, and nothing forwarded when it must not be."""

from __future__ import annotations

import botocore.exceptions
import pytest

from harness.clients import curl
from harness.s3xml import parse_error

from conftest import BUCKET, READONLY_BUCKET, UNTRUSTED_BUCKET, WRONGNAME_BUCKET


def _assert_s3_error(result, status: int, code: str | None):
    assert result.status == status, f"want {status}, got {result.status}: {result.body[:500]!r}"
    err = parse_error(result.body)
    if code is not None:
        assert err.code == code, f"want <Code>{code}</Code>, got {err.code}: {result.body[:500]!r}"
    assert err.request_id, "presignd's errors carry a RequestId"
    assert "xml" in (result.header("content-type") or ""), result.headers
    return err


def test_unknown_bucket_is_404_nosuchbucket(presignd):
    _assert_s3_error(curl(f"{presignd.endpoint}/no-such-bucket-e2e/key"), 404, "NoSuchBucket")
    _assert_s3_error(curl("-X", "PUT", "--data-binary", "x", f"{presignd.endpoint}/no-such-bucket-e2e/key"),
                     404, "NoSuchBucket")


def test_unknown_bucket_head_is_bare_404(presignd):
    head = curl("-I", f"{presignd.endpoint}/no-such-bucket-e2e/key")
    assert head.status == 404


def test_unknown_bucket_via_boto3(s3):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket="no-such-bucket-e2e", Key="k")
    assert e.value.response["Error"]["Code"] == "NoSuchBucket"


def test_read_only_bucket_allows_reads(presignd, moto_s3, key_prefix):
    key = key_prefix + "readable"
    moto_s3.put_object(Bucket=READONLY_BUCKET, Key=key, Body=b"read me")
    got = curl(f"{presignd.endpoint}/{READONLY_BUCKET}/{key}")
    assert got.status == 200 and got.body == b"read me"
    assert curl("-I", f"{presignd.endpoint}/{READONLY_BUCKET}/{key}").status == 200
    listing = curl(f"{presignd.endpoint}/{READONLY_BUCKET}?list-type=2&prefix={key_prefix}")
    assert listing.status == 200 and key.encode() in listing.body


def test_read_only_bucket_refuses_writes(presignd, moto_s3, key_prefix):
    key = key_prefix + "not-written"
    _assert_s3_error(curl("-X", "PUT", "--data-binary", "nope", f"{presignd.endpoint}/{READONLY_BUCKET}/{key}"),
                     403, "AccessDenied")
    assert moto_s3.list_objects_v2(Bucket=READONLY_BUCKET, Prefix=key)["KeyCount"] == 0
    moto_s3.put_object(Bucket=READONLY_BUCKET, Key=key, Body=b"keep")
    _assert_s3_error(curl("-X", "DELETE", f"{presignd.endpoint}/{READONLY_BUCKET}/{key}"), 403, "AccessDenied")
    _assert_s3_error(curl("-X", "POST", f"{presignd.endpoint}/{READONLY_BUCKET}/{key}?uploads"), 403, "AccessDenied")
    assert moto_s3.get_object(Bucket=READONLY_BUCKET, Key=key)["Body"].read() == b"keep"


def test_read_only_bucket_via_boto3(s3, key_prefix):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket=READONLY_BUCKET, Key=key_prefix + "x", Body=b"x")
    assert e.value.response["Error"]["Code"] == "AccessDenied"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


@pytest.mark.parametrize("bucket,front", [(UNTRUSTED_BUCKET, "untrusted"), (WRONGNAME_BUCKET, "wrong_name")])
def test_bad_upstream_certificate_is_502_and_nothing_is_forwarded(presignd, moto_s3, nginx_front, key_prefix,
                                                                  bucket, front):
    key = key_prefix + "must-not-arrive"
    before = len(nginx_front.access_log(front))
    _assert_s3_error(curl(f"{presignd.endpoint}/{bucket}/{key}"), 502, None)
    _assert_s3_error(curl("-X", "PUT", "--data-binary", "secret payload", f"{presignd.endpoint}/{bucket}/{key}"),
                     502, None)
    assert len(nginx_front.access_log(front)) == before, \
        f"the {front} front logged a request: the TLS handshake must fail before any HTTP is sent"
    assert moto_s3.list_objects_v2(Bucket=bucket, Prefix=key_prefix)["KeyCount"] == 0, "moto received the PUT"


def test_still_serving_after_upstream_failures(presignd, moto_s3, key_prefix):
    key = key_prefix + "after-failures"
    moto_s3.put_object(Bucket=BUCKET, Key=key, Body=b"alive")
    for _ in range(3):
        curl(f"{presignd.endpoint}/{UNTRUSTED_BUCKET}/x")
    got = curl(f"{presignd.endpoint}/{BUCKET}/{key}")
    assert got.status == 200 and got.body == b"alive"
    assert presignd.is_running()


def test_upstream_errors_pass_through(presignd, key_prefix):
    got = curl(f"{presignd.endpoint}/{BUCKET}/{key_prefix}missing")
    assert got.status == 404
    assert parse_error(got.body).code == "NoSuchKey"  # moto's answer, untouched
