"""Retries with backoff (issue 21 §3), against a recording upstream that answers what each test scripts.

The recorder (harness/recorder.py) re-verifies every signature it receives with botocore, records when each
request arrived, and answers scripted faults (`script`: the next answers in order; `fail_all`: every answer).
"""
from __future__ import annotations

import os
import time
import urllib.request

import pytest

from harness import logfmt
from harness.clients import curl
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.recorder import VerifyingUpstreamRecorder
from ops_helpers import metric, parse_metrics

from conftest import require_presignd_binary

SLOW_DOWN = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
             b"<Message>Please reduce your request rate.</Message></Error>")


def _start(work_dir: str, name: str, upstream_extra: dict | None = None, server_extra: dict | None = None):
    recorder = VerifyingUpstreamRecorder().start()
    config = PresigndConfig(
        upstreams=[Upstream(name="rec", endpoint=recorder.endpoint, region=recorder.region,
                            access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key,
                            extra=upstream_extra or {})],
        buckets=[Bucket("b", "rec")], server_extra=server_extra or {})
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, name)).start()
    return recorder, daemon


def _metrics(daemon: Presignd) -> dict:
    with urllib.request.urlopen(f"{daemon.admin_endpoint}/metrics", timeout=10) as response:
        return parse_metrics(response.read().decode())


def _access_line(daemon: Presignd, path: str, operation: str | None = None) -> dict:
    line = daemon.wait_for_log(lambda l: "msg=Request" in l and f"http.path={path}" in l
                               and (operation is None or f"s3.operation={operation}" in l))
    return logfmt.parse(line)


@pytest.fixture
def started(work_dir):
    made = []

    def start(name: str, **kwargs):
        recorder, daemon = _start(work_dir, name, **kwargs)
        made.append((recorder, daemon))
        return recorder, daemon

    yield start
    for recorder, daemon in made:
        daemon.stop()
        recorder.stop()


def test_two_503s_then_200_is_one_200_after_three_freshly_signed_attempts(started):
    recorder, daemon = started("twice")
    # Retry-After: 1 makes each wait at least a second, so a head signed again must carry a later X-Amz-Date.
    busy = (503, {"Content-Type": "application/xml", "Retry-After": "1"}, SLOW_DOWN)
    recorder.script = [busy, busy]
    put = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "retried body",
               f"{daemon.endpoint}/b/obj")
    assert put.status == 200, put.body
    attempts = recorder.requests_for("/b/obj")
    assert len(attempts) == 3
    dates = [r.header("x-amz-date") for r in attempts]
    assert len(set(dates)) == 3, f"every attempt is signed with a fresh date: {dates}"
    assert all(not r.problems for r in attempts), [r.problems for r in attempts]
    assert all(r.body == b"retried body" for r in attempts), "the kept body goes with every attempt"
    assert recorder.objects["/b/obj"] == b"retried body"
    get = curl(f"{daemon.endpoint}/b/obj")
    assert get.status == 200 and get.body == b"retried body"
    assert _access_line(daemon, "/b/obj")["upstream.attempts"] == "3"
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="slow_down") == 2
    assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="rec",
                  outcome="succeeded_after_retry") == 1


def test_429_with_retry_after_waits_at_least_that_long(started):
    recorder, daemon = started("throttled")
    recorder.script = [(429, {"Retry-After": "1", "Content-Type": "application/xml"},
                        b"<Error><Code>TooManyRequests</Code></Error>")]
    started_at = time.monotonic()
    get = curl(f"{daemon.endpoint}/b/")
    elapsed = time.monotonic() - started_at
    assert get.status == 200
    attempts = recorder.requests_for("/b")
    assert len(attempts) == 2
    assert attempts[1].arrived_at - attempts[0].arrived_at >= 1.0
    assert elapsed >= 1.0
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="throttled") == 1


