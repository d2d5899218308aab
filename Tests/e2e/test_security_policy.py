"""Per-bucket policy (issue 5): read-only, allowed_prefixes (keys and list prefixes), allowed_methods and
max_upload_size answer 403 AccessDenied / 413 EntityTooLarge as S3 XML and never reach the upstream; and an
end-to-end run's logs and error bodies contain neither the secret key nor any signature sent upstream.
"""

from __future__ import annotations

import re

import pytest

from harness.net import DIRECT
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.rawhttp import RawConnection
from harness.s3xml import parse_error

from conftest import require_presignd_binary

ERROR_BODIES: list[bytes] = []


@pytest.fixture(scope="module")
def pol_daemon(recorder, tmp_path_factory):
    config = PresigndConfig(
        upstreams=[Upstream(name="rec", endpoint=recorder.endpoint, region=recorder.region,
                            access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key)],
        buckets=[
            Bucket("pol-ro", "rec", access="read-only"),
            Bucket("pol-prefix", "rec", extra={"allowed_prefixes": ["public/"]}),
            Bucket("pol-methods", "rec", extra={"allowed_methods": ["GET", "HEAD", "PUT"]}),
            Bucket("pol-max", "rec", extra={"max_upload_size": "1KiB"}),
        ],
    )
    daemon = Presignd(require_presignd_binary(), config, str(tmp_path_factory.mktemp("policy"))).start()
    yield daemon
    alive = daemon.is_running()
    daemon.stop() if alive else daemon.kill()
    assert alive, f"presignd died during the policy tests:\n{daemon.log_text()}"


def _send(daemon, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b"",
          raw: bytes | None = None):
    host, port = daemon.listen_addresses[0].rsplit(":", 1)
    with RawConnection(host, int(port)) as conn:
        if raw is not None:
            conn.send(raw)
            response = conn.read_response(method)
        else:
            response = conn.request(method, target, headers=headers, body=body)
    if response.status >= 400:
        ERROR_BODIES.append(response.raw_head + response.body)
    return response


def _arrived(recorder, method: str, path: str) -> int:
    return sum(1 for r in recorder.snapshot() if r.method == method and r.path == path)


DENIED = [
    ("read-only PUT", "PUT", "/pol-ro/k", 403),
    ("read-only DELETE", "DELETE", "/pol-ro/k", 403),
    ("read-only POST uploads", "POST", "/pol-ro/k?uploads", 403),
    ("key outside prefixes", "GET", "/pol-prefix/secret/k", 403),
    ("key prefix lookalike", "GET", "/pol-prefix/publicity/k", 403),
    ("encoded key outside prefixes", "GET", "/pol-prefix/%73ecret/k", 403),
    ("put outside prefixes", "PUT", "/pol-prefix/secret/k", 403),
    ("list outside prefixes", "GET", "/pol-prefix?list-type=2&prefix=secret/", 403),
    ("list without prefix", "GET", "/pol-prefix?list-type=2", 403),
    # Issue 19: a DeleteObjects body is read; one key outside the prefixes denies the whole batch.
    ("bucket-level delete with a key outside", "POST", "/pol-prefix?delete", 403),
    ("method not allowed", "DELETE", "/pol-methods/k", 403),
    ("post not allowed", "POST", "/pol-methods/k?uploads", 403),
]


@pytest.mark.parametrize("name,method,target,status", DENIED, ids=[d[0] for d in DENIED])
def test_policy_denial_is_s3_xml_and_never_forwarded(pol_daemon, recorder, name, method, target, status):
    before = len(recorder.snapshot())
    body = b"x" if method in ("PUT", "POST") else b""
    if target.endswith("?delete"):
        body = b"<Delete><Object><Key>public/a</Key></Object><Object><Key>secret/b</Key></Object></Delete>"
    response = _send(pol_daemon, method, target, body=body)
    assert response.status == status, (name, response.status, response.body[:300])
    assert parse_error(response.body).code == "AccessDenied"
    assert len(recorder.snapshot()) == before, f"{name}: a denied request reached the upstream"


