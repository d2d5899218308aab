"""The SDKs' credential chain and container credentials over HTTPS (issue 22 §1): `check-config` shows the chain
without fetching anything; the daemon fetches from the link that won (here a container endpoint at an https://
FULL_URI, verified with the CA from AWS_CA_BUNDLE as the SDKs do, with AWS_CONTAINER_AUTHORIZATION_TOKEN) and
says which one won."""
from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from conftest import require_presignd_binary
from credentials_support import KeyCheckingUpstream, LocalServer, QuietHandler, RefreshingConfig, get, iso, \
    issue_key, ready
from harness.net import wait_until
from harness.presignd import Presignd
from harness.tls import TestCA
from sts_support import https_endpoint, serve_tls

TOKEN = "pod-identity-token"


class ContainerEndpoint(LocalServer):
    """`GET /v1/credentials` with the authorization token: new keys (valid 4 s) each time."""

    def __init__(self, state: str):
        self.lock = threading.Lock()
        self.requests: list[str] = []
        outer = self

        class Handler(QuietHandler):
            def do_GET(self):
                with outer.lock:
                    outer.requests.append(self.path)
                if self.path != "/v1/credentials" or self.headers.get("Authorization") != TOKEN:
                    self.answer(403, b"no")
                    return
                key = issue_key(state, 4)
                self.answer(200, (f'{{"AccessKeyId": "{key["id"]}", "SecretAccessKey": "{key["secret"]}", '
                                  f'"Token": "{key["token"]}", "Expiration": "{iso(key["expires"])}"}}').encode())

        super().__init__(Handler)


@pytest.fixture
def setup(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "issued.jsonl").write_text("")
    ca = TestCA(str(tmp_path / "ca"))
    container = ContainerEndpoint(str(state))
    serve_tls(container, ca)
    upstream = KeyCheckingUpstream(str(state))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(HOME=str(tmp_path), AWS_CA_BUNDLE=ca.ca_file, AWS_CONTAINER_AUTHORIZATION_TOKEN=TOKEN,
               AWS_CONTAINER_CREDENTIALS_FULL_URI=https_endpoint(container) + "/v1/credentials")
    yield state, container, upstream, env
    container.stop()
    upstream.stop()


def test_check_config_shows_the_chain_without_fetching(tmp_path, setup):
    _, container, upstream, env = setup
    config = RefreshingConfig("platform", upstream.endpoint, {"credential_source": "chain"})
    path = tmp_path / "presignd.toml"
    path.write_text(config.render())
    out = subprocess.run([require_presignd_binary(), "check-config", "--config", str(path)], capture_output=True,
                         text=True, timeout=30, env=env)
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines() if line.strip().startswith("chain ")]
    assert [line.split(":")[0] for line in lines] == [
        "chain environment", "chain profile default", "chain web_identity", "chain container"], out.stdout
    assert "chain: container won" in out.stdout and "https://127.0.0.1:" in out.stdout
    assert container.requests == [], "check-config fetched credentials"
    assert TOKEN not in out.stdout + out.stderr


def test_the_chain_fetches_from_an_https_container_endpoint_and_says_which_link_won(tmp_path, setup):
    state, container, upstream, env = setup
    config = RefreshingConfig("platform", upstream.endpoint, {"credential_source": "chain"})
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path / "presignd"), env=env)
    daemon.start()
    try:
        wait_until(lambda: ready(daemon)[0] == 200, timeout=10, what="/readyz ready after the first fetch",
                   details=lambda: daemon.log_text())
        # Keys live 4 s: refreshed about every 2 s. Requests signed with three keys in turn all succeed.
        deadline = time.monotonic() + 15
        while len(set(upstream.keys_used)) < 3 and time.monotonic() < deadline:
            status, body, _ = get(daemon.endpoint + "/data/object.txt")
            assert status == 200, body
        assert upstream.refusals == [] and len(set(upstream.keys_used)) >= 3
        logs = daemon.log_text()
        assert "credentials.provider=chain:container" in logs, logs
        assert TOKEN not in logs
        metrics = get(daemon.admin_endpoint + "/metrics")[1].decode()
        assert 'provider="chain:container"' in metrics, metrics
    finally:
        daemon.stop()


def test_an_untrusted_container_certificate_is_refused(tmp_path, setup):
    _, container, upstream, env = setup
    env = dict(env, AWS_CA_BUNDLE="/etc/ssl/certs/ca-certificates.crt")  # the system store: no test CA in it
    config = RefreshingConfig("platform", upstream.endpoint, {"credential_source": "container"})
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path / "presignd"), env=env)
    daemon.start()
    try:
        wait_until(lambda: "certificate" in ready(daemon)[1], timeout=10, what="/readyz names the TLS failure",
                   details=lambda: ready(daemon)[1])
        assert container.requests == []
    finally:
        daemon.stop()
