"""The presign API (POST /v1/presign on the admin listener) and redirect mode, against the independent
botocore-based verifying server (presign_verifier.py): every link is fetched and must work, every misuse must
be refused by the verifier."""
from __future__ import annotations

import os
import re
import subprocess
import time
import uuid

import pytest

from conftest import require_presignd_binary
from presign_support import ALLOWED_ORIGIN, TOKEN, Verifier, api, http, links_config, start_presignd


@pytest.fixture(scope="module")
def verifier():
    server = Verifier()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def daemon(verifier, tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("presign-api"))
    proc = start_presignd(require_presignd_binary(), links_config(verifier, directory), directory, "presignd-api")
    yield proc
    proc.stop()
    assert TOKEN not in proc.log_text()
    assert not re.search(r"X-Amz-Signature=[0-9a-f]{16}", proc.log_text())


@pytest.fixture(scope="module")
def open_daemon(verifier, tmp_path_factory):
    """No admin_token_file: loopback-only API."""
    directory = str(tmp_path_factory.mktemp("presign-open"))
    proc = start_presignd(require_presignd_binary(), links_config(verifier, directory, token=False), directory,
                          "presignd-open")
    yield proc
    proc.stop()


def key(name="obj"):
    return f"{name}-{uuid.uuid4().hex[:8]}.bin"


def link(daemon, **body):
    status, _, answer = api(daemon, body)
    assert status == 200, answer
    return answer


def upload(daemon, bucket, name, data, content_type="application/octet-stream"):
    answer = link(daemon, bucket=bucket, key=name, method="PUT", content_type=content_type)
    status, _, body = http(answer["url"], "PUT", data, answer["headers"])
    assert status == 200, body


# -- each kind of link ----------------------------------------------------------------------------------------


def test_put_link_pins_content_type_and_get_reads_back(daemon):
    name, data = key(), os.urandom(3000)
    answer = link(daemon, bucket="links", key=name, method="PUT", content_type="image/jpeg", expires=600)
    assert answer["method"] == "PUT" and answer["headers"] == {"Content-Type": "image/jpeg"}
    assert answer["expires_in"] == 600 and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", answer["expires_at"])
    assert answer["url"].startswith(f"http://127.0.0.1:") and "X-Amz-SignedHeaders=content-type%3Bhost" in answer["url"]
    status, _, body = http(answer["url"], "PUT", data, {"Content-Type": "image/png"})
    assert status == 403 and b"SignatureDoesNotMatch" in body, "wrong content type must be refused"
    status, _, body = http(answer["url"], "PUT", data, {"Content-Type": "image/jpeg"})
    assert status == 200, body
    get = link(daemon, bucket="links", key=name)
    status, headers, body = http(get["url"])
    assert (status, body) == (200, data) and headers["Content-Type"] == "image/jpeg"


def test_head_link(daemon):
    name = key()
    upload(daemon, "links", name, b"0123456789")
    answer = link(daemon, bucket="links", key=name, method="HEAD")
    status, headers, _ = http(answer["url"], "HEAD")
    assert status == 200 and headers["Content-Length"] == "10"
    assert http(answer["url"], "GET")[0] == 403, "a HEAD link must not work for GET"


def test_delete_link(daemon):
    name = key()
    upload(daemon, "links", name, b"bye")
    answer = link(daemon, bucket="links", key=name, method="DELETE")
    assert http(answer["url"], "DELETE")[0] == 204
    assert http(link(daemon, bucket="links", key=name)["url"])[0] == 404


def test_put_link_pins_content_length(daemon):
    name = key()
    answer = link(daemon, bucket="links", key=name, method="PUT", content_length=5)
    assert answer["headers"] == {"Content-Length": "5"}
    assert http(answer["url"], "PUT", b"12345")[0] == 200
    assert http(answer["url"], "PUT", b"123456")[0] == 403


def test_response_overrides_are_signed_and_applied(daemon):
    name = key()
    upload(daemon, "links", name, b"doc")
    answer = link(daemon, bucket="links", key=name, response_content_disposition='attachment; filename="a b.txt"',
                  response_content_type="text/plain")
    status, headers, body = http(answer["url"])
    assert (status, body) == (200, b"doc")
    assert headers["Content-Disposition"] == 'attachment; filename="a b.txt"'
    assert headers["Content-Type"] == "text/plain"
    tampered = answer["url"].replace("text%2Fplain", "text%2Fhtml")
    assert tampered != answer["url"] and http(tampered)[0] == 403


