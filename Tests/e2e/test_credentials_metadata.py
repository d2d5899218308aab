"""Container credentials and EC2 instance metadata (IMDSv2) as credential sources (issue 22 §1): presignd fetches
keys from a metadata server this test starts on 127.0.0.1, through its own HTTP client, and refreshes them before
they expire. The server issues new keys (valid a few seconds) on every credentials request; the upstream accepts
only those keys with their session token, so requests succeeding across refreshes show the refreshed keys in use.
"""
from __future__ import annotations

import json
import os
import threading
import time

import pytest

from conftest import require_presignd_binary
from credentials_support import (
    KeyCheckingUpstream, LocalServer, QuietHandler, RefreshingConfig, get, iso, issue_key, issued, ready,
)
from harness.net import wait_until
from harness.presignd import Presignd

LIFETIME_SECONDS = 4
# The endpoint answers credentials this slowly: a request that waited on a refresh would take at least as long.
# A second (the refresh starts half a lifetime ahead, so keys still arrive in time) keeps the bound below, half of
# it, far above what a loaded 2-core CI machine adds to a local GET (a 0.32 s stall was seen with 0.4 s here).
# IMDS requests get AWS_METADATA_SERVICE_TIMEOUT seconds (the SDKs' 1 s default would cut a 1 s answer).
ENDPOINT_DELAY = 1.0
IMDS_TIMEOUT_SECONDS = "3"
ROLE = "presignd-test-role"
IMDS_TOKEN = "imds-session-token-for-the-test"


class MetadataServer(LocalServer):
    """The ECS/EKS container credentials endpoint (`GET /v1/credentials` with `Authorization`) and IMDSv2
    (`PUT /latest/api/token`, then the role and its credentials with `X-aws-ec2-metadata-token`)."""

    def __init__(self, state: str, container_token: str):
        self.state = state
        self.container_token = container_token
        self.lock = threading.Lock()
        self.log: list[str] = []
        outer = self

        class Handler(QuietHandler):
            def credentials(self, token_field: str) -> bytes:
                time.sleep(ENDPOINT_DELAY)
                key = issue_key(outer.state, LIFETIME_SECONDS)
                document = {"AccessKeyId": key["id"], "SecretAccessKey": key["secret"], token_field: key["token"],
                            "Expiration": iso(key["expires"])}
                if token_field == "Token":
                    document.update({"Code": "Success", "Type": "AWS-HMAC", "LastUpdated": iso(int(time.time()))})
                return json.dumps(document).encode()

            def do_PUT(self):
                with outer.lock:
                    outer.log.append(f"PUT {self.path}")
                if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                    self.answer(200, IMDS_TOKEN.encode())
                else:
                    self.answer(400, b"bad token request")

            def do_GET(self):
                with outer.lock:
                    outer.log.append(f"GET {self.path} token={self.headers.get('X-aws-ec2-metadata-token')}")
                    expected = outer.container_token
                if self.path == "/v1/credentials":
                    if self.headers.get("Authorization") != expected:
                        self.answer(403, b"wrong authorization token")
                    else:
                        self.answer(200, self.credentials("Token"))
                elif self.path.startswith("/latest/meta-data/iam/security-credentials/"):
                    if self.headers.get("X-aws-ec2-metadata-token") != IMDS_TOKEN:
                        self.answer(401, b"IMDSv2 token required")
                    elif self.path.endswith("/security-credentials/"):
                        self.answer(200, (ROLE + "\n").encode())
                    elif self.path.endswith("/" + ROLE):
                        self.answer(200, self.credentials("Token"))
                    else:
                        self.answer(404, b"no such role")
                else:
                    self.answer(404, b"not found")

        super().__init__(Handler)


@pytest.fixture
def servers(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "issued.jsonl").write_text("")
    metadata = MetadataServer(str(state), container_token="container-token-1")
    upstream = KeyCheckingUpstream(str(state))
    yield state, metadata, upstream
    metadata.stop()
    upstream.stop()


