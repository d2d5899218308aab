"""Filling the read cache on a miss (issue 23 §6): a cacheable GET goes upstream as the client sent it, its
answer is recorded and its body cut into whole slices as it streams; the next read is answered from them with no
upstream request. Only slices the body covered whole are kept; what the cache may not keep is not kept; a daemon
killed mid-fill restarts with only whole, correct slices. The upstream records what it was asked."""
import contextlib
import os
import socket
import time
import urllib.request

import pytest

from cache_support import ObjectUpstream, request
from conftest import require_presignd_binary as presignd_binary
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from ops_helpers import metric, parse_metrics, read_until_cut

SLICE = 64 * 1024
SIZE = 3 * SLICE + 777
DATA = bytes((i * 7 + (i >> 12)) & 0xFF for i in range(SIZE))
PATH = "/photos/open/object"


def cache_figures(daemon, directory: str) -> dict[str, float]:
    samples = parse_metrics(admin_text(daemon))
    names = ["hits_total", "misses_total", "size_bytes", "fetched_bytes_total", "write_failures_total",
             "revalidations_total"]
    return {name: metric(samples, "presignd_cache_" + name, directory=directory) for name in names}


def admin_text(daemon) -> str:
    with urllib.request.urlopen(f"{daemon.admin_endpoint}/metrics", timeout=10) as answer:
        return answer.read().decode()


def wait_for_size(daemon, directory: str, size: int, deadline: float = 10.0) -> dict[str, float]:
    """The slices are written off the event loop: waits (bounded) until the store holds `size` bytes."""
    end = time.monotonic() + deadline
    while True:
        figures = cache_figures(daemon, directory)
        if figures["size_bytes"] == size or time.monotonic() > end:
            return figures
        time.sleep(0.02)


def start(work_dir: str, upstream: ObjectUpstream, server_extra: dict | None = None, **cache_extra):
    directory = os.path.join(work_dir, "cache")
    cache = {"directory": directory, "max_size": "64MiB", "slice_size": "64KiB", "revalidate_after": "1h",
             "x_cache_header": True, **cache_extra}
    config = PresigndConfig(
        upstreams=[Upstream("s3", upstream.endpoint, "AKID", "SECRET", extra={"max_attempts": 1})],
        buckets=[Bucket("photos", "s3", access="read-only", extra={"cache": cache})], server_extra=server_extra or {})
    return Presignd(presignd_binary(), config, os.path.join(work_dir, "daemon")).start(), directory


@contextlib.contextmanager
def running(work_dir: str, objects: dict, **cache_extra):
    """presignd with a cache in front of an ObjectUpstream holding `objects`: (daemon, upstream, directory)."""
    upstream = ObjectUpstream(objects)
    daemon, directory = start(work_dir, upstream, **cache_extra)
    try:
        yield daemon, upstream, directory
    finally:
        daemon.stop()
        upstream.stop()


@pytest.fixture
def setup(work_dir):
    with running(work_dir, {PATH: ('"v1"', DATA)}) as started:
        yield started


def test_a_miss_fills_every_slice_and_the_next_read_costs_no_upstream_request(setup):
    daemon, upstream, directory = setup
    status, headers, body = request(daemon, "GET", PATH)
    assert (status, body) == (200, DATA) and headers["X-Cache"] == "MISS"
    figures = wait_for_size(daemon, directory, SIZE)
    assert figures["size_bytes"] == SIZE and figures["fetched_bytes_total"] == SIZE, figures
    assert figures["misses_total"] == 1 and figures["write_failures_total"] == 0
    assert upstream.taken() == [("GET", PATH, None, None)]
    for headers_sent, expected_status, expected in [
        ({}, 200, DATA),
        ({"Range": f"bytes={SLICE - 9}-{2 * SLICE + 9}"}, 206, DATA[SLICE - 9:2 * SLICE + 10]),
        ({"Range": "bytes=-1000"}, 206, DATA[-1000:]),
    ]:
        status, headers, body = request(daemon, "GET", PATH, headers_sent)
        assert (status, headers["X-Cache"]) == (expected_status, "HIT") and body == expected
        assert headers["ETag"] == '"v1"' and headers["Content-Type"] == "application/octet-stream"
        assert headers["Last-Modified"] == "Tue, 01 Dec 2026 10:00:00 GMT"
    assert upstream.taken() == []
    assert cache_figures(daemon, directory)["hits_total"] == 3


