"""`POST /v1/credentials` on the admin listener (issue 22 §3): R2 temporary credentials minted for an app under the
presign API's rules (bearer token, the bucket's `allow` list for the caller, scopes no wider than the bucket's
policy, at most 7 days). The answer is the AWS CLI's credential_process JSON plus the endpoint; the derivation is
recomputed here independently, as in test_credentials_mint."""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request

import pytest

from conftest import require_presignd_binary
from harness.presignd import Presignd, PresigndConfig
from r2_credentials_support import decode_session_token, derived_secret
from test_credentials_mint import ACCOUNT, CONFIG, PARENT_KEY, PARENT_SECRET

TOKEN = "admin-token-for-the-credentials-api"


class R2Config(PresigndConfig):
    """test_credentials_mint's configuration with the admin listener, its token, and a bucket only uid 4242 may
    use."""

    def __init__(self, token_file: str):
        super().__init__(upstreams=[], buckets=[])
        self.token_file = token_file

    def render(self) -> str:
        admin = f'admin_listen = "127.0.0.1:0"\nadmin_token_file = "{self.token_file}"'
        return (CONFIG.replace('admin_listen = ""', admin)
                + '\n[[bucket]]\nname = "private"\nupstream = "r2"\nallow = ["uid:4242"]\n')


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("credentials-api"))
    token_file = os.path.join(directory, "admin.token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    proc = Presignd(require_presignd_binary(), R2Config(token_file), directory)
    proc.start()
    yield proc
    proc.stop()


def post(daemon, body, token: str | None = TOKEN) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(daemon.admin_endpoint + "/v1/credentials", data=data, headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers.get("Cache-Control") == "no-store"
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_mints_scoped_keys_that_match_an_independent_derivation(daemon):
    before = int(time.time())
    status, creds = post(daemon, {"bucket": "uploads", "permission": "object-read-write",
                                  "prefixes": ["users/alice/"], "objects": ["users/shared.txt"], "ttl": "2h"})
    assert status == 200, creds
    assert creds["Version"] == 1 and creds["AccessKeyId"] == PARENT_KEY
    assert creds["Endpoint"] == f"https://{ACCOUNT}.r2.cloudflarestorage.com"
    jwt, claims = decode_session_token(creds["SessionToken"], PARENT_SECRET)  # its HS256 signature verifies
    assert claims["bucket"] == "uploads" and claims["scope"] == "object-read-write"
    assert claims["paths"] == {"prefixPaths": ["users/alice/"], "objectPaths": ["users/shared.txt"]}
    assert claims["sub"] == ACCOUNT and claims["iss"] == PARENT_KEY
    assert before <= claims["iat"] <= int(time.time()) and claims["exp"] == claims["iat"] + 7200
    assert creds["SecretAccessKey"] == derived_secret(jwt)
    assert creds["Expiration"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["exp"]))
    # The log line may reach the harness's stderr reader just after the answer reaches the test.
    minted = daemon.wait_for_log(lambda line: "Temporary credentials minted" in line)
    assert "bucket=uploads" in minted
    logs = daemon.log_text()
    assert creds["SecretAccessKey"] not in logs and creds["SessionToken"] not in logs and PARENT_SECRET not in logs


def test_the_default_lifetime_is_fifteen_minutes(daemon):
    status, creds = post(daemon, {"bucket": "archive", "permission": "object-read-only"})
    assert status == 200, creds
    _, claims = decode_session_token(creds["SessionToken"], PARENT_SECRET)
    assert claims["exp"] - claims["iat"] == 900 and "paths" not in claims


@pytest.mark.parametrize("body, status, field, words", [
    ({"bucket": "media", "permission": "object-read-only", "ttl": "8d"}, 400, "ttl", "7 days"),
    ({"bucket": "media", "permission": "object-read-only", "ttl": 604801}, 400, "ttl", "7 days"),
    ({"bucket": "archive", "permission": "object-read-write"}, 403, "permission", "read-only"),
    ({"bucket": "uploads", "permission": "object-read-only", "prefixes": ["admin/"]}, 403, "prefixes",
     "outside allowed_prefixes"),
    ({"bucket": "uploads", "permission": "object-read-only"}, 403, "prefixes", "allowed_prefixes"),
    ({"bucket": "uploads", "permission": "admin-read-only", "prefixes": ["users/"]}, 403, "permission",
     "bucket configuration"),
    ({"bucket": "private", "permission": "object-read-only"}, 403, "principal", "allow list"),
    ({"bucket": "nope", "permission": "object-read-only"}, 404, "bucket", "not configured"),
    ({"bucket": "media", "permission": "everything"}, 400, "permission", "must be one of"),
    ({"bucket": "media", "permission": "object-read-only", "prefix": ["a/"]}, 400, "prefix", "unknown field"),
    ({"bucket": "media", "permission": "object-read-only", "prefixes": [1]}, 400, "prefixes", "array of strings"),
])
def test_refuses_scopes_wider_than_the_bucket_policy(daemon, body, status, field, words):
    got, answer = post(daemon, body)
    assert got == status, answer
    assert answer["error"]["field"] == field and words in answer["error"]["message"], answer


def test_the_bearer_token_is_required(daemon):
    status, answer = post(daemon, {"bucket": "media", "permission": "object-read-only"}, token=None)
    assert status == 401 and answer["error"]["code"] == "MissingToken"
    status, answer = post(daemon, {"bucket": "media", "permission": "object-read-only"}, token=TOKEN + "x")
    assert status == 401 and answer["error"]["code"] == "InvalidToken"
