"""`credential_source = "r2_temporary"` (issue 22 §4, the R2 half): presignd signs an upstream's requests with R2
temporary credentials it mints locally from the parent keys, scoped to the upstream's one bucket, and mints the
next before the current one expires. The upstream is `R2VerifyingUpstream`: it accepts only tokens the parent
secret signed, for this account and endpoint, unexpired, covering the bucket, method and key, and checks every
SigV4 signature (header or presigned) with the secret derived from the token, as R2 does.

The endpoint is `provider = "custom"` with `account_id` (an R2-compatible endpoint at another address), so the
audience is the local server's host; everything else is what `provider = "r2"` runs."""
from __future__ import annotations

import re
import time
import urllib.parse

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from conftest import require_presignd_binary
from credentials_support import get, ready
from harness.net import wait_until
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from helpers_sigv4 import run_presignd
from presign_support import api as presign_api
from presign_support import http
from r2_credentials_support import R2VerifyingUpstream, decode_session_token, derived_secret

ACCOUNT = "023e105f4ecef8ad9ca31a8372d0c353"
PARENT_KEY = "PARENTKEYID0123456789"
PARENT_SECRET = "parent-secret-of-the-r2-temporary-e2e-test"
TTL_SECONDS = 4  # refreshed halfway: a new key every 2 s


def config(endpoint: str) -> PresigndConfig:
    """One upstream per bucket, all on the same verifier: `rotating` (read-write) mints 4-second keys; `media`
    (read-write under users/) and `pics` (read-only, redirect mode) hour-long ones, so the scope checks below use
    a key that cannot expire while they run."""
    def upstream(name: str, ttl: str) -> Upstream:
        return Upstream(name=name, endpoint=endpoint, access_key_id=PARENT_KEY, secret_access_key=PARENT_SECRET,
                        region="auto", extra={"account_id": ACCOUNT, "credential_source": "r2_temporary",
                                              "r2_temporary_ttl": ttl})
    return PresigndConfig(
        upstreams=[upstream("rotating", f"{TTL_SECONDS}s"), upstream("media", "1h"), upstream("pics", "1h")],
        buckets=[Bucket("rotating", "rotating"),
                 Bucket("media", "media", extra={"allowed_prefixes": ["users/"]}),
                 Bucket("pics", "pics", access="read-only", extra={"redirect": True})],
        workers=2, server_extra={"presign_api": "open"})


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    upstream = R2VerifyingUpstream(PARENT_KEY, PARENT_SECRET, ACCOUNT)
    daemon = Presignd(require_presignd_binary(), config(upstream.endpoint), str(tmp_path_factory.mktemp("r2temp")))
    daemon.start()
    wait_until(lambda: ready(daemon)[0] == 200, timeout=10, what="/readyz ready after the first mint",
               details=lambda: daemon.log_text())
    yield daemon, upstream
    daemon.stop()
    upstream.stop()


def signed(url: str, method: str, session_token: str, body: bytes = b"") -> tuple[int, bytes]:
    """Sends a request signed (SigV4 headers) with the temporary key a session token stands for."""
    jwt, _ = decode_session_token(session_token, PARENT_SECRET)
    request = AWSRequest(method=method, url=url, data=body)
    S3SigV4Auth(Credentials(PARENT_KEY, derived_secret(jwt), session_token), "s3", "auto").add_auth(request)
    status, _, answer = http(url, method, body or None, dict(request.headers.items()))
    return status, answer


def token_of(url: str) -> str:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))["X-Amz-Security-Token"]