def start(tmp_path, upstream, source, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(env_extra)
    daemon = Presignd(require_presignd_binary(), RefreshingConfig("platform", upstream.endpoint, {"credential_source": source}), str(tmp_path / "presignd"),
                      env=env)
    daemon.start()
    wait_until(lambda: ready(daemon)[0] == 200, timeout=10, what="/readyz ready after the first fetch",
               details=lambda: daemon.log_text())
    return daemon


def requests_across_refreshes(daemon, state, refreshes: int, on_refresh=None) -> tuple[int, list]:
    """GETs through presignd until `refreshes` more keys were issued; returns (count, failures). No request may
    take as long as the endpoint takes to answer (none waits on a refresh)."""
    target = len(issued(state)) + refreshes
    deadline = time.monotonic() + (refreshes + 2) * LIFETIME_SECONDS
    count, failures, seen, slowest = 0, [], len(issued(state)), 0.0
    while len(issued(state)) < target and time.monotonic() < deadline:
        status, body, seconds = get(daemon.endpoint + "/data/object.txt")
        count += 1
        slowest = max(slowest, seconds)
        if status != 200:
            failures.append((status, body[:200]))
        if on_refresh and len(issued(state)) != seen:
            seen = len(issued(state))
            on_refresh(seen)
    assert len(issued(state)) >= target, f"only {len(issued(state))} keys issued"
    assert slowest < ENDPOINT_DELAY / 2, f"the slowest request took {slowest:.3f} s"
    return count, failures


def test_container_credentials_with_a_rotating_token_file(tmp_path, servers):
    state, metadata, upstream = servers
    token_file = tmp_path / "eks-pod-identity-token"
    token_file.write_text("container-token-1\n")
    daemon = start(tmp_path, upstream, "container", {
        "AWS_CONTAINER_CREDENTIALS_FULL_URI": metadata.endpoint + "/v1/credentials",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(token_file),
    })
    try:
        def rotate(_):  # EKS rotates the token file; presignd re-reads it on every fetch
            with metadata.lock:
                metadata.container_token = "container-token-2"
            token_file.write_text("container-token-2\n")

        count, failures = requests_across_refreshes(daemon, state, refreshes=3, on_refresh=rotate)
        assert not failures and count > 0, f"{len(failures)} of {count} failed: {failures[:3]}"
        assert len(set(upstream.keys_used)) >= 3 and upstream.refusals == []
        logs = daemon.log_text()
        assert "credentials.provider=container" in logs and "Credentials refreshed" in logs
        for key in issued(state):
            assert key["secret"] not in logs and key["token"] not in logs
        assert "container-token-2" not in logs
    finally:
        daemon.stop()


def test_instance_metadata_imdsv2_only(tmp_path, servers):
    state, metadata, upstream = servers
    daemon = start(tmp_path, upstream, "imds", {"AWS_EC2_METADATA_SERVICE_ENDPOINT": metadata.endpoint,
                                                "AWS_METADATA_SERVICE_TIMEOUT": IMDS_TIMEOUT_SECONDS})
    try:
        count, failures = requests_across_refreshes(daemon, state, refreshes=3)
        assert not failures and count > 0, f"{len(failures)} of {count} failed: {failures[:3]}"
        assert len(set(upstream.keys_used)) >= 3 and upstream.refusals == []
        with metadata.lock:
            log = list(metadata.log)
        assert log[0] == "PUT /latest/api/token"
        gets = [line for line in log if line.startswith("GET")]
        assert gets and all(line.endswith(f"token={IMDS_TOKEN}") for line in gets), gets  # never IMDSv1
        assert f"GET /latest/meta-data/iam/security-credentials/{ROLE} token={IMDS_TOKEN}" in log
        assert "credentials.provider=imds" in daemon.log_text()
    finally:
        daemon.stop()


def test_instance_metadata_down_means_not_ready_and_503(tmp_path, servers):
    state, metadata, upstream = servers
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = "http://127.0.0.1:1"  # nothing listens there
    daemon = Presignd(require_presignd_binary(), RefreshingConfig("platform", upstream.endpoint, {"credential_source": "imds"}), str(tmp_path / "presignd"),
                      env=env)
    daemon.start()
    try:
        wait_until(lambda: "connect" in ready(daemon)[1], timeout=10, what="/readyz names the failed fetch")
        status, text = ready(daemon)
        assert status == 503 and "no valid credentials for upstream 'platform'" in text, text
        status, body, _ = get(daemon.endpoint + "/data/object.txt")
        assert status == 503 and b"<Code>ServiceUnavailable</Code>" in body and b"instance metadata" in body, body
    finally:
        daemon.stop()