def test_a_range_miss_fetches_whole_slices_and_answers_exactly_the_range(setup):
    daemon, upstream, directory = setup
    # Cold (size unknown): both ends widened to slice boundaries (the upstream clamps the end at the object's).
    status, headers, body = request(daemon, "GET", PATH, {"Range": f"bytes={SLICE + 1}-{3 * SLICE}"})
    assert (status, headers["X-Cache"], body) == (206, "MISS", DATA[SLICE + 1:3 * SLICE + 1])
    assert headers["Content-Range"] == f"bytes {SLICE + 1}-{3 * SLICE}/{SIZE}"
    assert headers["Content-Length"] == str(2 * SLICE)
    assert upstream.taken() == [("GET", PATH, None, f"bytes={SLICE}-{4 * SLICE - 1}")]
    # Slices 1, 2 and the short last one are kept whole.
    assert wait_for_size(daemon, directory, SIZE - SLICE)["size_bytes"] == SIZE - SLICE
    status, headers, body = request(daemon, "GET", PATH, {"Range": f"bytes={SLICE}-"})
    assert (status, headers["X-Cache"], body) == (206, "HIT", DATA[SLICE:])
    # A range past the end (size known now: answered 416 from the entry, as S3 would).
    assert request(daemon, "GET", PATH, {"Range": f"bytes={SIZE + 5}-"})[0] == 416
    assert upstream.taken() == [("GET", PATH, None, f"bytes={SIZE + 5}-")]  # the cache does not write 416s
    # Size known: a range inside slice 0 fetches the whole slice; the client gets its 11 bytes.
    status, headers, body = request(daemon, "GET", PATH, {"Range": "bytes=10-20"})
    assert (status, headers["X-Cache"], body) == (206, "MISS", DATA[10:21])
    assert headers["Content-Range"] == f"bytes 10-20/{SIZE}" and headers["Content-Length"] == "11"
    assert upstream.taken() == [("GET", PATH, None, f"bytes=0-{SLICE - 1}")]
    wait_for_size(daemon, directory, SIZE)
    status, headers, body = request(daemon, "GET", PATH)
    assert (status, headers["X-Cache"], body) == (200, "HIT", DATA)
    assert upstream.taken() == []


