"""`presignd mint` (issue 22 §3): R2 temporary credentials derived locally. The derivation is recomputed here
independently with Python's hmac/hashlib/base64, following Cloudflare's documented steps ("Temporary
credentials", "Locally (client-side signing)"): an HS256 JWT signed with the parent secret, the secret is the
SHA-256 hex of the JWT, the session token is base64("jwt/" + JWT), the access key id is the parent's."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time

import pytest

from helpers_sigv4 import run_presignd
from r2_credentials_support import b64url, b64url_decode, decode_session_token, derived_secret

ACCOUNT = "023e105f4ecef8ad9ca31a8372d0c353"
PARENT_KEY = "PARENTKEYID0123456789"
PARENT_SECRET = "parent-secret-access-key-for-the-e2e-test"

CONFIG = f"""
[server]
listen = ["127.0.0.1:0"]
admin_listen = ""

[upstream.r2]
provider = "r2"
account_id = "{ACCOUNT}"
access_key_id = "{PARENT_KEY}"
secret_access_key = "{PARENT_SECRET}"

[[bucket]]
name = "media"
upstream = "r2"
access = "read-write"

[[bucket]]
name = "archive"
upstream = "r2"

[[bucket]]
name = "uploads"
upstream = "r2"
access = "read-write"
allowed_prefixes = ["users/"]
"""


@pytest.fixture(scope="module")
def config_path(tmp_path_factory):
    path = os.path.join(str(tmp_path_factory.mktemp("mint")), "presignd.toml")
    with open(path, "w") as f:
        f.write(CONFIG)
    return path


def mint(config_path, *args):
    return run_presignd(["mint", "--config", config_path, *args], check=False)


def test_json_output_matches_an_independent_derivation(config_path):
    before = int(time.time())
    code, out, err = mint(config_path, "--bucket", "media", "--permission", "object-read-write",
                          "--prefix", "photos/", "--object", "index.html", "--ttl", "15m", "--json")
    after = int(time.time())
    assert code == 0, err
    creds = json.loads(out)
    assert creds["Version"] == 1
    assert creds["AccessKeyId"] == PARENT_KEY  # the parent's key id is reused

    # The session token is base64("jwt/" + JWT).
    token = base64.b64decode(creds["SessionToken"], validate=True).decode()
    assert token.startswith("jwt/")
    jwt = token[len("jwt/"):]

    # The JWT parses: base64url header and payload, HS256 over "header.payload" keyed by the parent secret.
    header_b64, payload_b64, signature_b64 = jwt.split(".")
    assert json.loads(b64url_decode(header_b64)) == {"alg": "HS256", "typ": "JWT"}
    expected_mac = hmac.new(PARENT_SECRET.encode(), f"{header_b64}.{payload_b64}".encode(), hashlib.sha256).digest()
    assert hmac.compare_digest(b64url_decode(signature_b64), expected_mac)
    assert signature_b64 == b64url(expected_mac)  # unpadded base64url, RFC 7515

    claims = json.loads(b64url_decode(payload_b64))
    assert claims["bucket"] == "media"
    assert claims["scope"] == "object-read-write"
    assert claims["paths"] == {"prefixPaths": ["photos/"], "objectPaths": ["index.html"]}
    assert claims["sub"] == ACCOUNT
    assert claims["iss"] == PARENT_KEY
    assert claims["aud"] == f"{ACCOUNT}.r2.cloudflarestorage.com"
    assert before <= claims["iat"] <= after
    assert claims["exp"] == claims["iat"] + 900

    # The secret is the SHA-256 hex digest of the signed JWT.
    assert creds["SecretAccessKey"] == hashlib.sha256(jwt.encode()).hexdigest()
    expiration = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["exp"]))
    assert creds["Expiration"] == expiration


def test_unscoped_credentials_have_no_paths_claim(config_path):
    code, out, err = mint(config_path, "--bucket", "archive", "--permission", "object-read-only", "--json")
    assert code == 0, err
    _, claims = decode_session_token(json.loads(out)["SessionToken"], PARENT_SECRET)
    assert "paths" not in claims and claims["scope"] == "object-read-only"
    assert claims["exp"] - claims["iat"] == 900  # the default lifetime, 15 minutes


def test_env_and_aws_config_formats_carry_the_same_kind_of_keys(config_path):
    code, out, err = mint(config_path, "--bucket", "media", "--permission", "object-read-only", "--env")
    assert code == 0, err
    env = dict(line[len("export "):].split("=", 1) for line in out.splitlines() if line.startswith("export "))
    assert env["AWS_ACCESS_KEY_ID"] == PARENT_KEY
    jwt, _ = decode_session_token(env["AWS_SESSION_TOKEN"], PARENT_SECRET)
    assert env["AWS_SECRET_ACCESS_KEY"] == derived_secret(jwt)
    assert env["AWS_ENDPOINT_URL"] == f"https://{ACCOUNT}.r2.cloudflarestorage.com"

    code, out, err = mint(config_path, "--bucket", "media", "--permission", "object-read-only", "--aws-config",
                          "--profile", "scoped")
    assert code == 0, err
    lines = out.splitlines()
    assert "[scoped]" in lines
    values = dict(line.split(" = ", 1) for line in lines if " = " in line)
    jwt, _ = decode_session_token(values["aws_session_token"], PARENT_SECRET)
    assert values["aws_secret_access_key"] == derived_secret(jwt)


@pytest.mark.parametrize("args, option, words", [
    (["--bucket", "archive", "--permission", "object-read-write"], "--permission", "read-only"),
    (["--bucket", "uploads", "--permission", "object-read-only", "--prefix", "admin/"], "--prefix",
     "outside allowed_prefixes"),
    (["--bucket", "uploads", "--permission", "object-read-only"], "--prefix", "allowed_prefixes"),
    (["--bucket", "uploads", "--permission", "admin-read-only", "--prefix", "users/"], "--permission",
     "bucket configuration"),
    (["--bucket", "nope", "--permission", "object-read-only"], "--bucket", "not configured"),
])
def test_scopes_wider_than_the_bucket_policy_are_refused(config_path, args, option, words):
    code, out, err = mint(config_path, *args)
    assert code == 64 and out == ""
    assert f"refused: {option}: " in err and words in err
    assert PARENT_SECRET not in err


def test_lifetimes_over_seven_days_are_refused(config_path):
    code, out, err = mint(config_path, "--bucket", "media", "--permission", "object-read-only", "--ttl", "8d")
    assert code == 64 and out == "" and "--ttl must be 1 to 604800 seconds (7 days)" in err
    code, _, err = mint(config_path, "--bucket", "media", "--permission", "object-read-only", "--ttl", "7d")
    assert code == 0, err


def test_usage_and_config_errors(config_path, tmp_path):
    code, _, err = mint(config_path, "--bucket", "media", "--permission", "everything")
    assert code == 64 and "--permission must be one of" in err
    code, _, err = mint(config_path, "--bucket", "media", "--permission", "object-read-only", "--json", "--env")
    assert code == 64
    broken = tmp_path / "broken.toml"
    broken.write_text("[upstream.r2]\nprovider = \"r2\"\naccount_id = \"xyz\"\n")
    code, _, err = run_presignd(["mint", "--config", str(broken), "--bucket", "b", "--permission",
                                 "object-read-only"], check=False)
    assert code == 78 and "broken.toml:3:" in err
