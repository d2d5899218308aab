"""aws-chunked uploads streamed straight through, signed chunks accepted (issue 21 items 1 and 2).

- Every form a client sends (signed chunks with and without a trailer, unsigned with each checksum trailer S3
  knows) streams to an `unwrap` upstream as a plain body with Content-Length = x-amz-decoded-content-length; the
  spool directory is never used.
- A `forward` upstream (S3) gets signed chunks re-framed as STREAMING-UNSIGNED-PAYLOAD-TRAILER with the trailer.
- A wrong trailer checksum, a truncated trailer, a malformed chunk header: the client gets BadDigest /
  InvalidRequest and the recording upstream an incomplete body, nothing stored.
- A real signed-chunk client (minio-go, Debian's golang-github-minio-minio-go-v7-dev) uploads 64 MiB objects, single
  PUT and multipart, through presignd and reads them back byte-exact; 1 GiB with PRESIGND_LONG_TESTS=1.
"""

from __future__ import annotations

import os
import time

import pytest

import chunked_support as cs
from harness.clients_extra import count_op, raw_request
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.rawhttp import RawConnection
from harness.recorder import VerifyingUpstreamRecorder, decode_aws_chunked
from harness.s3xml import parse_error

from conftest import require_presignd_binary

LONG = os.environ.get("PRESIGND_LONG_TESTS") == "1"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, rec_unwrap, rec_forward):
    base = tmp_path_factory.mktemp("signed-chunks")
    spool = base / "spool"
    spool.mkdir()
    config = PresigndConfig(
        upstreams=[
            Upstream(name="unwrap", endpoint=rec_unwrap.endpoint, access_key_id=rec_unwrap.access_key_id,
                     secret_access_key=rec_unwrap.secret_access_key, extra={"aws_chunked": "unwrap"}),
            Upstream(name="forward", endpoint=rec_forward.endpoint, access_key_id=rec_forward.access_key_id,
                     secret_access_key=rec_forward.secret_access_key, extra={"aws_chunked": "forward"}),
        ],
        buckets=[Bucket("unwrap", "unwrap"), Bucket("forward", "forward")],
        server_extra={"spool_directory": str(spool)},
    )
    d = Presignd(require_presignd_binary(), config, str(base / "presignd"), name="presignd-signed-chunks").start()
    d.spool_dir = str(spool)
    try:
        yield d
    finally:
        alive = d.is_running()
        d.stop() if alive else d.kill()
        assert alive, d.log_text()


@pytest.fixture(scope="module")
def go_client(tmp_path_factory):
    return cs.go_client(str(tmp_path_factory.mktemp("go")))


def _key(request) -> str:
    return f"{request.node.name}-{time.monotonic_ns()}".replace("[", "-").replace("]", "")


def _put(daemon, bucket: str, key: str, data: bytes, signed: bool, algorithm: str | None, recorder=None,
         **encode_args):
    body = cs.encode(data, signed, algorithm, **encode_args)
    return _send(daemon, f"/{bucket}/{key}", cs.headers(len(data), signed, algorithm, len(body)), body, recorder)