def test_requests_keep_succeeding_across_refreshes_with_freshly_minted_keys(setup):
    daemon, upstream = setup
    first_refresh_logs = daemon.log_text().count("msg=\"Credentials refreshed\" upstream=rotating")
    issued = lambda: {a["iat"] for a in upstream.accepted if a["path"].startswith("/rotating/")}  # noqa: E731
    before = len(issued())
    count, failures, slowest = 0, [], 0.0
    deadline = time.monotonic() + 12 * TTL_SECONDS  # four keys take about 3 × TTL/2; generous for a loaded CI
    while (len(issued()) < before + 4 or count < 40) and time.monotonic() < deadline:
        if count % 4 == 3:
            status, _, _ = http(daemon.endpoint + f"/rotating/object-{count}.txt", "PUT", b"uploaded")
            body, seconds = b"", 0.0
        else:
            started = time.monotonic()
            status, _, body = http(daemon.endpoint + "/rotating/object.txt")
            seconds = time.monotonic() - started
        count += 1
        slowest = max(slowest, seconds)
        if status != 200:
            failures.append((status, body[:300]))
    keys = sorted(issued())
    assert not failures, f"{len(failures)} of {count} requests failed: {failures[:3]}; refusals {upstream.refusals[:3]}"
    assert len(keys) >= before + 4, f"only {len(keys)} distinct keys signed {count} requests: {keys}"
    assert upstream.refusals == []
    # Every key lived the configured lifetime, and each was minted while the one before was still valid.
    lifetimes = {a["exp"] - a["iat"] for a in upstream.accepted if a["path"].startswith("/rotating/")}
    assert lifetimes == {TTL_SECONDS}
    # Minting is local and off the workers: no request waits on it (the bound of the credential_process test: far
    # above a loaded 2-core machine's stalls, and no request waited for a key to lapse and the next to arrive).
    assert slowest < 2.0, f"the slowest request took {slowest:.3f} s"
    print(f"r2_temporary: {count} requests, 0 failures, {len(keys) - before} keys minted and used, "
          f"slowest {slowest:.3f} s")
    # Each key used was logged when published (the line may reach the harness's reader just after the request).
    refreshes = lambda: daemon.log_text().count("msg=\"Credentials refreshed\" upstream=rotating")  # noqa: E731
    wait_until(lambda: refreshes() - first_refresh_logs >= 3, timeout=5, what="three refreshes logged",
               details=lambda: daemon.log_text()[-2000:])
    logs = daemon.log_text()
    assert "credentials.provider=r2_temporary" in logs
    assert PARENT_SECRET not in logs
    metrics = get(daemon.admin_endpoint + "/metrics")[1].decode()
    labels = '{upstream="rotating",provider="r2_temporary"}'
    assert f"presignd_credentials_valid{labels} 1" in metrics
    assert 'presignd_credentials_valid{upstream="media",provider="r2_temporary"} 1' in metrics
    total = re.search(r"presignd_credentials_refreshes_total" + re.escape(labels) + r" (\d+)", metrics)
    assert total and int(total.group(1)) >= 4, metrics


def test_the_minted_key_covers_its_bucket_and_prefix_only(setup):
    daemon, upstream = setup
    status, _, link = presign_api(daemon, {"bucket": "media", "key": "users/a.txt", "expires": 60}, token=None)
    assert status == 200, link
    token = token_of(link["url"])
    _, claims = decode_session_token(token, PARENT_SECRET)
    assert claims["bucket"] == "media" and claims["scope"] == "object-read-write"
    assert claims["paths"] == {"prefixPaths": ["users/"], "objectPaths": []}
    assert claims["sub"] == ACCOUNT and claims["iss"] == PARENT_KEY
    assert claims["aud"] == upstream.endpoint.removeprefix("http://")
    # The same key, used directly: inside its scope it works (the signing here is right) ...
    assert signed(upstream.endpoint + "/media/users/direct.txt", "PUT", token, b"direct")[0] == 200
    refusals = len(upstream.refusals)
    # ... another bucket and another prefix on the same verifier are refused by it.
    status, body = signed(upstream.endpoint + "/pics/photo.jpg", "GET", token)
    assert status == 403 and b"token is for bucket 'media', not 'pics'" in body, body
    status, body = signed(upstream.endpoint + "/media/admin/secret.txt", "GET", token)
    assert status == 403 and b"outside the token's paths" in body, body
    assert len(upstream.refusals) == refusals + 2
    # The read-only bucket's key cannot write, even where its bucket is.
    status, headers, _ = http(daemon.endpoint + "/pics/photo.jpg")
    assert status == 307, headers
    _, pics_claims = decode_session_token(token_of(headers["Location"]), PARENT_SECRET)
    assert pics_claims["bucket"] == "pics" and pics_claims["scope"] == "object-read-only"
    assert "paths" not in pics_claims and pics_claims["exp"] - pics_claims["iat"] == 3600
    status, body = signed(upstream.endpoint + "/pics/photo.jpg", "PUT", token_of(headers["Location"]), b"x")
    assert status == 403 and b"does not allow PUT" in body, body
    # presignd's own policy stops what lies outside the bucket's prefixes before R2 would see it.
    refusals = len(upstream.refusals)
    assert http(daemon.endpoint + "/media/admin/secret.txt")[0] == 403
    assert len(upstream.refusals) == refusals


