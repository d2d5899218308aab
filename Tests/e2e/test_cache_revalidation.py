"""Revalidation (issue 23 §3) with the default revalidate_after = "0s": every use of a cached object asks the
upstream with If-None-Match; a 304 is answered from the slices (X-Cache: REVALIDATED), a new version passes
through and drops the old one (never mixed), a 404 drops it, an error passes through and serves nothing stale.
The upstream records what it was asked."""
import os

import pytest

from cache_support import ObjectUpstream, request, seed, seeded_bytes
from conftest import BUCKET, require_presignd_binary as presignd_binary
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream

SLICE = 64 * 1024
SIZE = 2 * SLICE + 500
SEEDED = seeded_bytes(SIZE)
PATH = "/photos/open/object"
OTHER = "/photos/open/other"


@pytest.fixture
def setup(work_dir):
    upstream = ObjectUpstream({PATH: ('"seed"', SEEDED), OTHER: ('"seed"', SEEDED)})
    cache = {"directory": os.path.join(work_dir, "cache"), "max_size": "64MiB", "slice_size": "64KiB",
             "x_cache_header": True}
    config = PresigndConfig(
        upstreams=[Upstream("s3", upstream.endpoint, "AKID", "SECRET", extra={"max_attempts": 1})],
        buckets=[Bucket("photos", "s3", access="read-only", extra={"cache": cache})])
    seed(config, work_dir, "photos", f"open/object={SIZE}", f"open/other={SIZE}")
    daemon = Presignd(presignd_binary(), config, os.path.join(work_dir, "daemon")).start()
    try:
        yield daemon, upstream
    finally:
        daemon.stop()
        upstream.stop()


def test_an_unchanged_object_costs_a_304_and_is_sent_from_the_slices(setup):
    daemon, upstream = setup
    status, headers, body = request(daemon, "GET", PATH)
    assert (status, body) == (200, SEEDED), headers
    assert headers["X-Cache"] == "REVALIDATED" and headers["ETag"] == '"seed"'
    status, headers, body = request(daemon, "GET", PATH, {"Range": f"bytes={SLICE - 3}-{SLICE + 3}"})
    assert (status, body) == (206, SEEDED[SLICE - 3:SLICE + 4]) and headers["X-Cache"] == "REVALIDATED"
    status, headers, body = request(daemon, "HEAD", PATH)
    assert (status, body, headers["Content-Length"]) == (200, b"", str(SIZE))
    # Every use asked upstream, with the stored ETag; the upstream never sent the body.
    assert upstream.taken() == [("GET", PATH, '"seed"', None),
                                ("GET", PATH, '"seed"', f"bytes={SLICE - 3}-{SLICE + 3}"),
                                ("HEAD", PATH, '"seed"', None)]


def test_a_changed_object_passes_through_and_the_old_slices_are_never_served_again(setup):
    daemon, upstream = setup
    upstream.objects[PATH] = ('"v2"', b"the second version")
    status, headers, body = request(daemon, "GET", PATH)
    assert (status, body) == (200, b"the second version") and headers.get("X-Cache") is None
    # The entry is gone: the next read is a plain miss (no If-None-Match), and the new bytes again.
    status, _, body = request(daemon, "GET", PATH)
    assert (status, body) == (200, b"the second version")
    assert upstream.taken() == [("GET", PATH, '"seed"', None), ("GET", PATH, None, None)]


def test_a_deleted_object_is_dropped_and_an_upstream_error_serves_nothing_stale(setup):
    daemon, upstream = setup
    saved = upstream.objects.pop(PATH)
    status, _, _ = request(daemon, "GET", PATH)
    assert status == 404
    upstream.objects[PATH] = saved
    status, _, body = request(daemon, "GET", PATH)
    assert (status, body) == (200, SEEDED)
    # Dropped at the 404: the read after it was a miss, not a revalidation.
    assert upstream.taken() == [("GET", PATH, '"seed"', None), ("GET", PATH, None, None)]
    upstream.failing = 503
    status, headers, body = request(daemon, "GET", OTHER)
    assert status == 503 and body != SEEDED and headers.get("X-Cache") is None
    upstream.failing = None
    # Kept: the error said nothing about the object; the next use revalidates it again.
    status, headers, body = request(daemon, "GET", OTHER)
    assert (status, body, headers["X-Cache"]) == (200, SEEDED, "REVALIDATED")
    assert upstream.taken() == [("GET", OTHER, '"seed"', None), ("GET", OTHER, '"seed"', None)]


def test_revalidations_are_signed_and_answered_by_the_s3_test_server(moto, moto_s3, work_dir):
    """The added If-None-Match is signed with the rest: the signature-checking S3 test server answers it 304."""
    data = b"revalidated through a signature-checking server" * 100
    etag = moto_s3.put_object(Bucket=BUCKET, Key="cache-reval/object", Body=data)["ETag"]
    cache = {"directory": os.path.join(work_dir, "cache"), "max_size": "64MiB", "x_cache_header": True}
    config = PresigndConfig(
        upstreams=[Upstream("moto", moto.endpoint, moto.access_key_id, moto.secret_access_key)],
        buckets=[Bucket(BUCKET, "moto", access="read-only", extra={"cache": cache})], admin_listen="")
    seed(config, work_dir, BUCKET, f"cache-reval/object={len(data)}@{etag}")
    daemon = Presignd(presignd_binary(), config, os.path.join(work_dir, "daemon")).start()
    try:
        status, headers, body = request(daemon, "GET", f"/{BUCKET}/cache-reval/object")
        # The bytes are the probe's (seeded under the server's ETag): they came from the slices after a 304.
        assert (status, headers["X-Cache"], body) == (200, "REVALIDATED", seeded_bytes(len(data)))
        moto_s3.put_object(Bucket=BUCKET, Key="cache-reval/object", Body=b"changed")
        status, headers, body = request(daemon, "GET", f"/{BUCKET}/cache-reval/object")
        assert (status, body, headers.get("X-Cache")) == (200, b"changed", None)
    finally:
        daemon.stop()