def test_a_retry_after_longer_than_retry_max_delay_goes_to_the_client(started):
    recorder, daemon = started("patience", upstream_extra={"retry_max_delay": "2s"})
    recorder.script = [(503, {"Retry-After": "30"}, SLOW_DOWN)]
    get = curl(f"{daemon.endpoint}/b/")
    assert get.status == 503 and get.header("retry-after") == "30"
    assert b"<Code>SlowDown</Code>" in get.body
    assert len(recorder.requests_for("/b")) == 1
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="rec",
                  outcome="retry_after_too_long") == 1


def test_a_streamed_body_that_already_left_is_not_retried(started):
    recorder, daemon = started("streamed")
    recorder.script = [(503, {"Content-Type": "application/xml"}, SLOW_DOWN)]
    body = os.urandom(256 * 1024)  # over retry_body_buffer (64 KiB): streamed, not kept
    put = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "@-",
               f"{daemon.endpoint}/b/big", input=body)
    assert put.status == 503
    assert b"<Code>SlowDown</Code>" in put.body, "the upstream's own answer reaches the client"
    attempts = recorder.requests_for("/b/big")
    assert len(attempts) == 1, "a body that left is sent once; the client's SDK retries it"
    assert attempts[0].body == body
    assert _access_line(daemon, "/b/big")["upstream.attempts"] == "1"
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="rec", outcome="body_sent") == 1
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="slow_down") == 0


def test_a_spooled_body_is_sent_again_from_its_file(started):
    recorder, daemon = started("spooled")
    recorder.script = [(500, {"Content-Type": "application/xml"},
                        b"<Error><Code>InternalError</Code><Message>try again</Message></Error>")]
    body = os.urandom(300 * 1024)  # chunked, no length: spooled whole, then sent with Content-Length
    put = curl("-X", "PUT", "-H", "Transfer-Encoding: chunked", "-H", "Content-Type: application/octet-stream",
               "--data-binary", "@-", f"{daemon.endpoint}/b/spooled", input=body)
    assert put.status == 200, put.body
    attempts = recorder.requests_for("/b/spooled")
    assert len(attempts) == 2
    assert all(r.body == body and not r.was_chunked and not r.problems for r in attempts)
    assert recorder.objects["/b/spooled"] == body
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="internal_error") == 1


def test_the_retry_budget_stops_retries_when_every_request_fails(started):
    recorder, daemon = started(
        "budget", upstream_extra={"retry_base_delay": "1ms", "retry_max_delay": "10ms"},
        server_extra={"retry_budget": 2})
    recorder.fail_all = (503, {"Content-Type": "application/xml"}, SLOW_DOWN)
    statuses = [curl(f"{daemon.endpoint}/b/k{i}").status for i in range(5)]
    assert statuses == [503] * 5
    per_request = [len(recorder.requests_for(f"/b/k{i}")) for i in range(5)]
    # Two retries' worth: the first request uses them both (3 attempts), every later one gets a single attempt.
    assert per_request == [3, 1, 1, 1, 1]
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="slow_down") == 2
    assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="rec", outcome="budget") == 4
    assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="rec", outcome="max_attempts") == 1
    # Successes earn retries back: five first-attempt successes pay for one retry.
    recorder.fail_all = None
    for i in range(5):
        assert curl(f"{daemon.endpoint}/b/").status == 200
    recorder.script = [(503, {}, SLOW_DOWN)]
    assert curl(f"{daemon.endpoint}/b/again").status == 404
    assert len(recorder.requests_for("/b/again")) == 2


def test_a_refused_connection_is_retried_and_then_reported(work_dir):
    # A port nobody listens on: every attempt fails to connect.
    import socket
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    config = PresigndConfig(
        upstreams=[Upstream(name="gone", endpoint=f"http://127.0.0.1:{port}", access_key_id="AKIAGONE",
                            secret_access_key="gone-secret", extra={"retry_base_delay": "1ms"})],
        buckets=[Bucket("b", "gone")])
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "gone")).start()
    try:
        get = curl(f"{daemon.endpoint}/b/x")
        assert get.status == 502
        assert _access_line(daemon, "/b/x")["upstream.attempts"] == "3"
        samples = _metrics(daemon)
        assert metric(samples, "presignd_upstream_retries_total", upstream="gone", reason="connect") == 2
        assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="gone",
                      outcome="max_attempts") == 1
    finally:
        daemon.stop()


