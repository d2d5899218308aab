"""Checks of the harness itself, without presignd: if these fail, the proxy tests cannot be trusted.

- the test PKI: the good certificate verifies for 127.0.0.1, the untrusted and wrong-name ones do not;
- moto enforces signatures (signed passes, unsigned and wrong secret fail);
- nginx forwards signed requests to moto faithfully over TLS, and curl rejects the bad certificates;
- the verifying recorder accepts botocore's own signatures and catches each kind of mistake;
- the `Presignd` wrapper starts, parses and stops a stand-in daemon that speaks the contract.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tomllib

import boto3
import botocore.config
import botocore.exceptions
import pytest

from harness import logfmt
from harness.clients import curl
from harness.keys import SPECIAL_KEYS
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.s3xml import parse_error
from conftest import BUCKET

HERE = os.path.dirname(os.path.abspath(__file__))


# -- PKI --------------------------------------------------------------------------------------------------------


def _openssl_verify(ca_file: str, cert: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", "verify", "-CAfile", ca_file, "-verify_ip", "127.0.0.1", cert],
                          capture_output=True, text=True)


def test_good_certificate_verifies_for_loopback(test_ca):
    assert _openssl_verify(test_ca.ca_file, test_ca.good.cert).returncode == 0


def test_untrusted_certificate_fails_verification(test_ca):
    assert _openssl_verify(test_ca.ca_file, test_ca.untrusted.cert).returncode != 0
    # ...but it is a valid certificate for its own CA: only trust differs.
    assert _openssl_verify(test_ca.other_ca_file, test_ca.untrusted.cert).returncode == 0


def test_wrong_name_certificate_fails_hostname_check(test_ca):
    assert _openssl_verify(test_ca.ca_file, test_ca.wrong_name.cert).returncode != 0
    plain = subprocess.run(["openssl", "verify", "-CAfile", test_ca.ca_file, test_ca.wrong_name.cert],
                           capture_output=True, text=True)
    assert plain.returncode == 0, "the wrong-name cert must chain to the trusted CA (only the name is wrong)"


# -- moto -------------------------------------------------------------------------------------------------------


def test_moto_accepts_signed_and_rejects_unsigned(moto, moto_s3):
    moto_s3.put_object(Bucket=BUCKET, Key="selfcheck/signed", Body=b"hello")
    assert moto_s3.get_object(Bucket=BUCKET, Key="selfcheck/signed")["Body"].read() == b"hello"
    assert moto.unsigned_status(f"/{BUCKET}/selfcheck/signed") == 403
    assert moto.unsigned_status(f"/{BUCKET}/selfcheck/signed", method="PUT") == 403


def test_moto_rejects_wrong_secret(moto):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        moto.client(secret_access_key="not-the-secret").get_object(Bucket=BUCKET, Key="selfcheck/signed")
    assert e.value.response["Error"]["Code"] == "SignatureDoesNotMatch"


# -- nginx TLS front ---------------------------------------------------------------------------------------------


def test_nginx_front_forwards_curl_signed_request(moto, moto_s3, nginx_front, test_ca):
    moto_s3.put_object(Bucket=BUCKET, Key="selfcheck/via-nginx", Body=b"through the front")
    url = f"{nginx_front.endpoint('good')}/{BUCKET}/selfcheck/via-nginx"
    # moto needs x-amz-content-sha256, which curl does not add by itself.
    signed = curl("--cacert", test_ca.ca_file, "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "--aws-sigv4", "aws:amz:us-east-1:s3",
                  "--user", f"{moto.access_key_id}:{moto.secret_access_key}", url)
    assert (signed.exit_code, signed.status, signed.body) == (0, 200, b"through the front"), signed.stderr
    unsigned = curl("--cacert", test_ca.ca_file, url)
    assert unsigned.status == 403, "moto behind nginx must still enforce signatures"


@pytest.mark.parametrize("name", SPECIAL_KEYS)
def test_nginx_front_keeps_botocore_signatures_valid(moto, nginx_front, test_ca, name):
    key = "selfcheck/" + name
    s3 = moto.client(endpoint=nginx_front.endpoint("good"), verify=test_ca.ca_file)
    s3.put_object(Bucket=BUCKET, Key=key, Body=key.encode())
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == key.encode()
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=key)
    assert key in [o["Key"] for o in listed.get("Contents", [])]
    s3.delete_object(Bucket=BUCKET, Key=key)


@pytest.mark.parametrize("front", ["untrusted", "wrong_name"])
def test_curl_rejects_bad_front_certificates(moto_s3, nginx_front, test_ca, front):
    moto_s3.put_object(Bucket=BUCKET, Key="selfcheck/bad-front", Body=b"x")
    url = f"{nginx_front.endpoint(front)}/{BUCKET}/selfcheck/bad-front"
    before = len(nginx_front.access_log(front))
    result = curl("--cacert", test_ca.ca_file, url)
    assert result.exit_code == 60, f"curl should fail certificate verification (60), got {result.exit_code}"
    assert len(nginx_front.access_log(front)) == before, "a TLS-rejected request must not reach nginx's HTTP layer"
    # With verification off the same front does work: only the certificate is wrong.
    assert curl("-k", url).status == 403


# -- verifying recorder -------------------------------------------------------------------------------------------


def _signed_client(recorder, secret=None, region=None):
    return boto3.client(
        "s3", endpoint_url=recorder.endpoint, region_name=region or recorder.region,
        aws_access_key_id=recorder.access_key_id,
        aws_secret_access_key=secret or recorder.secret_access_key,
        config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}, proxies={}),
    )


@pytest.mark.parametrize("key", ["plain", "with space", "ünï ✓", "a+b=c&d%e", "x//y/", "(paren)!*'"])
def test_recorder_accepts_botocore_signatures(recorder, key):
    recorder.clear()
    s3 = _signed_client(recorder)
    s3.put_object(Bucket="rec-selfcheck", Key=key, Body=b"payload")
    assert s3.get_object(Bucket="rec-selfcheck", Key=key)["Body"].read() == b"payload"
    s3.list_objects_v2(Bucket="rec-selfcheck", Prefix="a b", StartAfter="é")
    for r in recorder.snapshot():
        assert r.problems == [], f"{r.method} {r.target}: {r.problems}"


def test_recorder_rejects_wrong_secret(recorder):
    recorder.clear()
    with pytest.raises(botocore.exceptions.ClientError):
        _signed_client(recorder, secret="wrong").get_object(Bucket="rec-selfcheck", Key="plain")
    (r,) = recorder.snapshot()
    assert any(p.startswith("signature mismatch") for p in r.problems)


def test_recorder_rejects_wrong_region(recorder):
    recorder.clear()
    with pytest.raises(botocore.exceptions.ClientError):
        _signed_client(recorder, region="eu-west-1").get_object(Bucket="rec-selfcheck", Key="plain")
    (r,) = recorder.snapshot()
    assert any("credential scope" in p for p in r.problems)


def test_recorder_flags_payload_hash_unsigned_amz_header_and_raw_path(recorder):
    from harness.recorder import verify_request
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    body = b"the body"
    req = AWSRequest(method="PUT", url=f"http://127.0.0.1:1/b/k", data=body,
                     headers={"x-amz-content-sha256": hashlib.sha256(body).hexdigest()})
    S3SigV4Auth(Credentials(recorder.access_key_id, recorder.secret_access_key), "s3", "us-east-1").add_auth(req)
    headers = [(k, v) for k, v in req.headers.items()] + [("Host", "127.0.0.1:1")]
    args = (recorder.access_key_id, recorder.secret_access_key, "us-east-1")
    assert verify_request("PUT", "/b/k", headers, body, *args)[0] == []
    assert any("sha256 of the body" in p for p in verify_request("PUT", "/b/k", headers, b"changed", *args)[0])
    extra = headers + [("x-amz-meta-sneaky", "1")]
    assert any("x-amz-meta-sneaky is sent but not signed" in p for p in verify_request("PUT", "/b/k", extra, body,
                                                                                         *args)[0])
    raw = verify_request("PUT", "/b/k(1)", headers, body, *args)[0]
    assert any("canonical" in p for p in raw)


# -- stand-in daemon: the Presignd wrapper itself --------------------------------------------------------------------


def test_config_renders_valid_toml(test_ca):
    config = PresigndConfig(
        upstreams=[Upstream("moto", "https://127.0.0.1:1", "AKID", 'se"cret\\with/escapes', ca_file=test_ca.ca_file)],
        buckets=[Bucket("b", "moto", mount="/"), Bucket("ro", "moto", access="read-only")],
    )
    parsed = tomllib.loads(config.render())
    assert parsed["server"] == {"listen": ["127.0.0.1:0"], "admin_listen": "127.0.0.1:0", "workers": 1}
    assert parsed["upstream"]["moto"]["secret_access_key"] == 'se"cret\\with/escapes'
    assert parsed["upstream"]["moto"]["ca_file"] == test_ca.ca_file
    assert [b["mount"] for b in parsed["bucket"] if "mount" in b] == ["/"]
    assert parsed["bucket"][1]["access"] == "read-only"


def test_logfmt_parses_listening_lines():
    assert logfmt.parse("level=info msg=Listening listen.address=127.0.0.1:43211") == {
        "level": "info", "msg": "Listening", "listen.address": "127.0.0.1:43211"}
    assert logfmt.parse('level=info msg="Admin listening" listen.address=[::1]:9180 note="a \\"q\\""') == {
        "level": "info", "msg": "Admin listening", "listen.address": "[::1]:9180", "note": 'a "q"'}


def test_presignd_wrapper_with_stand_in_daemon(tmp_path):
    fake = os.path.join(HERE, "harness", "fake_presignd.py")
    wrapper = os.path.join(tmp_path, "presignd")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {fake} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    config = PresigndConfig(upstreams=[Upstream("u", "http://127.0.0.1:1", "AKIDFAKE", "fake-secret")],
                            buckets=[Bucket("b", "u")], listen=["127.0.0.1:0", "127.0.0.1:0"])
    daemon = Presignd(wrapper, config, str(tmp_path)).start()
    try:
        assert len(daemon.endpoints) == 2 and all(e.startswith("http://127.0.0.1:") for e in daemon.endpoints)
        assert daemon.port > 0
        answer = curl(f"{daemon.endpoint}/b/key")
        assert answer.status == 501 and parse_error(answer.body).code == "NotImplemented"
        assert curl(f"{daemon.admin_endpoint}/healthz").status == 200
    finally:
        assert daemon.stop() == 0
    assert any("msg=Stopping" in line for line in daemon.logs)


def test_presignd_wrapper_reports_a_daemon_that_dies(tmp_path):
    wrapper = os.path.join(tmp_path, "presignd")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\necho 'level=error msg=\"Config invalid\" error=boom' >&2\nexit 78\n")
    os.chmod(wrapper, 0o755)
    config = PresigndConfig(upstreams=[], buckets=[])
    with pytest.raises(RuntimeError, match=r"exited with 78(.|\n)*Config invalid"):
        Presignd(wrapper, config, str(tmp_path)).start(timeout=5)