def test_unicode_key_and_duration_string_expiry(daemon):
    name = f"dir/caf\u00e9 + r\u00e9sum\u00e9 (1) {uuid.uuid4().hex[:6]}.txt"
    upload(daemon, "links", name, b"unicode")
    answer = link(daemon, bucket="links", key=name, expires="15m")
    assert answer["expires_in"] == 900
    assert http(answer["url"])[1:] and http(answer["url"])[2] == b"unicode"


# -- misuse of a link is refused by the verifier -------------------------------------------------------------


def test_expired_link_is_refused(daemon):
    name = key()
    upload(daemon, "links", name, b"old")
    answer = link(daemon, bucket="links", key=name, expires=1)
    time.sleep(2.2)
    status, _, body = http(answer["url"])
    assert status == 403 and b"expired" in body


def test_tampered_links_are_refused(daemon):
    name = key()
    upload(daemon, "links", name, b"t")
    url = link(daemon, bucket="links", key=name)["url"]
    assert http(url)[0] == 200
    sig = url[-1]
    status, _, body = http(url[:-1] + ("0" if sig != "0" else "1"))
    assert status == 403 and b"SignatureDoesNotMatch" in body
    status, _, body = http(url.replace(name, "other-" + name))
    assert status == 403 and b"SignatureDoesNotMatch" in body
    status, _, body = http(url.replace("X-Amz-Expires=3600", "X-Amz-Expires=7200"))
    assert status == 403 and b"SignatureDoesNotMatch" in body


# -- policy errors name the field ----------------------------------------------------------------------------


@pytest.mark.parametrize("body, status, field", [
    ({"bucket": "nope", "key": "k"}, 404, "bucket"),
    ({"bucket": "links"}, 400, "key"),
    ({"bucket": "limited", "key": "private/x"}, 403, "key"),
    ({"bucket": "limited", "key": "public/x", "expires": 7200}, 400, "expires"),
    ({"bucket": "links", "key": "k", "expires": 604801}, 400, "expires"),
    ({"bucket": "links", "key": "k", "expires": 0}, 400, "expires"),
    ({"bucket": "links", "key": "k", "expires": "soon"}, 400, "expires"),
    ({"bucket": "ro", "key": "k", "method": "PUT"}, 403, "method"),
    ({"bucket": "ro", "key": "k", "method": "DELETE"}, 403, "method"),
    ({"bucket": "limited", "key": "public/x", "method": "DELETE"}, 403, "method"),
    ({"bucket": "links", "key": "k", "method": "POST"}, 400, "method"),
    ({"bucket": "links", "key": "k", "content_type": "text/plain"}, 400, "content_type"),
    ({"bucket": "links", "key": "k", "method": "PUT", "response_content_type": "x"}, 400, "response_content_type"),
    ({"bucket": "limited", "key": "public/x", "method": "PUT"}, 400, "content_length"),
    ({"bucket": "limited", "key": "public/x", "method": "PUT", "content_length": 4096}, 403, "content_length"),
    ({"bucket": "links", "key": "k", "colour": "blue"}, 400, "colour"),
    ({"bucket": "links", "key": 7}, 400, "key"),
    ({"bucket": "links", "key": "k", "expires": {"s": 1}}, 400, "expires"),
])
def test_policy_errors_name_the_field(daemon, body, status, field):
    got, headers, answer = api(daemon, body)
    assert got == status, answer
    assert answer["error"]["field"] == field and answer["error"]["message"]
    assert headers["Content-Type"] == "application/json"


def test_limited_bucket_grants_what_policy_allows(daemon):
    answer = link(daemon, bucket="limited", key="public/ok.txt", method="PUT", content_length=3, expires=3600)
    assert http(answer["url"], "PUT", b"abc")[0] == 200
    default = link(daemon, bucket="limited", key="public/ok.txt")
    assert default["expires_in"] == 3600


def test_malformed_json_is_400(daemon):
    status, _, answer = api(daemon, b'{"bucket": "links", ')
    assert status == 400 and answer["error"]["code"] == "MalformedJSON"


def test_wrong_media_type_is_415(daemon):
    status, _, _ = api(daemon, {"bucket": "links", "key": "k"}, headers={"Content-Type": "text/plain"})
    assert status == 415


# -- protection: token, loopback, CORS -----------------------------------------------------------------------


def test_missing_token_is_401(daemon):
    status, headers, answer = api(daemon, {"bucket": "links", "key": "k"}, token=None)
    assert status == 401 and answer["error"]["field"] == "authorization"
    assert headers["WWW-Authenticate"].startswith("Bearer")


