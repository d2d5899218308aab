"""Fresh cache hits answered by presignd itself (issue 23, step 2 so far): whole objects, ranges across slices,
HEAD and local 304s, sent from the slice files; after the policy (a refused key is never served from the cache);
anything the cache cannot answer whole and fresh goes upstream. The upstream here is a closed port: every byte
of a 200/206/304 came from the cache, and a request that went upstream fails."""
import http.client
import os
import urllib.request

import pytest

from cache_support import request, seed, seeded_bytes
from conftest import require_presignd_binary as presignd_binary
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from ops_helpers import metric, parse_metrics

SLICE = 64 * 1024
SIZE = 3 * SLICE + 123


EXPECTED = seeded_bytes(SIZE)


@pytest.fixture
def daemon(work_dir):
    cache = {"directory": os.path.join(work_dir, "cache"), "max_size": "64MiB", "slice_size": "64KiB",
             "revalidate_after": "1h", "x_cache_header": True}
    config = PresigndConfig(
        upstreams=[Upstream("gone", "http://127.0.0.1:9", "AKID", "SECRET", extra={"max_attempts": 1})],
        buckets=[Bucket("photos", "gone", access="read-only",
                        extra={"allowed_prefixes": ["open/"], "cache": cache})])
    seed(config, work_dir, "photos", f"open/object={SIZE}", f"closed/object={SIZE}")
    running = Presignd(presignd_binary(), config, os.path.join(work_dir, "daemon")).start()
    try:
        yield running
    finally:
        running.stop()


def test_hits_are_answered_from_the_slices(daemon):
    status, headers, body = request(daemon, "GET", "/photos/open/object")
    assert status == 200, (headers, body[:300])
    assert body == EXPECTED
    assert headers["Content-Length"] == str(SIZE) and headers["ETag"] == '"seed"'
    assert headers["Content-Type"] == "application/x-seed" and headers["X-Cache"] == "HIT"
    # A range across a slice boundary, and one inside the last slice.
    status, headers, body = request(daemon, "GET", "/photos/open/object", {"Range": f"bytes={SLICE - 5}-{SLICE + 9}"})
    assert status == 206 and body == EXPECTED[SLICE - 5:SLICE + 10]
    assert headers["Content-Range"] == f"bytes {SLICE - 5}-{SLICE + 9}/{SIZE}"
    status, headers, body = request(daemon, "GET", "/photos/open/object", {"Range": "bytes=-100"})
    assert status == 206 and body == EXPECTED[-100:]
    status, headers, body = request(daemon, "HEAD", "/photos/open/object")
    assert status == 200 and body == b"" and headers["Content-Length"] == str(SIZE)
    status, headers, body = request(daemon, "GET", "/photos/open/object", {"If-None-Match": '"seed"'})
    assert status == 304 and body == b""
    with urllib.request.urlopen(f"{daemon.admin_endpoint}/metrics", timeout=10) as answer:
        samples = parse_metrics(answer.read().decode())
    directory = os.path.join(os.path.dirname(daemon.dir), "cache")
    assert metric(samples, "presignd_cache_hits_total", directory=directory) == 5
    assert metric(samples, "presignd_cache_served_bytes_total", directory=directory) == SIZE + 15 + 100


def test_many_hits_on_one_connection_keep_it_alive(daemon):
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    try:
        for start in range(0, SIZE, 40_000):
            end = min(start + 50_000, SIZE) - 1
            connection.request("GET", "/photos/open/object", headers={"Range": f"bytes={start}-{end}"})
            answer = connection.getresponse()
            assert answer.status == 206 and answer.read() == EXPECTED[start:end + 1]
    finally:
        connection.close()


def test_the_policy_runs_before_the_cache_and_what_it_cannot_answer_goes_upstream(daemon):
    status, _, body = request(daemon, "GET", "/photos/closed/object")
    assert status == 403, body  # cached, but outside allowed_prefixes: never served
    status, _, _ = request(daemon, "GET", "/photos/open/missing")
    assert status >= 500  # a miss went to the (closed) upstream
    status, _, _ = request(daemon, "GET", "/photos/open/object", {"Cache-Control": "no-cache"})
    assert status >= 500  # a forced revalidation is not answered from the cache
    status, _, _ = request(daemon, "GET", "/photos/open/object?versionId=abc")
    assert status >= 500
    status, _, _ = request(daemon, "PUT", "/photos/open/object")
    assert status == 403  # read-only: refused before anything else