# S3 may answer CompleteMultipartUpload, CopyObject and UploadPartCopy `200 OK` and fail in the body: the head goes
# out at once, whitespace keeps the connection alive while S3 works, then comes the result or an <Error>.
XML_DECLARATION = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
INTERNAL_ERROR = (b"<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again."
                  b"</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>")


def _padded_200(error: bytes, padding_seconds: float) -> tuple[int, dict, list]:
    """A 200 whose body is the XML declaration, whitespace every 0.25 s for `padding_seconds`, then `error`."""
    pieces = [(0.0, XML_DECLARATION)] + [(0.25, b" ")] * int(padding_seconds / 0.25) + [(0.0, error)]
    return 200, {"Content-Type": "application/xml"}, pieces


def _start_multipart(daemon: Presignd, key: str) -> tuple[str, bytes]:
    """Creates an upload of one part through presignd; returns its id and the CompleteMultipartUpload body."""
    created = curl("-X", "POST", f"{daemon.endpoint}/b/{key}?uploads")
    assert created.status == 200, created.body
    upload_id = created.body.split(b"<UploadId>")[1].split(b"</UploadId>")[0].decode()
    part = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "part one",
                f"{daemon.endpoint}/b/{key}?partNumber=1&uploadId={upload_id}")
    assert part.status == 200, part.body
    etag = part.header("etag")
    complete = (f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag></Part>"
                "</CompleteMultipartUpload>").encode()
    return upload_id, complete


def _put_source(daemon: Presignd) -> None:
    """Stores /b/src (b"source bytes") through presignd: the source of the CopyObject tests."""
    put = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "source bytes",
               f"{daemon.endpoint}/b/src")
    assert put.status == 200, put.body


def _complete(daemon: Presignd, key: str, upload_id: str, body: bytes):
    return curl("-X", "POST", "-H", "Content-Type: application/xml", "--data-binary", "@-",
                f"{daemon.endpoint}/b/{key}?uploadId={upload_id}", input=body)


def test_complete_multipart_upload_answered_200_with_internal_error_is_retried(started):
    recorder, daemon = started("complete200")
    upload_id, body = _start_multipart(daemon, "assembled")
    # The error comes after ~1.25 s of padding, so the retry is signed in a later second than the first attempt.
    recorder.script = [_padded_200(INTERNAL_ERROR, padding_seconds=1.25)]
    done = _complete(daemon, "assembled", upload_id, body)
    assert done.status == 200, done.body
    assert done.body.startswith(XML_DECLARATION + b"<CompleteMultipartUploadResult>"), \
        "the client gets the second attempt's answer alone: no padding, no <Error> of the first"
    assert b"<Error>" not in done.body
    attempts = [r for r in recorder.requests_for("/b/assembled") if r.method == "POST" and "uploadId" in r.query]
    assert len(attempts) == 2
    assert attempts[0].header("x-amz-date") != attempts[1].header("x-amz-date"), "every attempt is signed afresh"
    assert all(r.body == body and not r.problems for r in attempts), [r.problems for r in attempts]
    assert recorder.objects["/b/assembled"] == b"part one"
    line = _access_line(daemon, "/b/assembled", operation="CompleteMultipartUpload")
    assert line["upstream.attempts"] == "2" and line["http.status"] == "200" and line["error.code"] == "-"
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="internal_error") == 1
    assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="rec",
                  outcome="succeeded_after_retry") == 1


