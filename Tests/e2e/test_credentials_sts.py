"""AssumeRole and AssumeRoleWithWebIdentity as credential sources (issue 22 §1, §4): presignd calls STS over
HTTPS with its own client (TLS verified against the test CA), signs AssumeRole with its own signer, reads the XML
answer and signs upstream requests with the session keys and `X-Amz-Security-Token`; the strict S3 server (moto
with authentication on) accepts them. With sessions of 60 seconds, requests keep succeeding across three refreshes
of each provider with not one failure, and none waits for a refresh although STS answers slowly.
"""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from conftest import require_presignd_binary
from credentials_support import get, ready
from harness.moto import MotoServer
from harness.net import wait_until
from harness.nginx import NginxTLSFront
from harness.presignd import Presignd
from harness.tls import TestCA
from sts_support import EXTERNAL_ID, ROLE_ARN, StsBroker, UpstreamsConfig, https_endpoint, serve_tls, setup_role

LIFETIME = 60
STS_DELAY = 1.5


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    server = MotoServer(str(tmp_path_factory.mktemp("moto")), user_actions=("s3:*", "sts:AssumeRole"),
                        before_auth=setup_role).start()
    s3 = server.client()
    for bucket in ("data", "other"):
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="object.txt", Body=b"object body")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return TestCA(str(tmp_path_factory.mktemp("ca")))


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(extra)
    return env


def start(tmp_path, config, env) -> Presignd:
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path / "presignd"), env=env)
    daemon.start()
    wait_until(lambda: ready(daemon)[0] == 200, timeout=20, what="/readyz ready after the first fetch",
               details=lambda: daemon.log_text() + ready(daemon)[1])
    return daemon


def test_assume_role_through_moto_sts_over_https(tmp_path, moto, ca):
    """moto's own STS checks the AssumeRole signature (authentication is on) and its S3 accepts the session keys
    only with their session token."""
    front = NginxTLSFront(str(tmp_path / "nginx"), ca, "127.0.0.1", moto.port).start()
    config = UpstreamsConfig(moto.endpoint, {"moto": {
        "credential_source": "assume_role", "role_arn": ROLE_ARN, "role_session_name": "presignd-e2e",
        "external_id": EXTERNAL_ID, "duration": "15m", "access_key_id": moto.access_key_id,
        "secret_access_key": moto.secret_access_key, "sts_endpoint": front.endpoint(),
        "credentials_ca_file": ca.ca_file}}, {"data": "moto"})
    daemon = start(tmp_path, config, clean_env())
    try:
        status, body, _ = get(daemon.endpoint + "/data/object.txt")
        assert (status, body) == (200, b"object body"), body
        logs = daemon.log_text()
        assert "credentials.provider=assume_role" in logs and "Credentials refreshed" in logs
        assert moto.secret_access_key not in logs
        assert any(line.startswith('POST "/" 200') and "/sts/aws4_request" in line
                   for line in front.access_log("good")), "STS was not called through TLS"
        # `presignd credentials` fetches once the same way and shows only the key's last four characters.
        out = subprocess.run([require_presignd_binary(), "credentials", "--config", daemon.config_path],
                             capture_output=True, text=True, timeout=30, env=clean_env())
        assert out.returncode == 0, out.stderr
        assert "assume_role" in out.stdout and "…" in out.stdout, out.stdout
    finally:
        daemon.stop()
        front.stop()


def test_untrusted_sts_certificate_is_refused(tmp_path, moto, ca):
    front = NginxTLSFront(str(tmp_path / "nginx"), ca, "127.0.0.1", moto.port).start()
    config = UpstreamsConfig(moto.endpoint, {"moto": {
        "credential_source": "assume_role", "role_arn": ROLE_ARN, "access_key_id": moto.access_key_id,
        "secret_access_key": moto.secret_access_key, "sts_endpoint": front.endpoint("untrusted"),
        "credentials_ca_file": ca.ca_file}}, {"data": "moto"})
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path / "presignd"), env=clean_env())
    daemon.start()
    try:
        wait_until(lambda: "certificate" in ready(daemon)[1], timeout=15, what="/readyz names the TLS failure",
                   details=lambda: ready(daemon)[1])
        status, body, _ = get(daemon.endpoint + "/data/object.txt")
        assert status == 503 and b"STS" in body, body
        assert not any(line.startswith("POST") for line in front.access_log("untrusted"))
    finally:
        daemon.stop()
        front.stop()