def test_wrong_token_is_401(daemon):
    assert api(daemon, {"bucket": "links", "key": "k"}, token=TOKEN + "x")[0] == 401
    assert api(daemon, {"bucket": "links", "key": "k"}, token=TOKEN[:-1])[0] == 401


def test_cors_preflight_for_allowed_origin(daemon):
    status, headers, _ = http(f"{daemon.admin_endpoint}/v1/presign", "OPTIONS", headers={
        "Origin": ALLOWED_ORIGIN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert status == 204
    assert headers["Access-Control-Allow-Origin"] == ALLOWED_ORIGIN
    assert "POST" in headers["Access-Control-Allow-Methods"]
    assert {"authorization", "content-type"} <= {h.strip() for h in headers["Access-Control-Allow-Headers"].split(",")}
    status, headers, answer = api(daemon, {"bucket": "links", "key": "k"}, headers={"Origin": ALLOWED_ORIGIN})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == ALLOWED_ORIGIN


def test_cors_refuses_other_origins(daemon):
    status, headers, _ = http(f"{daemon.admin_endpoint}/v1/presign", "OPTIONS", headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert status == 403 and "Access-Control-Allow-Origin" not in headers
    status, headers, answer = api(daemon, {"bucket": "links", "key": "k"}, headers={"Origin": "http://evil.example"})
    assert status == 403 and answer["error"]["field"] == "origin"


def test_without_token_loopback_works_but_foreign_host_is_refused(open_daemon):
    status, _, answer = api(open_daemon, {"bucket": "links", "key": "k"}, token=None)
    assert status == 200, answer
    status, _, answer = api(open_daemon, {"bucket": "links", "key": "k"}, token=None,
                            headers={"Host": "rebind.attacker.example"})
    assert status == 403 and answer["error"]["field"] == "host"


def test_other_admin_paths_still_work(daemon):
    assert http(f"{daemon.admin_endpoint}/healthz")[0] == 200
    assert http(f"{daemon.admin_endpoint}/v1/presign")[0] == 405


# -- redirect mode --------------------------------------------------------------------------------------------


def curl(*args):
    proc = subprocess.run(["curl", "-sS", "--noproxy", "*", *args], capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_redirect_get_followed_by_curl(daemon):
    name, data = key(), os.urandom(1000)
    upload(daemon, "redir", name, data)
    status, headers, _ = http(f"{daemon.endpoint}/redir/{name}")
    assert status == 307 and headers["Location"].startswith("http://127.0.0.1:")
    assert "X-Amz-Expires=120" in headers["Location"] and headers["Cache-Control"] == "no-store"
    assert curl("-L", f"{daemon.endpoint}/redir/{name}") == data


def test_redirect_ranged_get_returns_exact_bytes(daemon):
    name, data = key(), os.urandom(1000)
    upload(daemon, "redir", name, data)
    assert curl("-L", "-r", "100-199", f"{daemon.endpoint}/redir/{name}") == data[100:200]


def test_redirect_head_and_response_overrides(daemon):
    name = key()
    upload(daemon, "redir", name, b"hello")
    out = curl("-L", "-I", f"{daemon.endpoint}/redir/{name}").decode()
    assert "307" in out.splitlines()[0] and re.search(r"(?m)^HTTP/1\.[01] 200", out)
    out = curl("-L", "-D", "-", f"{daemon.endpoint}/redir/{name}?response-content-type=text/x-test").decode()
    assert "Content-Type: text/x-test" in out and out.endswith("hello")


def test_redirect_bucket_proxies_writes_and_readonly_refuses_them(daemon):
    status, headers, _ = http(f"{daemon.endpoint}/redir/{key()}", "PUT", b"x")
    assert status != 307  # proxied: the header-signed request reaches the (presign-only) verifier
    assert status == 403 and "x-amz-error-code" not in headers
    status, headers, _ = http(f"{daemon.endpoint}/redir-ro/{key()}", "PUT", b"x")
    assert status == 403 and headers["x-amz-error-code"] == "AccessDenied"


def test_metrics_count_links_and_redirects(daemon):
    name = key()
    upload(daemon, "redir", name, b"m")
    http(f"{daemon.endpoint}/redir/{name}")
    text = http(f"{daemon.admin_endpoint}/metrics")[2].decode()
    assert re.search(r'presignd_presigned_links_total\{bucket="redir",method="PUT"\} [1-9]', text)
    assert re.search(r'presignd_redirects_total\{bucket="redir"\} [1-9]', text)
