"""Clock skew corrected (issue 21 §4): an upstream whose clock runs 20 minutes ahead of this machine's.

The recorder checks every signature's date against its own (skewed) clock, refuses one more than 15 minutes off
with S3's `403 RequestTimeTooSkewed`, and sends its own time in `Date`. presignd must take the offset from that
`Date`, retry once with the corrected time, sign every later request (and presigned link) at the upstream's time,
show the offset on /metrics and warn once in its log.
"""
from __future__ import annotations

import calendar
import json
import os
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from harness import logfmt
from harness.clients import curl
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.recorder import VerifyingUpstreamRecorder
from ops_helpers import metric, parse_metrics

from conftest import require_presignd_binary

AHEAD = 20 * 60


@pytest.fixture
def skewed(work_dir):
    recorder = VerifyingUpstreamRecorder().start()
    recorder.clock_offset = AHEAD
    config = PresigndConfig(
        upstreams=[Upstream(name="ahead", endpoint=recorder.endpoint, region=recorder.region,
                            access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key)],
        buckets=[Bucket("b", "ahead"), Bucket("links", "ahead", extra={"redirect": True})],
        # A fixed admin port: `presignd presign --config` asks the daemon there for the offset it measured.
        admin_listen=f"127.0.0.1:{_free_port()}", server_extra={"presign_api": "open"})
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "skew")).start()
    try:
        yield recorder, daemon
    finally:
        daemon.stop()
        recorder.stop()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _epoch(amz_date: str) -> int:
    return calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))


def _offset_metric(daemon: Presignd) -> float:
    with urllib.request.urlopen(f"{daemon.admin_endpoint}/metrics", timeout=10) as response:
        samples = parse_metrics(response.read().decode())
    return metric(samples, "presignd_upstream_clock_offset_seconds", upstream="ahead")


def test_requests_succeed_after_at_most_one_failed_attempt(skewed):
    recorder, daemon = skewed
    assert _offset_metric(daemon) == 0
    put = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "on time",
               f"{daemon.endpoint}/b/first")
    assert put.status == 200, put.body
    first = recorder.requests_for("/b/first")
    assert len(first) == 2, "one attempt refused for its date, then one on the upstream's time"
    assert any("15 minutes" in problem for problem in first[0].problems)
    assert not first[1].problems, first[1].problems
    assert _epoch(first[1].header("x-amz-date")) - _epoch(first[0].header("x-amz-date")) >= AHEAD - 5
    # Every later request is signed at the upstream's time at once.
    for index in range(3):
        get = curl(f"{daemon.endpoint}/b/first")
        assert get.status == 200 and get.body == b"on time"
    later = recorder.requests_for("/b/first")[2:]
    assert len(later) == 3 and all(not r.problems for r in later)
    assert abs(_offset_metric(daemon) - AHEAD) <= 2
    fields = logfmt.parse(daemon.wait_for_log(lambda l: "Upstream clock differs" in l))
    assert fields["level"] == "warning" and fields["upstream"] == "ahead"
    assert abs(int(fields["clock.offset.s"]) - AHEAD) <= 2
    assert sum("Upstream clock differs" in line for line in daemon.logs) == 1, "warned once"
    access = logfmt.parse(daemon.wait_for_log(lambda l: "msg=Request" in l and "http.method=PUT" in l))
    assert access["upstream.attempts"] == "2"


def test_presigned_links_use_the_upstreams_time(skewed):
    recorder, daemon = skewed
    assert curl(f"{daemon.endpoint}/b/").status == 200  # learns the offset (after one refused attempt)
    request = urllib.request.Request(
        f"{daemon.admin_endpoint}/v1/presign", method="POST",
        data=json.dumps({"bucket": "b", "key": "k", "method": "GET", "expires": 600}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        link = json.loads(response.read())
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(link["url"]).query)
    assert abs(_epoch(query["X-Amz-Date"][0]) - (time.time() + AHEAD)) <= 5
    # Redirect mode signs its links the same way.
    redirect = curl(f"{daemon.endpoint}/links/movie.mp4")
    assert redirect.status == 307
    location = urllib.parse.parse_qs(urllib.parse.urlsplit(redirect.header("location")).query)
    assert abs(_epoch(location["X-Amz-Date"][0]) - (time.time() + AHEAD)) <= 5

    # So does `presignd presign --config`, asking the running daemon for the offset it measured.
    cli = subprocess.run([require_presignd_binary(), "presign", "s3://b/k", "--config", daemon.config_path, "--json"],
                         capture_output=True, text=True, timeout=30)
    assert cli.returncode == 0, cli.stderr
    cli_query = urllib.parse.parse_qs(urllib.parse.urlsplit(json.loads(cli.stdout)["url"]).query)
    assert abs(_epoch(cli_query["X-Amz-Date"][0]) - (time.time() + AHEAD)) <= 5
