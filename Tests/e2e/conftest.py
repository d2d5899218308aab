"""Fixtures for presignd's end-to-end tests (see harness/__init__.py for the pieces).

Servers live for the whole session to keep the run short: a TestCA, moto with auth enforced, nginx as a TLS
front (good / untrusted-CA / wrong-name certificates), a verifying recorder upstream, and one presignd
configured with one bucket per scenario:

| mount (path-style)  | upstream            | access     | for                                      |
| /e2e-bucket         | nginx good → moto   | read-write | everything that should work              |
| /e2e-readonly       | nginx good → moto   | read-only  | 403 AccessDenied on writes               |
| /e2e-untrusted      | nginx untrusted CA  | read-write | 502, the request never reaches moto      |
| /e2e-wrongname      | nginx wrong name    | read-write | 502, the request never reaches moto      |
| /rec-bucket         | recorder (http)     | read-write | signature details moto does not check    |

The presignd binary is `$PRESIGND_BIN` or `<repo>/.build/debug/presignd`; missing is an error unless
`PRESIGND_E2E_ALLOW_MISSING=1` (then tests that need it are skipped).
"""

from __future__ import annotations

import os
import re
import uuid

import pytest

from harness.clients import AwsCli, unsigned_s3
from harness.moto import MotoServer
from harness.nginx import NginxTLSFront
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.recorder import VerifyingUpstreamRecorder
from harness.tls import TestCA

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

BUCKET = "e2e-bucket"
READONLY_BUCKET = "e2e-readonly"
UNTRUSTED_BUCKET = "e2e-untrusted"
WRONGNAME_BUCKET = "e2e-wrongname"
RECORDER_BUCKET = "rec-bucket"

# Loopback traffic must never go through a proxy from the environment.
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost,::1"


def pytest_configure(config):
    config.addinivalue_line("markers", "last: run after every other test (e.g. checks over the whole session's logs)")


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)  # stable: keeps the rest in order


def presignd_binary() -> str:
    return os.environ.get("PRESIGND_BIN") or os.path.join(REPO, ".build", "debug", "presignd")


def require_presignd_binary() -> str:
    binary = presignd_binary()
    if os.path.isfile(binary) and os.access(binary, os.X_OK):
        return binary
    message = (f"presignd binary not found at {binary} (build with `swift build`, or set PRESIGND_BIN); "
               "set PRESIGND_E2E_ALLOW_MISSING=1 to skip the tests that need it")
    if os.environ.get("PRESIGND_E2E_ALLOW_MISSING") == "1":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


# -- servers ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def e2e_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("presignd-e2e"))


@pytest.fixture(scope="session")
def test_ca(e2e_dir) -> TestCA:
    return TestCA(os.path.join(e2e_dir, "pki"))


@pytest.fixture(scope="session")
def moto(e2e_dir):
    server = MotoServer(os.path.join(e2e_dir, "moto"))
    try:
        server.start()
        server.create_buckets(BUCKET, READONLY_BUCKET, UNTRUSTED_BUCKET, WRONGNAME_BUCKET)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def moto_s3(moto):
    """Signed boto3 client straight to moto (to set up and check state behind presignd's back)."""
    return moto.client()


@pytest.fixture(scope="session")
def nginx_front(e2e_dir, test_ca, moto):
    front = NginxTLSFront(os.path.join(e2e_dir, "nginx"), test_ca, moto.host, moto.port)
    try:
        front.start()
        yield front
    finally:
        front.stop()


@pytest.fixture(scope="session")
def recorder():
    rec = VerifyingUpstreamRecorder().start()
    yield rec
    rec.stop()


@pytest.fixture(scope="module")
def rec_unwrap():
    """A recorder of its own per test module, behind an `aws_chunked = "unwrap"` upstream."""
    rec = VerifyingUpstreamRecorder().start()
    yield rec
    rec.stop()


@pytest.fixture(scope="module")
def rec_forward():
    """A recorder of its own per test module, behind an `aws_chunked = "forward"` upstream."""
    rec = VerifyingUpstreamRecorder().start()
    yield rec
    rec.stop()


def session_config(moto: MotoServer, nginx_front: NginxTLSFront, test_ca: TestCA,
                   recorder: VerifyingUpstreamRecorder) -> PresigndConfig:
    def via(front: str, name: str) -> Upstream:
        return Upstream(name=name, endpoint=nginx_front.endpoint(front), ca_file=test_ca.ca_file,
                        access_key_id=moto.access_key_id, secret_access_key=moto.secret_access_key)

    return PresigndConfig(
        upstreams=[
            via("good", "moto"),
            via("untrusted", "untrusted"),
            via("wrong_name", "wrongname"),
            Upstream(name="recorder", endpoint=recorder.endpoint, region=recorder.region,
                     access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key),
        ],
        buckets=[
            Bucket(BUCKET, "moto", mount=f"/{BUCKET}"),
            Bucket(READONLY_BUCKET, "moto", access="read-only"),
            Bucket(UNTRUSTED_BUCKET, "untrusted"),
            Bucket(WRONGNAME_BUCKET, "wrongname"),
            Bucket(RECORDER_BUCKET, "recorder"),
        ],
    )


def assert_no_secrets(logs: str, secrets: list[str], signatures: list[str]) -> None:
    for secret in secrets:
        assert secret not in logs, "a secret access key appears in presignd's logs"
    leaked = re.findall(r"(?:X-Amz-Signature|Signature)=[0-9a-fA-F]{16,}", logs)
    assert not leaked, f"signature values appear in presignd's logs: {leaked[:3]}"
    for sig in signatures:
        assert sig not in logs, f"a signature presignd sent upstream appears in its logs: {sig}"


def signatures_sent(nginx_front: NginxTLSFront, recorder: VerifyingUpstreamRecorder) -> list[str]:
    sigs = {r.signature for r in recorder.snapshot() if r.signature}
    for line in nginx_front.access_log("good"):
        sigs.update(re.findall(r"Signature=([0-9a-f]{64})", line))
    return sorted(sigs)


@pytest.fixture(scope="session")
def presignd(e2e_dir, moto, nginx_front, test_ca, recorder):
    """The daemon under test, shared by the session. Teardown: SIGTERM → exit 0, and no secret in its logs."""
    binary = require_presignd_binary()
    config = session_config(moto, nginx_front, test_ca, recorder)
    daemon = Presignd(binary, config, os.path.join(e2e_dir, "presignd"))
    try:
        daemon.start()
    except BaseException:
        daemon.kill()
        raise
    try:
        yield daemon
    finally:
        if daemon.is_running():
            daemon.stop()
        else:
            daemon.kill()
            pytest.fail(f"presignd died during the session (exit {daemon.exit_code}):\n{daemon.log_text()}")
        assert_no_secrets(daemon.log_text(), config.secrets(), signatures_sent(nginx_front, recorder))


# -- clients ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def s3(presignd):
    """boto3 with UNSIGNED requests, path-style, no retries, against presignd."""
    return unsigned_s3(presignd.endpoint)


@pytest.fixture(scope="session")
def aws_cli(presignd, e2e_dir) -> AwsCli:
    return AwsCli(os.path.join(e2e_dir, "awscli"), presignd.endpoint)


@pytest.fixture
def key_prefix(request) -> str:
    """A key prefix unique to this test, so tests share buckets without seeing each other's objects."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name).strip("-")[:60]
    return f"{name}-{uuid.uuid4().hex[:8]}/"


@pytest.fixture
def work_dir(tmp_path) -> str:
    return str(tmp_path)
