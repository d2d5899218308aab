"""The read cache with a large object (issue 23, must show): a 1 GiB object read twice through presignd from the
signature-verifying upstream (every request it gets is re-verified as S3 would); the second read is answered
from the slices with no upstream request and zero upstream bytes (the recorder's log and presignd's
presignd_cache_fetched_bytes_total), byte-exact (SHA-256 of what the client received). It moves 3 GiB over
loopback, so it runs with PRESIGND_LONG_TESTS=1 (as the 1 GiB transfers of test_clients_signed_chunks do)."""
import hashlib
import http.client
import os
import time
import urllib.request

import pytest

from conftest import require_presignd_binary
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.recorder import VerifyingUpstreamRecorder
from ops_helpers import metric, parse_metrics

pytestmark = pytest.mark.skipif(not os.environ.get("PRESIGND_LONG_TESTS"),
                                reason="moves 3 GiB: set PRESIGND_LONG_TESTS=1")

SIZE = 1 << 30


def figures(daemon, directory: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{daemon.admin_endpoint}/metrics", timeout=10) as answer:
        samples = parse_metrics(answer.read().decode())
    return {name: metric(samples, "presignd_cache_" + name, directory=directory)
            for name in ("hits_total", "misses_total", "size_bytes", "fetched_bytes_total", "served_bytes_total",
                         "write_failures_total")}


def read(daemon, path: str) -> tuple[int, str | None, int, str]:
    """GET through presignd: status, X-Cache, bytes received, SHA-256 of them (read in 1 MiB pieces)."""
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        digest, received = hashlib.sha256(), 0
        while (piece := answer.read(1 << 20)):
            digest.update(piece)
            received += len(piece)
        return answer.status, answer.getheader("X-Cache"), received, digest.hexdigest()
    finally:
        connection.close()


def test_a_1gib_object_read_twice_costs_the_upstream_nothing_the_second_time(work_dir):
    data = hashlib.shake_256(b"presignd cache").digest(SIZE)  # 1 GiB, not compressible, reproducible
    expected = hashlib.sha256(data).hexdigest()
    recorder = VerifyingUpstreamRecorder().start()
    recorder.objects["/b/big"] = data
    directory = os.path.join(work_dir, "cache")
    config = PresigndConfig(
        upstreams=[Upstream(name="rec", endpoint=recorder.endpoint, region=recorder.region,
                            access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key)],
        buckets=[Bucket("b", "rec", extra={"cache": {"directory": directory, "max_size": "2GiB",
                                                     "revalidate_after": "1h", "x_cache_header": True}})])
    daemon = Presignd(require_presignd_binary(), config, os.path.join(work_dir, "daemon")).start()
    try:
        started = time.monotonic()
        assert read(daemon, "/b/big") == (200, "MISS", SIZE, expected)
        first = time.monotonic() - started
        end = time.monotonic() + 120
        while figures(daemon, directory)["size_bytes"] < SIZE and time.monotonic() < end:
            time.sleep(0.1)  # bounded: the last slices are synced on the store's writer thread
        filled = figures(daemon, directory)
        assert filled["size_bytes"] == SIZE and filled["write_failures_total"] == 0, filled
        gets = [r for r in recorder.snapshot() if r.method == "GET"]
        assert len(gets) == 1 and not gets[0].problems, [r.problems for r in gets]
        started = time.monotonic()
        assert read(daemon, "/b/big") == (200, "HIT", SIZE, expected)
        second = time.monotonic() - started
        after = figures(daemon, directory)
        assert len([r for r in recorder.snapshot() if r.method == "GET"]) == 1  # no upstream request
        assert after["fetched_bytes_total"] == SIZE  # the first read's bytes only: zero for the second
        assert after["served_bytes_total"] == SIZE and after["hits_total"] == 1
        print(f"1 GiB: first read (upstream, filling) {SIZE / first / 2**20:.0f} MiB/s, "
              f"second read (cache) {SIZE / second / 2**20:.0f} MiB/s")
    finally:
        daemon.stop()
        recorder.stop()