def test_presigned_links_carry_the_session_token(setup, tmp_path):
    daemon, upstream = setup
    accepted = len([a for a in upstream.accepted if a["presigned"]])
    # The presign API.
    status, _, link = presign_api(daemon, {"bucket": "media", "key": "users/link.txt", "expires": 60}, token=None)
    assert status == 200, link
    assert "X-Amz-Security-Token=" in link["url"] and f"X-Amz-Credential={PARENT_KEY}%2F" in link["url"]
    assert link["expires_in"] == 60, link
    status, _, body = http(link["url"])
    assert status == 200, body
    # Redirect mode: the 307's link works where it points.
    status, headers, _ = http(daemon.endpoint + "/pics/photo.jpg")
    assert status == 307
    status, _, body = http(headers["Location"])
    assert status == 200, body
    # `presignd presign --config` mints a key of its own, scoped the same way.
    config_file = tmp_path / "presignd.toml"
    config_file.write_text(config(upstream.endpoint).render())
    code, out, err = run_presignd(["presign", "--config", str(config_file), "s3://media/users/cli.txt",
                                   "--expires", "60"], check=False)
    assert code == 0, err
    url = out.splitlines()[0]
    _, claims = decode_session_token(token_of(url), PARENT_SECRET)
    assert claims["bucket"] == "media" and claims["paths"]["prefixPaths"] == ["users/"]
    status, _, body = http(url)
    assert status == 200, body
    assert len([a for a in upstream.accepted if a["presigned"]]) == accepted + 3
    # A link never outlives the key it carries, and says so: here a 4-second key.
    status, _, link = presign_api(daemon, {"bucket": "rotating", "key": "object.txt", "expires": 60}, token=None)
    assert status == 200 and 1 <= link["expires_in"] <= TTL_SECONDS, link
    _, claims = decode_session_token(token_of(link["url"]), PARENT_SECRET)
    assert f"X-Amz-Expires={link['expires_in']}&" in link["url"]
    assert link["expires_at"] <= time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["exp"]))
    assert PARENT_SECRET not in out + err


def test_check_config_and_the_credentials_command_show_the_source_without_secrets(tmp_path):
    config_file = tmp_path / "presignd.toml"
    config_file.write_text(config("http://127.0.0.1:9").render())
    code, out, err = run_presignd(["check-config", "--config", str(config_file)], check=False)
    assert code == 0, err
    assert ("credentials from r2_temporary (bucket media, object-read-write, prefixes users/, ttl 1h) minted from "
            "the parent keys from inline (minted when running, not now)") in out, out
    assert "r2_temporary (bucket pics, object-read-only, ttl 1h)" in out, out
    assert "r2_temporary (bucket rotating, object-read-write, ttl 4s)" in out, out
    before = int(time.time())
    code, out, err = run_presignd(["credentials", "--config", str(config_file), "--upstream", "rotating"],
                                  check=False)
    assert code == 0, err
    match = re.fullmatch(r"upstream rotating: provider r2_temporary \(.*\), key …6789, expires (\S+)\n", out)
    assert match, out
    expires = time.mktime(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert before + TTL_SECONDS - 1 <= expires <= time.time() + TTL_SECONDS
    assert PARENT_SECRET not in out + err


def test_an_upstream_serving_two_buckets_is_a_config_error(tmp_path):
    text = config("http://127.0.0.1:9").render().replace('upstream = "pics"', 'upstream = "media"')
    config_file = tmp_path / "presignd.toml"
    config_file.write_text(text)
    code, _, err = run_presignd(["check-config", "--config", str(config_file)], check=False)
    assert code == 78, err
    lines = text.splitlines()
    start = lines.index("[upstream.media]")
    line = next(n for n, text_line in enumerate(lines[start:], start + 1) if text_line.startswith("credential_source"))
    assert f"presignd.toml:{line}:21: error: credential_source = \"r2_temporary\" scopes the key to one bucket" in err
    assert "serves 2 (media, pics): define one upstream per bucket" in err