def _send(daemon, target: str, headers, body: bytes, recorder=None):
    """With a `recorder`: the first 20000 body bytes go, then the rest once the upstream has the head (so a refusal
    finds the upstream mid-body, not still connecting)."""
    count_op("raw-socket")
    if recorder is None:
        return raw_request(daemon.endpoint, "PUT", target, headers, body)
    host, port = daemon.endpoint.split("://", 1)[1].rsplit(":", 1)
    with RawConnection(host, int(port), timeout=10) as conn:
        conn.send((f"PUT {target} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                   + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode() + body[:20000])
        deadline = time.monotonic() + 5
        while target not in recorder.heads:
            assert time.monotonic() < deadline, "the upstream never got the head"
            time.sleep(0.01)
        conn.send(body[20000:])
        return conn.read_response("PUT", timeout=10)


def _recorded(recorder, key: str):
    found = [r for r in recorder.snapshot() if r.target.endswith("/" + key)]
    assert len(found) == 1, [(r.method, r.target) for r in recorder.snapshot()]
    return found[0]


def _spool_untouched(daemon) -> None:
    assert os.listdir(daemon.spool_dir) == []
    fds = f"/proc/{daemon.proc.pid}/fd"
    open_in_spool = [t for t in (_target(os.path.join(fds, fd)) for fd in os.listdir(fds))
                     if t.startswith(daemon.spool_dir)]
    assert open_in_spool == []


def _target(link: str) -> str:
    """What a descriptor of the daemon names; "" for one it closed since the listing (a connection ending)."""
    try:
        return os.readlink(link)
    except FileNotFoundError:
        return ""


FORMS = [(True, None), (True, "crc32"), (True, "sha256"), (False, "crc32"), (False, "crc32c"), (False, "crc64nvme"),
         (False, "sha1"), (False, "sha256")]


@pytest.mark.parametrize("signed,algorithm", FORMS)
def test_every_form_streams_to_unwrap_as_a_plain_body(daemon, rec_unwrap, request, signed, algorithm):
    data = os.urandom(200_000 + 3)
    key = _key(request)
    resp = _put(daemon, "unwrap", key, data, signed, algorithm)
    assert resp.status == 200, resp.body
    req = _recorded(rec_unwrap, key)
    assert not req.problems, req.problems
    assert req.complete and req.body == data and not req.was_chunked
    assert req.header("content-length") == str(len(data))
    assert req.header("x-amz-content-sha256") == "UNSIGNED-PAYLOAD"
    for gone in ("content-encoding", "x-amz-decoded-content-length", "x-amz-trailer", "x-amz-sdk-checksum-algorithm"):
        assert req.header(gone) is None, gone
    assert "PLACEHOLDER" not in (req.header("authorization") or "")
    assert rec_unwrap.objects[f"/unwrap/{key}"] == data
    _spool_untouched(daemon)


def test_a_checksum_header_in_the_head_is_forwarded(daemon, rec_unwrap, request):
    data = os.urandom(100_000)
    key = _key(request)
    body = cs.encode(data, False, None)
    headers = [(k, v) for k, v in cs.headers(len(data), False, None, len(body))]
    headers += [("x-amz-checksum-crc32", cs.checksum_b64("crc32", data)), ("x-amz-sdk-checksum-algorithm", "CRC32")]
    count_op("raw-socket")
    resp = raw_request(daemon.endpoint, "PUT", f"/unwrap/{key}", headers, body)
    assert resp.status == 200, resp.body
    req = _recorded(rec_unwrap, key)
    assert not req.problems and req.body == data
    assert req.header("x-amz-checksum-crc32") == cs.checksum_b64("crc32", data)
    assert "x-amz-checksum-crc32" in req.signed_headers()
    assert req.header("x-amz-sdk-checksum-algorithm") == "CRC32"


@pytest.mark.parametrize("algorithm", ["crc32", "crc32c", "sha256"])
def test_forward_reframes_signed_chunks_as_unsigned_with_the_trailer(daemon, rec_forward, request, algorithm):
    data = os.urandom(300_000 + 11)
    key = _key(request)
    resp = _put(daemon, "forward", key, data, True, algorithm, chunk_size=100_000)
    assert resp.status == 200, resp.body
    req = _recorded(rec_forward, key)
    assert not req.problems, req.problems
    assert req.header("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    assert req.header("content-encoding") == "aws-chunked"
    assert req.header("x-amz-decoded-content-length") == str(len(data))
    assert req.header("x-amz-trailer") == f"x-amz-checksum-{algorithm}"
    assert int(req.header("content-length")) == len(req.body)
    assert b"chunk-signature" not in req.body and b"x-amz-trailer-signature" not in req.body
    assert req.body.endswith(f"0\r\nx-amz-checksum-{algorithm}:{cs.checksum_b64(algorithm, data)}\r\n\r\n".encode())
    assert decode_aws_chunked(req.body, dict(req.headers)) == data
    assert rec_forward.objects[f"/forward/{key}"] == data


def test_forward_signed_chunks_without_a_trailer_become_a_plain_body(daemon, rec_forward, request):
    data = os.urandom(90_000)
    key = _key(request)
    resp = _put(daemon, "forward", key, data, True, None)
    assert resp.status == 200, resp.body
    req = _recorded(rec_forward, key)
    assert not req.problems and req.body == data
    assert req.header("x-amz-content-sha256") == "UNSIGNED-PAYLOAD" and req.header("content-encoding") is None


def _assert_refused(daemon, recorder, key: str, resp, code: str, upstream_checks: bool = False) -> None:
    assert resp.status == 400, (resp.status, resp.body)
    assert parse_error(resp.body).code == code, resp.body
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not [r for r in recorder.snapshot() if r.target.endswith("/" + key)]:
        time.sleep(0.05)
    req = _recorded(recorder, key)
    if not upstream_checks:
        assert not req.complete, "the upstream got a complete body"
        assert req.body_length < int(req.header("content-length"))
    assert not [k for k in recorder.objects if k.endswith("/" + key)], "the upstream stored the object"
    _spool_untouched(daemon)


@pytest.mark.parametrize("bucket", ["unwrap", "forward"])
@pytest.mark.parametrize("signed", [False, True])
def test_a_wrong_trailer_checksum_is_bad_digest_and_nothing_is_stored(daemon, rec_unwrap, rec_forward, request,
                                                                     bucket, signed):
    data = os.urandom(150_000)
    key = _key(request)
    wrong = cs.checksum_b64("crc32", data[:-1] + bytes([data[-1] ^ 1]))
    recorder = rec_unwrap if bucket == "unwrap" else rec_forward
    resp = _put(daemon, bucket, key, data, signed, "crc32", recorder=recorder, trailer_value=wrong)
    # Unsigned aws-chunked to a `forward` upstream passes as it came: the upstream (as S3) checks the trailer.
    _assert_refused(daemon, rec_unwrap if bucket == "unwrap" else rec_forward, key, resp, "BadDigest",
                    upstream_checks=bucket == "forward" and not signed)


def test_a_truncated_trailer_is_bad_digest_and_nothing_is_stored(daemon, rec_unwrap, request):
    data = os.urandom(150_000)
    key = _key(request)
    body = cs.encode(data, False, "crc64nvme")
    cut = body[:body.rindex(b"x-amz-checksum-crc64nvme:") + 30]  # mid trailer line; Content-Length says so
    headers = cs.headers(len(data), False, "crc64nvme", len(cut))
    resp = _send(daemon, f"/unwrap/{key}", headers, cut, rec_unwrap)
    _assert_refused(daemon, rec_unwrap, key, resp, "BadDigest")


def test_a_malformed_chunk_header_is_invalid_request_and_nothing_is_stored(daemon, rec_unwrap, request):
    data = os.urandom(150_000)
    key = _key(request)
    body = cs.encode(data, True, "crc32", chunk_size=65536)
    second = body.index(b"\r\n", 65536 + 70) + 2  # the second chunk's header
    assert body[second:second + 5] == b"10000"
    body = body[:second] + b"1OOOO" + body[second + 5:]
    resp = _send(daemon, f"/unwrap/{key}", cs.headers(len(data), True, "crc32", len(body)), body, rec_unwrap)
    _assert_refused(daemon, rec_unwrap, key, resp, "InvalidRequest")


def test_the_go_client_sends_signed_chunks(go_client):
    """What minio-go sends over plain HTTP with (placeholder) keys: straight to a recorder, without presignd."""
    rec = VerifyingUpstreamRecorder(reject_bad_signatures=False).start()
    try:
        count_op("minio-go")
        cs.run_go_client(go_client, rec.endpoint, "probe-bucket", "probe", 100_000, skip_read=True)
        (put,) = [r for r in rec.snapshot() if r.method == "PUT"]
        assert put.header("x-amz-content-sha256") == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
        assert put.header("x-amz-decoded-content-length") == "100000"
        assert b";chunk-signature=" in put.body
    finally:
        rec.stop()


SIZES = [64 << 20] + ([1 << 30] if LONG else [])


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s >> 20}MiB")
@pytest.mark.parametrize("part_size", [0, 16 << 20], ids=["single-put", "multipart"])
def test_the_go_client_uploads_and_reads_back_byte_exact(daemon, rec_unwrap, go_client, request, size, part_size):
    key = _key(request)
    count_op("minio-go")
    result = cs.run_go_client(go_client, daemon.endpoint, "unwrap", key, size, part_size=part_size)
    assert result["read_back"] == "ok" and int(result["uploaded"]) == size
    puts = [r for r in rec_unwrap.snapshot() if r.method == "PUT" and key in r.target]
    assert puts and all(not r.problems and r.complete for r in puts)
    assert all(r.header("x-amz-content-sha256") == "UNSIGNED-PAYLOAD" for r in puts)
    if part_size:
        assert len(puts) == size // part_size
    assert sum(len(r.body) for r in puts) == size
    with rec_unwrap.lock:
        stored = rec_unwrap.objects.pop(f"/unwrap/{key}")
    assert len(stored) == size
    for r in puts:
        r.body = b""  # keep the recorder small
    _spool_untouched(daemon)