def test_three_refreshes_of_assume_role_and_web_identity_without_a_failed_or_waiting_request(tmp_path, moto, ca):
    broker = StsBroker(moto, (moto.access_key_id, moto.secret_access_key), "eu-west-1", LIFETIME, STS_DELAY)
    serve_tls(broker, ca)
    token_file = tmp_path / "irsa-token"
    token_file.write_text("web-identity-token-1\n")
    broker.token = "web-identity-token-1"
    sts = {"sts_endpoint": https_endpoint(broker), "sts_region": "eu-west-1", "credentials_ca_file": ca.ca_file}
    config = UpstreamsConfig(moto.endpoint, {
        "assumed": {"credential_source": "assume_role", "role_arn": ROLE_ARN, "external_id": EXTERNAL_ID,
                    "access_key_id": moto.access_key_id, "secret_access_key": moto.secret_access_key, **sts},
        "irsa": {"credential_source": "web_identity", **sts},
    }, {"data": "assumed", "other": "irsa"})
    # The web identity upstream is configured the way EKS IRSA configures a pod: from the environment.
    env = clean_env(AWS_WEB_IDENTITY_TOKEN_FILE=str(token_file), AWS_ROLE_ARN=ROLE_ARN,
                    AWS_ROLE_SESSION_NAME="irsa-session")
    daemon = start(tmp_path, config, env)
    try:
        count, failures, latencies = 0, [], []
        rotated = 1
        deadline = time.monotonic() + 4 * LIFETIME
        while (broker.count("AssumeRole") < 4 or broker.count("AssumeRoleWithWebIdentity") < 4) \
                and time.monotonic() < deadline:
            for bucket in ("data", "other"):
                status, body, seconds = get(f"{daemon.endpoint}/{bucket}/object.txt")
                count += 1
                latencies.append(seconds)
                if (status, body) != (200, b"object body"):
                    failures.append((bucket, status, body[:300]))
            web = broker.count("AssumeRoleWithWebIdentity")
            if web > rotated:  # IRSA rotates the token; presignd reads the file again on every refresh
                rotated = web
                with broker.lock:
                    broker.token = f"web-identity-token-{web}"
                token_file.write_text(f"web-identity-token-{web}\n")
            time.sleep(0.02)  # pacing only: about 50 requests a second
        assert broker.count("AssumeRole") >= 4 and broker.count("AssumeRoleWithWebIdentity") >= 4, \
            (broker.calls, broker.problems, daemon.log_text()[-3000:])
        assert not failures, f"{len(failures)} of {count} requests failed: {failures[:3]}"
        assert broker.problems == [], broker.problems
        # STS takes 1.5 s per call; a request that waited on a refresh would show it.
        assert max(latencies) < STS_DELAY / 2, f"slowest request {max(latencies):.3f} s"
        sessions = {p.get("RoleSessionName") for p in broker.parameters}
        assert sessions == {"presignd", "irsa-session"}, sessions
        assert all(p.get("DurationSeconds") == "3600" for p in broker.parameters)
        logs = daemon.log_text()
        assert "credentials.provider=web_identity" in logs and "credentials.provider=assume_role" in logs
        assert "web-identity-token" not in logs and moto.secret_access_key not in logs
        print(f"{count} requests, 0 failed, slowest {max(latencies) * 1000:.1f} ms, "
              f"{broker.count('AssumeRole')} AssumeRole and {broker.count('AssumeRoleWithWebIdentity')} web identity "
              "calls")
    finally:
        daemon.stop()
        broker.stop()


def test_the_chain_assumes_the_role_its_profile_names(tmp_path, moto):
    """`chain`: no environment keys, so the profile wins; its ~/.aws/config section assumes the role with the
    source profile's keys from ~/.aws/credentials (as the AWS CLI reads them), through moto's STS."""
    (tmp_path / "credentials").write_text(
        f"[base]\naws_access_key_id = {moto.access_key_id}\naws_secret_access_key = {moto.secret_access_key}\n")
    (tmp_path / "config").write_text(
        f"[profile app]\nrole_arn = {ROLE_ARN}\nsource_profile = base\nrole_session_name = from-profile\n")
    env = clean_env(AWS_PROFILE="app", AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "credentials"),
                    AWS_CONFIG_FILE=str(tmp_path / "config"), AWS_ENDPOINT_URL_STS=moto.endpoint)
    config = UpstreamsConfig(moto.endpoint, {"moto": {"credential_source": "chain"}}, {"data": "moto"})
    daemon = start(tmp_path, config, env)
    try:
        status, body, _ = get(daemon.endpoint + "/data/object.txt")
        assert (status, body) == (200, b"object body"), body
        logs = daemon.log_text()
        assert "credentials.provider=chain:profile " in logs, logs
        assert moto.secret_access_key not in logs
    finally:
        daemon.stop()