ALLOWED = [
    ("read-only GET", "GET", "/pol-ro/k"),
    ("key inside prefixes", "GET", "/pol-prefix/public/k"),
    ("put inside prefixes", "PUT", "/pol-prefix/public/k"),
    ("list inside prefixes", "GET", "/pol-prefix?list-type=2&prefix=public/a"),
    ("allowed PUT", "PUT", "/pol-methods/k"),
]


@pytest.mark.parametrize("name,method,target", ALLOWED, ids=[a[0] for a in ALLOWED])
def test_policy_allows_what_it_should(pol_daemon, recorder, name, method, target):
    response = _send(pol_daemon, method, target, body=b"x" if method == "PUT" else b"")
    assert response.status in (200, 404), (name, response.status, response.body[:300])
    assert _arrived(recorder, method, target.split("?")[0]) >= 1


def test_upload_over_max_upload_size_is_413(pol_daemon, recorder):
    response = _send(pol_daemon, "PUT", "/pol-max/big", body=b"b" * 2048)
    assert response.status == 413 and parse_error(response.body).code == "EntityTooLarge"
    assert _arrived(recorder, "PUT", "/pol-max/big") == 0
    assert _send(pol_daemon, "PUT", "/pol-max/small", body=b"s" * 1024).status == 200


def test_chunked_upload_over_max_upload_size_is_refused(pol_daemon, recorder):
    body = b"c" * 4096
    raw = (b"PUT /pol-max/chunked HTTP/1.1\r\nHost: presignd\r\nTransfer-Encoding: chunked\r\n\r\n"
           + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
    response = _send(pol_daemon, "PUT", "/pol-max/chunked", raw=raw)
    stored = recorder.objects.get("/pol-max/chunked")
    assert response.status == 413 and (stored is None or len(stored) <= 1024), (response.status, len(stored or b""))


@pytest.mark.parametrize("source", ["pol-prefix/secret/k", "not-configured-bucket/any-key"])
def test_copy_source_outside_policy_is_refused(pol_daemon, recorder, source):
    response = _send(pol_daemon, "PUT", "/pol-prefix/public/copy", headers={"x-amz-copy-source": source})
    forwarded = [r for r in recorder.snapshot() if r.header("x-amz-copy-source") == source]
    assert response.status == 403 and not forwarded, (response.status, len(forwarded))


def test_list_with_two_prefixes_is_refused(pol_daemon, recorder):
    target = "/pol-prefix?list-type=2&prefix=public/&prefix=secret/"
    before = len(recorder.snapshot())
    response = _send(pol_daemon, "GET", target)
    assert response.status == 403 and len(recorder.snapshot()) == before, response.status


def test_denials_are_counted_in_metrics(pol_daemon):
    _send(pol_daemon, "PUT", "/pol-ro/counted", body=b"x")
    with DIRECT.open(pol_daemon.admin_endpoint + "/metrics", timeout=5) as resp:
        text = resp.read().decode()
    assert re.search(r'presignd_denials_total\{code="AccessDenied"\} [1-9]', text), "no denial in /metrics:\n" + text[:2000]


@pytest.mark.last
def test_logs_and_error_bodies_hold_no_secret_or_signature(pol_daemon, recorder):
    # Successful and failed requests both ran above; add a few that echo client input into errors.
    _send(pol_daemon, "GET", "/pol-prefix/secret/k?X-Amz-Signature=" + "ab" * 32 + "&X-Amz-Credential=AKID")
    _send(pol_daemon, "GET", "/pol-ro/k", headers={"Authorization": "AWS4-HMAC-SHA256 Credential=x, "
                                                                      "SignedHeaders=host, Signature=" + "cd" * 32})
    _send(pol_daemon, "GET", "/no-such-bucket/k")
    signatures = {r.signature for r in recorder.snapshot() if r.signature}
    assert signatures, "the module made signed requests"
    texts = {"logs": pol_daemon.log_text(), "error bodies": b"\n".join(ERROR_BODIES).decode("latin-1")}
    for where, text in texts.items():
        assert recorder.secret_access_key not in text, f"the secret access key appears in {where}"
        for signature in signatures:
            assert signature not in text, f"a signature sent upstream appears in {where}"
        assert not re.search(r"[0-9a-f]{64}", text), f"a 64-hex value (a signature?) appears in {where}"