def test_concurrent_misses_of_one_object_make_one_upstream_request(work_dir):
    import threading
    size = 40 * SLICE + 3
    data = bytes((i * 5 + (i >> 11)) & 0xFF for i in range(size))
    with running(work_dir, {PATH: ('"one"', data)}) as (daemon, upstream, directory):
        results = []
        barrier = threading.Barrier(8)

        def client():
            barrier.wait(timeout=10)
            status, headers, body = request(daemon, "GET", PATH)
            results.append((status, headers.get("X-Cache"), body == data))

        threads = [threading.Thread(target=client) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(results) == sorted([(200, "MISS", True)] + [(200, "HIT", True)] * 7), results
        assert upstream.taken() == [("GET", PATH, None, None)]
        assert cache_figures(daemon, directory)["fetched_bytes_total"] == size


def test_a_read_missing_one_run_of_slices_fetches_only_that_run(setup):
    daemon, upstream, directory = setup
    # Slices 0, 2 and 3 cached; slice 1 not.
    assert request(daemon, "GET", PATH, {"Range": f"bytes=0-{SLICE - 1}"})[0] == 206
    assert request(daemon, "GET", PATH, {"Range": f"bytes={2 * SLICE}-"})[0] == 206
    wait_for_size(daemon, directory, SIZE - SLICE)
    upstream.taken()
    status, headers, body = request(daemon, "GET", PATH)
    assert (status, headers["X-Cache"], body) == (200, "MISS", DATA)
    assert upstream.taken() == [("GET", PATH, None, f"bytes={SLICE}-{2 * SLICE - 1}")]
    wait_for_size(daemon, directory, SIZE)
    assert request(daemon, "GET", PATH)[1]["X-Cache"] == "HIT"
    assert upstream.taken() == []


def test_a_composed_read_of_an_object_overwritten_upstream_is_refused_and_never_mixed(setup):
    daemon, upstream, directory = setup
    assert request(daemon, "GET", PATH, {"Range": f"bytes=0-{SLICE - 1}"})[0] == 206
    wait_for_size(daemon, directory, SLICE)
    upstream.objects[PATH] = ('"v2"', bytes(reversed(DATA)))
    # Slice 0 cached (v1), slice 1 fetched with If-Match "v1": the upstream says 412, the client gets a retryable
    # 503 and no byte of either version; the stored v1 is dropped.
    status, headers, body = request(daemon, "GET", PATH, {"Range": f"bytes=10-{SLICE + 10}"})
    assert status == 503 and b"<Code>ServiceUnavailable</Code>" in body, (status, body[:200])
    assert cache_figures(daemon, directory)["size_bytes"] == 0
    status, _, body = request(daemon, "GET", PATH, {"Range": f"bytes=10-{SLICE + 10}"})
    assert (status, body) == (206, bytes(reversed(DATA))[10:SLICE + 11])


def test_random_ranges_from_concurrent_clients_are_byte_exact_and_fetch_each_slice_once(work_dir):
    import random
    import threading
    size = 24 * SLICE + 999
    data = bytes((i * 3 + (i >> 10)) & 0xFF for i in range(size))
    rng = random.Random(23)
    wanted = []
    for _ in range(200):
        first = rng.randrange(size)
        wanted.append((first, min(size - 1, first + rng.randrange(1, 2 * SLICE))))
    failures = []
    with running(work_dir, {PATH: ('"r"', data)}) as (daemon, upstream, directory):
        def client(ranges):
            for first, last in ranges:
                status, headers, body = request(daemon, "GET", PATH, {"Range": f"bytes={first}-{last}"})
                if (status, headers.get("Content-Range"), body) != (206, f"bytes {first}-{last}/{size}",
                                                                     data[first:last + 1]):
                    failures.append((first, last, status, len(body)))

        threads = [threading.Thread(target=client, args=(wanted[i::8],)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not failures, failures[:5]
        requests = upstream.taken()
        fetched = 0  # the bytes the upstream sent, from the ranges it was asked for
        for _, _, _, field in requests:
            first, last = (field or "bytes=0-").removeprefix("bytes=").split("-")
            fetched += min(int(last) + 1 if last else size, size) - int(first)
        print(f"200 random ranges, 8 clients: {len(requests)} upstream requests, {fetched / size:.2f}x the object "
              f"fetched")
        # Every byte fetched at most once: single-flight, whole-slice ranges, present slices never fetched again.
        assert fetched <= size, requests
        assert cache_figures(daemon, directory)["fetched_bytes_total"] == fetched


def test_a_cold_range_past_the_end_is_416_though_its_widened_range_was_not(setup):
    daemon, upstream, _ = setup
    status, headers, body = request(daemon, "GET", PATH, {"Range": f"bytes={SIZE + 5}-{SIZE + 10}"})
    assert (status, body, headers["Content-Range"]) == (416, b"", f"bytes */{SIZE}")
    assert upstream.taken() == [("GET", PATH, None, f"bytes={SIZE // SLICE * SLICE}-{4 * SLICE - 1}")]
    # The connection stays sound: the next request on it is answered.
    assert request(daemon, "GET", PATH)[2] == DATA


def test_answers_the_cache_may_not_keep_are_not_kept(work_dir):
    with running(work_dir, {PATH: ('"v1"', DATA)}) as (daemon, upstream, directory):
        original = upstream.objects
        # An answer with no ETag, and a 404: nothing stored, every read goes upstream.
        upstream.objects = {}
        assert request(daemon, "GET", PATH)[0] == 404
        assert request(daemon, "GET", PATH)[0] == 404
        upstream.objects = original
        # Excluded by the client: no-store.
        status, _, body = request(daemon, "GET", PATH, {"Cache-Control": "no-store"})
        assert (status, body) == (200, DATA)
        assert cache_figures(daemon, directory)["size_bytes"] == 0
        assert len(upstream.taken()) == 3


def test_a_changed_object_replaces_the_old_slices_and_is_never_mixed(work_dir):
    with running(work_dir, {PATH: ('"v1"', DATA)}, revalidate_after="0s") as (daemon, upstream, directory):
        assert request(daemon, "GET", PATH)[2] == DATA
        wait_for_size(daemon, directory, SIZE)
        second = bytes(reversed(DATA))
        upstream.objects[PATH] = ('"v2"', second)
        # Revalidation finds v2: passed through, v1 dropped.
        status, _, body = request(daemon, "GET", PATH)
        assert (status, body) == (200, second)
        # A range of v2 fills its slices; reads of them are served after a 304, never a v1 byte among them.
        assert request(daemon, "GET", PATH, {"Range": f"bytes=0-{2 * SLICE - 1}"})[2] == second[:2 * SLICE]
        wait_for_size(daemon, directory, 2 * SLICE)
        status, headers, body = request(daemon, "GET", PATH, {"Range": f"bytes=5-{2 * SLICE - 5}"})
        assert (status, headers["X-Cache"], body) == (206, "REVALIDATED", second[5:2 * SLICE - 4])


def test_a_daemon_killed_mid_fill_restarts_with_only_whole_correct_slices(work_dir):
    size = 64 * SLICE + 11
    data = bytes((i * 13 + (i >> 10)) & 0xFF for i in range(size))
    upstream = ObjectUpstream({PATH: ('"big"', data)})
    daemon, directory = start(work_dir, upstream)
    try:
        # Read part of the answer slowly, then kill the daemon (SIGKILL) while the fill is under way.
        client = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        client.sendall(f"GET {PATH} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        received = 0
        while received < 10 * SLICE:
            chunk = client.recv(65536)
            assert chunk
            received += len(chunk)
        end = time.monotonic() + 10
        while cache_figures(daemon, directory)["size_bytes"] < 2 * SLICE and time.monotonic() < end:
            time.sleep(0.02)  # bounded: some slices are committed before the kill
        daemon.kill()  # SIGKILL, with the answer (and its fill) unfinished
        client.close()
    except BaseException:
        daemon.kill()
        raise
    # Restarted on the same directory: whatever was kept is whole; reads of every range are byte-exact.
    upstream.taken()
    daemon, directory = start(work_dir, upstream)
    try:
        kept = cache_figures(daemon, directory)["size_bytes"]
        # Whole slices only: full ones, plus the object's short last slice when the fill got that far before the
        # kill (the kernel's socket buffers can hold the rest of the answer).
        assert kept > 0 and kept % SLICE in (0, size % SLICE), kept
        for first in range(0, size, 7 * SLICE + 3):
            last = min(first + 5 * SLICE, size - 1)
            status, _, body = request(daemon, "GET", PATH, {"Range": f"bytes={first}-{last}"})
            assert status == 206 and body == data[first:last + 1], (first, last)
    finally:
        daemon.stop()
        upstream.stop()


def read_pipelined(daemon, requests: list[dict]) -> list[tuple[int, dict, bytes]]:
    """Sends every request at once on one connection, then reads the answers in order (Content-Length framed)."""
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=30) as client:
        client.sendall(b"".join(
            (f"GET {PATH} HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
             + "\r\n").encode() for headers in requests))
        reader = client.makefile("rb")
        answers = []
        for _ in requests:
            status = int(reader.readline().split()[1])
            headers = {}
            while (line := reader.readline().rstrip(b"\r\n")):
                name, value = line.decode().split(":", 1)
                headers[name.strip()] = value.strip()
            answers.append((status, headers, reader.read(int(headers["Content-Length"]))))
        return answers


def test_an_answer_of_many_slices_is_sent_from_the_cache_as_the_client_reads(work_dir):
    size = 300 * SLICE + 5  # 300 slices: far more than one write queues
    data = bytes((i * 11 + (i >> 9)) & 0xFF for i in range(size))
    with running(work_dir, {PATH: ('"many"', data)}) as (daemon, upstream, directory):
        assert request(daemon, "GET", PATH)[2] == data
        assert wait_for_size(daemon, directory, size)["size_bytes"] == size
        upstream.taken()
        # Pipelined: a whole read, a range over 200 slices, a whole read again; answered in order, byte-exact.
        answers = read_pipelined(daemon, [{}, {"Range": f"bytes={SLICE + 1}-{201 * SLICE}"}, {}])
        assert [(status, headers["X-Cache"]) for status, headers, _ in answers] == [
            (200, "HIT"), (206, "HIT"), (200, "HIT")]
        assert answers[0][2] == data and answers[2][2] == data
        assert answers[1][2] == data[SLICE + 1:201 * SLICE + 1]
        assert upstream.taken() == []
        figures = cache_figures(daemon, directory)
        assert figures["fetched_bytes_total"] == size and figures["hits_total"] == 3


def test_a_large_answer_revalidated_on_every_use_is_sent_from_the_cache_after_its_304(work_dir):
    # revalidate_after = "0s" (the default): every use asks upstream; a 304 lets all 40 slices go from the cache,
    # the first 16 queued with the head, the rest as the client reads.
    size = 40 * SLICE + 7
    data = bytes((i * 13 + (i >> 10)) & 0xFF for i in range(size))
    with running(work_dir, {PATH: ('"big"', data)}, revalidate_after="0s") as (daemon, upstream, directory):
        assert request(daemon, "GET", PATH)[2] == data
        assert wait_for_size(daemon, directory, size)["size_bytes"] == size
        upstream.taken()
        answers = read_pipelined(daemon, [{}, {"Range": f"bytes={SLICE + 1}-{30 * SLICE}"}, {}])
        assert [(status, headers["X-Cache"]) for status, headers, _ in answers] == [
            (200, "REVALIDATED"), (206, "REVALIDATED"), (200, "REVALIDATED")]
        assert answers[0][2] == data and answers[2][2] == data
        assert answers[1][2] == data[SLICE + 1:30 * SLICE + 1]
        # Each use cost a conditional request answered 304, never the body again.
        assert upstream.taken() == [("GET", PATH, '"big"', None),
                                    ("GET", PATH, '"big"', f"bytes={SLICE + 1}-{30 * SLICE}"),
                                    ("GET", PATH, '"big"', None)]
        figures = cache_figures(daemon, directory)
        assert figures["fetched_bytes_total"] == size and figures["revalidations_total"] == 3
        # A changed object still passes through and replaces the old slices.
        upstream.objects[PATH] = ('"big2"', data[::-1])
        status, headers, body = request(daemon, "GET", PATH)
        assert (status, body) == (200, data[::-1]) and headers.get("X-Cache") is None


def test_a_client_reading_a_large_cached_answer_below_min_body_rate_is_cut(work_dir):
    size = 400 * SLICE
    data = os.urandom(size)
    limits = {"limits.min_body_rate": "1KiB/s", "limits.body_rate_window": "1s"}
    with running(work_dir, {PATH: ('"slow"', data)}, server_extra=limits) as (daemon, upstream, directory):
        assert request(daemon, "GET", PATH)[2] == data
        assert wait_for_size(daemon, directory, size)["size_bytes"] == size
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            sock.sendall(f"GET {PATH} HTTP/1.1\r\nHost: presignd\r\n\r\n".encode())
            # Read nothing: once the socket buffers are full the answer stops moving, and within a window or two
            # presignd counts a slow body and cuts it (its slice files are let go).
            started = time.monotonic()
            while metric(parse_metrics(admin_text(daemon)), "presignd_slow_body_aborts_total") < 1:
                assert time.monotonic() - started < 10, "a stalled cached answer was not cut"
                time.sleep(0.05)
            ended, received = read_until_cut(sock)
            assert ended and received < size, (ended, received)
        assert request(daemon, "GET", PATH)[2] == data  # the daemon and the cache go on


def test_a_client_reading_a_revalidated_answer_steadily_is_not_cut_by_min_body_rate(work_dir):
    # After the 304 the answer's 16 slices (8 MiB) are queued at once, more than the socket buffers hold: what the
    # client takes is measured, not what was queued (which does not move until nearly all of it is taken).
    size = 16 * (512 << 10)
    data = os.urandom(size)
    limits = {"limits.min_body_rate": "1KiB/s", "limits.body_rate_window": "3s"}
    with running(work_dir, {PATH: ('"paced"', data)}, server_extra=limits, revalidate_after="0s",
                 slice_size="512KiB") as (daemon, upstream, directory):
        assert request(daemon, "GET", PATH)[2] == data
        assert wait_for_size(daemon, directory, size)["size_bytes"] == size
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            sock.sendall(f"GET {PATH} HTTP/1.1\r\nHost: presignd\r\n\r\n".encode())
            received = b""
            deadline = time.monotonic() + 30
            # 768 KiB/s, far above the rate, slower than the queued bytes drain in one window.
            while b"\r\n\r\n" not in received or len(received.split(b"\r\n\r\n", 1)[1]) < size:
                assert time.monotonic() < deadline
                want = 192 << 10
                if b"\r\n\r\n" in received:  # never past the body's end: the connection stays open after it
                    want = min(want, size - len(received.split(b"\r\n\r\n", 1)[1]))
                while want > 0:
                    chunk = sock.recv(want)
                    assert chunk, f"cut after {len(received)} bytes"
                    received += chunk
                    want -= len(chunk)
                time.sleep(0.25)
        head, body = received.split(b"\r\n\r\n", 1)
        assert b"X-Cache: REVALIDATED" in head and body[:size] == data
        assert metric(parse_metrics(admin_text(daemon)), "presignd_slow_body_aborts_total") == 0


def test_pipelined_cached_answers_wait_for_the_client_instead_of_piling_up_open_slices(work_dir):
    # 300 GETs of a cached 16-slice object sent at once by a client that reads nothing: the answers wait behind
    # the output's high watermark (a few open slice files), then all arrive in order once it reads.
    size = 16 * SLICE
    data = os.urandom(size)
    with running(work_dir, {PATH: ('"p"', data)}) as (daemon, upstream, directory):
        assert request(daemon, "GET", PATH)[2] == data
        assert wait_for_size(daemon, directory, size)["size_bytes"] == size
        pid = daemon.proc.popen.pid
        before = len(os.listdir(f"/proc/{pid}/fd"))
        count = 300
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=30) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            client.sendall(f"GET {PATH} HTTP/1.1\r\nHost: x\r\n\r\n".encode() * count)
            time.sleep(1.0)  # what presignd queues unread in a second; without the wait, all 300 answers
            held = len(os.listdir(f"/proc/{pid}/fd")) - before
            assert held <= 3 * 16, f"{held} descriptors held for one client that reads nothing"
            reader = client.makefile("rb")
            for _ in range(count):
                assert int(reader.readline().split()[1]) == 200
                headers = {}
                while (line := reader.readline().rstrip(b"\r\n")):
                    name, value = line.decode().split(":", 1)
                    headers[name.strip().lower()] = value.strip()
                assert reader.read(int(headers["content-length"])) == data
        assert upstream.taken() == [("GET", PATH, None, None)]  # only the fill went upstream


def test_a_404_is_remembered_for_negative_ttl_and_answered_locally(work_dir):
    with running(work_dir, {PATH: ('"v1"', DATA)}, negative_ttl="1h") as (daemon, upstream, directory):
        missing = "/photos/open/missing"
        assert request(daemon, "GET", missing)[0] == 404
        status, headers, body = request(daemon, "GET", missing)
        assert status == 404 and b"<Code>NoSuchKey</Code>" in body, body
        assert request(daemon, "HEAD", missing)[0] == 404
        assert upstream.taken() == [("GET", missing, None, None)]  # only the first asked upstream
        # Another key, and an existing object, are not affected.
        assert request(daemon, "GET", PATH)[2] == DATA


def test_a_404_other_than_no_such_key_is_not_remembered(work_dir):
    # A bucket gone upstream answers NoSuchBucket: remembered, it would come back as NoSuchKey for negative_ttl.
    with running(work_dir, {PATH: ('"v1"', DATA)}, negative_ttl="1h") as (daemon, upstream, directory):
        upstream.missing_code = "NoSuchBucket"
        missing = "/photos/open/gone"
        for _ in range(2):
            status, _, body = request(daemon, "GET", missing)
            assert status == 404 and b"<Code>NoSuchBucket</Code>" in body, body
        assert upstream.taken() == [("GET", missing, None, None)] * 2  # both asked upstream
