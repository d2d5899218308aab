"""presignd presign URLs against the independent verifying server (presign_verifier.py)."""
import pathlib
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from helpers_sigv4 import ACCESS_KEY, SECRET_KEY, run_json

REGION = "us-east-1"


@pytest.fixture(scope="module")
def verifier():
    script = pathlib.Path(__file__).with_name("presign_verifier.py")
    proc = subprocess.Popen(
        [sys.executable, str(script), "--access-key-id", ACCESS_KEY, "--secret-access-key", SECRET_KEY,
         "--region", REGION], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def presign(endpoint, location, *extra, secret=SECRET_KEY):
    return run_json(["presign", location, "--endpoint", endpoint, "--region", REGION,
                     "--access-key-id", ACCESS_KEY, "--secret-access-key", secret, *extra])


def fetch(url, method="GET", data=None, headers=None):
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


KEYS = ["plain.txt", "dir/sub dir/caf\u00e9 + r\u00e9sum\u00e9 (1).txt", "\u65e5\u672c/\u0440\u0443\u0441/\U0001F600!*'();:@&=$,",
        "literal%20percent", "a//b/./c/../d/"]


@pytest.mark.parametrize("key", KEYS)
def test_put_then_get_and_head_roundtrip(verifier, key):
    body = ("payload for " + key).encode()
    put = presign(verifier, f"s3://bucket/{key}", "--method", "PUT", "--content-type", "text/plain", "--expires", "5m")
    assert put["headers"] == {"Content-Type": "text/plain"}
    assert fetch(put["url"], "PUT", body, {"Content-Type": "text/plain"})[0] == 200
    get = presign(verifier, f"s3://bucket/{key}", "--expires", "1h")
    assert fetch(get["url"]) == (200, body)
    head = presign(verifier, f"s3://bucket/{key}", "--method", "HEAD")
    assert fetch(head["url"], "HEAD")[0] == 200


def test_response_overrides_are_signed(verifier):
    put = presign(verifier, "s3://bucket/o.bin", "--method", "PUT")
    assert fetch(put["url"], "PUT", b"xyz")[0] == 200
    get = presign(verifier, "s3://bucket/o.bin", "--response-content-disposition", 'attachment; filename="a b.txt"',
                  "--response-content-type", "text/plain")
    assert fetch(get["url"]) == (200, b"xyz")


def test_tampered_signature_is_refused(verifier):
    fetch(presign(verifier, "s3://bucket/t.txt", "--method", "PUT")["url"], "PUT", b"t")
    url = presign(verifier, "s3://bucket/t.txt")["url"]
    assert fetch(url)[0] == 200
    last = url[-1]
    tampered = url[:-1] + ("0" if last != "0" else "1")
    status, body = fetch(tampered)
    assert status == 403 and b"SignatureDoesNotMatch" in body


def test_tampered_key_is_refused(verifier):
    url = presign(verifier, "s3://bucket/t.txt")["url"]
    status, body = fetch(url.replace("/t.txt?", "/u.txt?"))
    assert status == 403 and b"SignatureDoesNotMatch" in body


def test_expired_url_is_refused(verifier):
    url = presign(verifier, "s3://bucket/t.txt", "--date", "20200101T000000Z", "--expires", "60")["url"]
    status, body = fetch(url)
    assert status == 403 and b"AccessDenied" in body


def test_put_with_wrong_content_type_is_refused(verifier):
    url = presign(verifier, "s3://bucket/typed.png", "--method", "PUT", "--content-type", "image/png")["url"]
    status, body = fetch(url, "PUT", b"png", {"Content-Type": "image/jpeg"})
    assert status == 403 and b"SignatureDoesNotMatch" in body
    assert fetch(url, "PUT", b"png", {"Content-Type": "image/png"})[0] == 200


def test_url_signed_with_another_secret_is_refused(verifier):
    url = presign(verifier, "s3://bucket/t.txt", secret="not-the-secret")["url"]
    status, body = fetch(url)
    assert status == 403 and b"SignatureDoesNotMatch" in body


def test_delete_then_get_is_not_found(verifier):
    fetch(presign(verifier, "s3://bucket/gone.txt", "--method", "PUT")["url"], "PUT", b"bye")
    assert fetch(presign(verifier, "s3://bucket/gone.txt", "--method", "DELETE")["url"], "DELETE")[0] == 204
    assert fetch(presign(verifier, "s3://bucket/gone.txt")["url"])[0] == 404


def test_unsigned_request_is_refused(verifier):
    assert fetch(f"{verifier}/bucket/t.txt")[0] == 403