def test_copy_object_answered_200_with_internal_error_is_retried(started):
    recorder, daemon = started("copy200")
    _put_source(daemon)
    recorder.script = [(200, {"Content-Type": "application/xml"}, XML_DECLARATION + INTERNAL_ERROR)]
    copied = curl("-X", "PUT", "-H", "x-amz-copy-source: /b/src", f"{daemon.endpoint}/b/dst")
    assert copied.status == 200, copied.body
    assert b"<CopyObjectResult>" in copied.body and b"<Error>" not in copied.body
    assert len(recorder.requests_for("/b/dst")) == 2
    assert recorder.objects["/b/dst"] == b"source bytes"
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="internal_error") == 1


def test_a_final_error_inside_a_200_reaches_the_client_unchanged(started):
    recorder, daemon = started("final200")
    upload_id, body = _start_multipart(daemon, "refused")
    invalid_part = (b"<Error><Code>InvalidPart</Code><Message>One or more of the specified parts could not be found."
                    b"</Message></Error>")
    answer = _padded_200(invalid_part, padding_seconds=0.5)
    recorder.script = [answer]
    done = _complete(daemon, "refused", upload_id, body)
    assert done.status == 200
    assert done.body == b"".join(piece for _, piece in answer[2]), "padding and all, as the upstream sent it"
    attempts = [r for r in recorder.requests_for("/b/refused") if r.method == "POST" and "uploadId" in r.query]
    assert len(attempts) == 1
    assert _access_line(daemon, "/b/refused", operation="CompleteMultipartUpload")["error.code"] == "InvalidPart"
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="internal_error") == 0


def test_a_200_with_internal_error_goes_to_the_client_once_the_budget_is_spent(started):
    recorder, daemon = started(
        "budget200", upstream_extra={"retry_base_delay": "1ms", "retry_max_delay": "10ms"},
        server_extra={"retry_budget": 1})
    _put_source(daemon)
    failing = XML_DECLARATION + INTERNAL_ERROR
    recorder.fail_all = (200, {"Content-Type": "application/xml"}, failing)
    copied = curl("-X", "PUT", "-H", "x-amz-copy-source: /b/src", f"{daemon.endpoint}/b/dst")
    assert copied.status == 200
    assert copied.body == failing, "the upstream's answer, unchanged: the client's SDK reads the <Error> itself"
    # One retry's worth: the second attempt's answer finds the budget empty.
    assert len(recorder.requests_for("/b/dst")) == 2
    line = _access_line(daemon, "/b/dst", operation="CopyObject")
    assert line["upstream.attempts"] == "2" and line["error.code"] == "InternalError"
    samples = _metrics(daemon)
    assert metric(samples, "presignd_upstream_retries_total", upstream="rec", reason="internal_error") == 1
    assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="rec", outcome="budget") == 1
    assert metric(samples, "presignd_upstream_retry_outcomes_total", upstream="rec",
                  outcome="failed_after_retry") == 1


def test_a_200_padded_past_the_hold_limit_reaches_the_client_before_its_end(started):
    import http.client
    from urllib.parse import urlparse

    recorder, daemon = started("longcopy")
    _put_source(daemon)
    # A copy that works for 15 s: longer than presignd holds an answer (10 s), so the client must hear from it
    # before the end (its SDK would time a silent read out), and the late <Error> is the client's to read.
    answer = _padded_200(INTERNAL_ERROR, padding_seconds=15)
    recorder.script = [answer]
    target = urlparse(daemon.endpoint)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
    connection.request("PUT", "/b/dst", headers={"x-amz-copy-source": "/b/src", "Content-Length": "0"})
    response = connection.getresponse()
    head_at = time.monotonic()
    body = response.read()
    connection.close()
    assert response.status == 200
    assert body == b"".join(piece for _, piece in answer[2])
    error_sent_at = next(at for at, piece in recorder.sent_pieces if piece == INTERNAL_ERROR)
    assert head_at < error_sent_at, "the head and padding went out while the upstream was still working"
    assert len(recorder.requests_for("/b/dst")) == 1, "an answer passed on is never retried"
