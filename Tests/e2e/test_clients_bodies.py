"""Upload bodies of every shape (issue 6): Content-Length, chunked without a length, aws-chunked with a CRC32
trailer (hand-built over a raw socket, as recent SDKs send over HTTPS), and Expect: 100-continue.

- Each shape reads back byte-identical from moto, both with aws-chunked forwarded (the session daemon: provider
  custom → `auto` → forward) and unwrapped (a daemon of this module with `aws_chunked = "unwrap"`).
- Through verifying recorders (botocore recomputing SigV4 over exactly what arrives), what presignd sends is what
  real S3 accepts: unwrapped → a plain body with Content-Length = decoded length and the trailer's checksum as a
  signed, correct `x-amz-checksum-crc32` header, no aws-chunked left; forwarded → the aws-chunked body unchanged,
  signed with STREAMING-UNSIGNED-PAYLOAD-TRAILER; client checksum headers signed and correct for the body.
- Length-less uploads are spooled under `spool_directory`, never left behind; over `max_spool_size` → 413 XML.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time
import urllib.parse

import pytest

from harness.clients import curl, unsigned_s3
from harness.clients_extra import (aws_chunked, aws_chunked_headers, count_boto3_calls, count_op, crc32_b64,
                                   http_chunked, md5_b64, raw_request)
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.recorder import VerifyingUpstreamRecorder
from harness.s3xml import parse_error

from conftest import BUCKET, require_presignd_binary

UNWRAP_MOUNT = "/unwrap-moto"


@pytest.fixture(scope="module")
def bodies_daemon(tmp_path_factory, moto, nginx_front, test_ca, rec_unwrap, rec_forward):
    """presignd with aws_chunked = unwrap (to moto and to a recorder) and forward (to a recorder)."""
    binary = require_presignd_binary()
    base = tmp_path_factory.mktemp("bodies")
    spool = base / "spool"
    spool.mkdir()
    config = PresigndConfig(
        upstreams=[
            Upstream(name="moto_unwrap", endpoint=nginx_front.endpoint("good"), ca_file=test_ca.ca_file,
                     access_key_id=moto.access_key_id, secret_access_key=moto.secret_access_key,
                     extra={"aws_chunked": "unwrap"}),
            Upstream(name="rec_unwrap", endpoint=rec_unwrap.endpoint, access_key_id=rec_unwrap.access_key_id,
                     secret_access_key=rec_unwrap.secret_access_key, extra={"aws_chunked": "unwrap"}),
            Upstream(name="rec_forward", endpoint=rec_forward.endpoint, access_key_id=rec_forward.access_key_id,
                     secret_access_key=rec_forward.secret_access_key, extra={"aws_chunked": "forward"}),
        ],
        buckets=[
            Bucket(BUCKET, "moto_unwrap", mount=UNWRAP_MOUNT),
            Bucket("rec-unwrap", "rec_unwrap"),
            Bucket("rec-forward", "rec_forward"),
        ],
        server_extra={"spool_directory": str(spool), "max_spool_size": "16MiB"},
    )
    daemon = Presignd(binary, config, str(base / "presignd"), name="presignd-bodies")
    daemon.start()
    daemon.spool_dir = str(spool)
    try:
        yield daemon
    finally:
        if daemon.is_running():
            daemon.stop()
        else:
            daemon.kill()
            pytest.fail(f"presignd-bodies died (exit {daemon.exit_code}):\n{daemon.log_text()}")


# -- helpers ------------------------------------------------------------------------------------------------------

OCTET = [("Content-Type", "application/octet-stream")]


def shape_request(shape: str, data: bytes) -> tuple[list[tuple[str, str]], bytes, bool]:
    """(headers, wire body, wait for 100 Continue) for one body shape."""
    if shape == "content-length":
        return OCTET + [("Content-Length", str(len(data)))], data, False
    if shape == "chunked":
        return OCTET + [("Transfer-Encoding", "chunked")], http_chunked(data), False
    if shape == "expect-100-continue":
        return OCTET + [("Content-Length", str(len(data))), ("Expect", "100-continue")], data, True
    if shape == "aws-chunked":
        enc = aws_chunked(data)
        return OCTET + aws_chunked_headers(data) + [("Content-Length", str(len(enc)))], enc, False
    if shape == "aws-chunked-in-chunked":  # aws-chunked inside HTTP chunked framing: no length at all
        return OCTET + aws_chunked_headers(data) + [("Transfer-Encoding", "chunked")], http_chunked(aws_chunked(data)), False
    if shape == "aws-chunked-unknown-length":  # no x-amz-decoded-content-length: the only aws-chunked form spooled
        headers = [(k, v) for k, v in aws_chunked_headers(data) if k != "x-amz-decoded-content-length"]
        return OCTET + headers + [("Transfer-Encoding", "chunked")], http_chunked(aws_chunked(data)), False
    if shape == "aws-chunked-expect":
        enc = aws_chunked(data)
        return (OCTET + aws_chunked_headers(data) + [("Content-Length", str(len(enc))), ("Expect", "100-continue")],
                enc, True)
    raise ValueError(shape)


SHAPES = ["content-length", "chunked", "expect-100-continue", "aws-chunked", "aws-chunked-in-chunked",
          "aws-chunked-expect"]


def put(endpoint: str, path: str, shape: str, data: bytes):
    headers, body, wait = shape_request(shape, data)
    count_op("raw-socket")
    return raw_request(endpoint, "PUT", path, headers, body, wait_for_continue=wait)


def assert_clean(requests):
    for r in requests:
        assert not r.problems, f"{r.method} {r.target}: the recorder (as S3) would reject it: {r.problems}"


def only(recorder: VerifyingUpstreamRecorder, needle: str, method: str = "PUT"):
    found = [r for r in recorder.snapshot() if needle in urllib.parse.unquote(r.target) and r.method == method]
    assert len(found) == 1, f"expected one {method} for {needle} upstream, got {[(r.method, r.target) for r in found]}"
    return found[0]


def spool_files(daemon) -> list[str]:
    return sorted(os.listdir(daemon.spool_dir))


def open_spool_fds(daemon) -> list[str]:
    """Files presignd holds open under its spool directory (unlinked ones show as `... (deleted)`)."""
    fd_dir = f"/proc/{daemon.proc.pid}/fd"
    out = []
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith(daemon.spool_dir):
            out.append(target)
    return out


# -- every shape reads back byte-identical ------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_reads_back_identical_forwarded(presignd, moto_s3, key_prefix, shape):
    """Session daemon (provider custom: aws-chunked forwarded as is) → moto."""
    data = os.urandom(300_000 + 7)
    key = key_prefix + f"{shape} ü.bin"
    resp = put(presignd.endpoint, f"/{BUCKET}/{urllib.parse.quote(key)}", shape, data)
    assert resp.status == 200, resp.body
    if shape.endswith("expect") or shape.startswith("expect"):
        assert resp.interim == [100]
    assert moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data
    count_op("curl")
    got = curl(f"{presignd.endpoint}/{BUCKET}/{urllib.parse.quote(key)}")
    assert got.status == 200 and got.body == data


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_reads_back_identical_unwrapped(bodies_daemon, moto_s3, key_prefix, shape):
    """aws_chunked = "unwrap" → moto: a plain body. aws-chunked is streamed (issue 21): the trailer's checksum is
    checked by presignd but comes after the head, so moto stores none (the README says so)."""
    data = os.urandom(300_000 + 7)
    key = key_prefix + f"{shape} ü.bin"
    resp = put(bodies_daemon.endpoint, f"{UNWRAP_MOUNT}/{urllib.parse.quote(key)}", shape, data)
    assert resp.status == 200, resp.body
    assert moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data
    if shape.startswith("aws-chunked"):
        got = moto_s3.head_object(Bucket=BUCKET, Key=key, ChecksumMode="ENABLED")
        assert got.get("ChecksumCRC32") is None, got
    assert spool_files(bodies_daemon) == []


# -- what arrives upstream is what S3 accepts ---------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["aws-chunked", "aws-chunked-in-chunked", "aws-chunked-expect"])
def test_unwrapped_aws_chunked_is_a_plain_signed_body(bodies_daemon, rec_unwrap, key_prefix, shape):
    data = os.urandom(200_000 + 3)
    key = key_prefix + "unwrapped"
    resp = put(bodies_daemon.endpoint, f"/rec-unwrap/{key}", shape, data)
    assert resp.status == 200, resp.body
    req = only(rec_unwrap, key)
    assert_clean([req])
    assert req.body == data and not req.was_chunked
    assert req.header("content-length") == str(len(data))
    # Streamed (issue 21): the checksum was checked on the way, but it arrives after the head went.
    assert req.header("x-amz-checksum-crc32") is None
    assert "aws-chunked" not in (req.header("content-encoding") or "")
    for gone in ("x-amz-decoded-content-length", "x-amz-trailer"):
        assert req.header(gone) is None, f"{gone} must not reach an upstream that gets a plain body"
    sha = req.header("x-amz-content-sha256")
    assert sha in ("UNSIGNED-PAYLOAD", hashlib.sha256(data).hexdigest()), sha
    # S3 refuses an algorithm with neither a checksum header nor a trailer.
    assert req.header("x-amz-sdk-checksum-algorithm") is None
    assert spool_files(bodies_daemon) == [] and open_spool_fds(bodies_daemon) == []


def test_unwrapped_keeps_other_content_encodings(bodies_daemon, rec_unwrap, key_prefix):
    data = b"pretend this is gzip" * 1000
    key = key_prefix + "gz"
    enc = aws_chunked(data, chunk_size=8192)
    headers = (OCTET + [(k, v) for k, v in aws_chunked_headers(data) if k != "Content-Encoding"]
               + [("Content-Encoding", "aws-chunked,gzip"), ("Content-Length", str(len(enc)))])
    count_op("raw-socket")
    resp = raw_request(bodies_daemon.endpoint, "PUT", f"/rec-unwrap/{key}", headers, enc)
    assert resp.status == 200, resp.body
    req = only(rec_unwrap, key)
    assert_clean([req])
    assert req.body == data and req.header("content-encoding") == "gzip"
    assert "content-encoding" in req.signed_headers()


@pytest.mark.parametrize("shape", ["aws-chunked", "aws-chunked-in-chunked"])
def test_forwarded_aws_chunked_arrives_unchanged_and_signed(bodies_daemon, rec_forward, key_prefix, shape):
    data = os.urandom(150_000 + 1)
    key = key_prefix + "forwarded"
    resp = put(bodies_daemon.endpoint, f"/rec-forward/{key}", shape, data)
    assert resp.status == 200, resp.body
    req = only(rec_forward, key)
    assert_clean([req])
    encoded = aws_chunked(data)
    assert req.body == encoded, "the aws-chunked body must be forwarded byte for byte"
    assert req.header("content-length") == str(len(encoded)) and not req.was_chunked
    assert req.header("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    assert req.header("content-encoding") == "aws-chunked"
    assert req.header("x-amz-decoded-content-length") == str(len(data))
    assert req.header("x-amz-trailer") == "x-amz-checksum-crc32"
    signed = req.signed_headers()
    for name in ("content-encoding", "x-amz-decoded-content-length", "x-amz-trailer", "x-amz-content-sha256"):
        assert name in signed, f"{name} not signed: {signed}"
    assert req.header("x-amz-checksum-crc32") is None  # S3 rejects a trailer plus a checksum header
    assert spool_files(bodies_daemon) == []


def test_aws_chunked_with_wrong_decoded_length_is_refused(bodies_daemon, rec_unwrap, key_prefix):
    data = os.urandom(50_000)
    enc = aws_chunked(data)
    headers = OCTET + [(k, v if k != "x-amz-decoded-content-length" else "49999") for k, v in aws_chunked_headers(data)]
    count_op("raw-socket")
    resp = raw_request(bodies_daemon.endpoint, "PUT", f"/rec-unwrap/{key_prefix}bad-len",
                       headers + [("Content-Length", str(len(enc)))], enc)
    assert resp.status == 400, (resp.status, resp.body)
    # Streamed: the upstream saw the request start, but never a complete body, and stored nothing.
    assert_incomplete_and_unstored(rec_unwrap, key_prefix)


def assert_incomplete_and_unstored(recorder, key_prefix: str) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not all(
            not r.complete for r in recorder.snapshot() if key_prefix in r.target):
        time.sleep(0.05)
    assert all(not r.complete for r in recorder.snapshot() if key_prefix in r.target), recorder.snapshot()
    assert not [k for k in recorder.objects if key_prefix in k]


def test_malformed_aws_chunked_is_refused(bodies_daemon, rec_unwrap, key_prefix):
    data = os.urandom(10_000)
    enc = aws_chunked(data).replace(b"%x\r\n" % len(data), b"zz\r\n", 1)
    count_op("raw-socket")
    resp = raw_request(bodies_daemon.endpoint, "PUT", f"/rec-unwrap/{key_prefix}malformed",
                       OCTET + aws_chunked_headers(data) + [("Content-Length", str(len(enc)))], enc)
    assert resp.status == 400, (resp.status, resp.body)
    assert_incomplete_and_unstored(rec_unwrap, key_prefix)


def test_client_checksum_headers_are_signed_and_correct(bodies_daemon, rec_unwrap, key_prefix):
    """boto3 (over plain HTTP) sends x-amz-checksum-crc32; curl users send Content-MD5; DeleteObjects carries a
    checksum of its XML body. Each arrives signed and correct for the body received."""
    s3 = count_boto3_calls(unsigned_s3(bodies_daemon.endpoint))
    data = os.urandom(70_000)
    s3.put_object(Bucket="rec-unwrap", Key=key_prefix + "boto3", Body=data)
    req = only(rec_unwrap, key_prefix + "boto3")
    assert_clean([req])
    assert req.body == data
    checksums = {k.lower(): v for k, v in req.headers if k.lower().startswith("x-amz-checksum-")}
    assert checksums == {"x-amz-checksum-crc32": crc32_b64(data)}, checksums
    assert "x-amz-checksum-crc32" in req.signed_headers()

    count_op("curl")
    put_md5 = curl("-X", "PUT", "-H", "Content-Type: application/octet-stream", "-H", f"Content-MD5: {md5_b64(data)}",
                   "--data-binary", "@-", f"{bodies_daemon.endpoint}/rec-unwrap/{key_prefix}curl-md5", input=data)
    assert put_md5.status == 200, put_md5.body
    req = only(rec_unwrap, key_prefix + "curl-md5")
    assert_clean([req])
    assert req.header("content-md5") == md5_b64(req.body) and req.body == data
    assert "content-md5" in req.signed_headers()

    s3.delete_objects(Bucket="rec-unwrap", Delete={"Objects": [{"Key": key_prefix + "boto3"},
                                                               {"Key": key_prefix + "curl-md5"}]})
    (req,) = [r for r in rec_unwrap.snapshot() if r.method == "POST" and "delete" in r.query]
    assert_clean([req])
    assert key_prefix.encode() in req.body
    md5, crc = req.header("content-md5"), req.header("x-amz-checksum-crc32")
    assert md5 or crc, f"DeleteObjects without Content-MD5 or checksum: {req.headers}"
    if md5:
        assert md5 == md5_b64(req.body) and "content-md5" in req.signed_headers()
    if crc:
        assert crc == crc32_b64(req.body) and "x-amz-checksum-crc32" in req.signed_headers()


# -- spooling ------------------------------------------------------------------------------------------------------


def test_spooled_upload_leaves_nothing_behind(bodies_daemon, rec_unwrap, key_prefix):
    """A length-less body goes to an unlinked file in spool_directory (on disk, not in memory) and is sent with
    Content-Length; a client that disconnects mid-body leaves no file or descriptor behind."""
    data = os.urandom(3 * 1024 * 1024 + 11)
    resp = put(bodies_daemon.endpoint, f"/rec-unwrap/{key_prefix}spooled", "chunked", data)
    assert resp.status == 200, resp.body
    req = only(rec_unwrap, key_prefix + "spooled")
    assert_clean([req])
    assert req.body == data and not req.was_chunked and req.header("content-length") == str(len(data))
    assert spool_files(bodies_daemon) == [] and open_spool_fds(bodies_daemon) == []

    # Abandoned mid-body: while it is in flight the spool is an unlinked file in spool_directory.
    hostport = bodies_daemon.endpoint.split("://", 1)[1]
    host, port = hostport.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"PUT /rec-unwrap/{key_prefix}abandoned HTTP/1.1\r\nHost: {hostport}\r\n"
                     "Transfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n".encode())
        sock.sendall(http_chunked(os.urandom(600_000))[:-5])  # no final chunk
        deadline = time.monotonic() + 5
        while not open_spool_fds(bodies_daemon) and time.monotonic() < deadline:
            time.sleep(0.05)
        held = open_spool_fds(bodies_daemon)
        assert held and all(t.endswith("(deleted)") for t in held), held
        assert spool_files(bodies_daemon) == []
    deadline = time.monotonic() + 5
    while open_spool_fds(bodies_daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert open_spool_fds(bodies_daemon) == [], "spool file still open after the client went away"
    assert [r for r in rec_unwrap.snapshot() if "abandoned" in r.target] == []


@pytest.fixture(scope="module")
def small_spool_daemon(tmp_path_factory):
    binary = require_presignd_binary()
    base = tmp_path_factory.mktemp("small-spool")
    spool = base / "spool"
    spool.mkdir()
    rec = VerifyingUpstreamRecorder().start()
    config = PresigndConfig(
        upstreams=[Upstream(name="rec", endpoint=rec.endpoint, access_key_id=rec.access_key_id,
                            secret_access_key=rec.secret_access_key, extra={"aws_chunked": "unwrap"})],
        buckets=[Bucket("small", "rec")],
        server_extra={"spool_directory": str(spool), "max_spool_size": "1MiB"},
    )
    daemon = Presignd(binary, config, str(base / "presignd"), name="presignd-small-spool")
    daemon.start()
    daemon.spool_dir = str(spool)
    daemon.recorder = rec
    try:
        yield daemon
    finally:
        rec.stop()
        daemon.stop() if daemon.is_running() else daemon.kill()


def _send_all_then_read(endpoint: str, head: bytes, body: bytes) -> tuple[int, bytes]:
    """Send a request whose body the server may refuse early (ignore a reset while sending), read the answer."""
    hostport = endpoint.split("://", 1)[1]
    host, port = hostport.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=20)
    errors = []

    def writer():
        try:
            sock.sendall(head + body)
        except OSError as e:
            errors.append(e)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head_end = data.index(b"\r\n\r\n") + 4
                length = next((int(line.split(b":")[1]) for line in data[:head_end].split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), None)
                if length is not None and len(data) >= head_end + length:
                    break
    except OSError:
        pass
    finally:
        sock.close()
        t.join(5)
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
    return status, data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""


@pytest.mark.parametrize("shape", ["chunked", "aws-chunked-unknown-length"])
def test_over_max_spool_size_is_413_xml_and_nothing_left(small_spool_daemon, key_prefix, shape):
    data = os.urandom(1024 * 1024 + 1)
    headers, body, _ = shape_request(shape, data)
    hostport = small_spool_daemon.endpoint.split("://", 1)[1]
    head = (f"PUT /small/{key_prefix}too-big HTTP/1.1\r\nHost: {hostport}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode()
    count_op("raw-socket")
    status, xml = _send_all_then_read(small_spool_daemon.endpoint, head, body)
    assert status == 413, (status, xml[:500])
    err = parse_error(xml)
    assert err.code == "EntityTooLarge", xml
    assert [r for r in small_spool_daemon.recorder.snapshot() if key_prefix in r.target] == []
    deadline = time.monotonic() + 5
    while open_spool_fds(small_spool_daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spool_files(small_spool_daemon) == [] and open_spool_fds(small_spool_daemon) == []


def test_under_max_spool_size_is_sent_with_length(small_spool_daemon, key_prefix):
    data = os.urandom(1024 * 1024)  # exactly the limit
    resp = put(small_spool_daemon.endpoint, f"/small/{key_prefix}fits", "chunked", data)
    assert resp.status == 200, resp.body
    (req,) = [r for r in small_spool_daemon.recorder.snapshot() if key_prefix in r.target]
    assert_clean([req])
    assert req.body == data and req.header("content-length") == str(len(data))
    assert spool_files(small_spool_daemon) == [] and open_spool_fds(small_spool_daemon) == []
    # A Content-Length upload is streamed, not spooled: the spool limit does not apply to it.
    big = os.urandom(2 * 1024 * 1024)
    resp = put(small_spool_daemon.endpoint, f"/small/{key_prefix}streamed", "content-length", big)
    assert resp.status == 200, resp.body


# -- a real SDK's aws-chunked body ---------------------------------------------------------------------------------


@pytest.fixture
def boto3_trailer_checksums(monkeypatch):
    """Make botocore send its aws-chunked body with a CRC32 trailer over plain HTTP, as it does over HTTPS
    (botocore only uses trailers over TLS: httpchecksum.resolve_request_checksum_algorithm)."""
    import botocore.httpchecksum as hc

    original = hc.resolve_request_checksum_algorithm

    def forced(request, operation_model, params):
        original(request, operation_model, params)
        algorithm = request["context"].get("checksum", {}).get("request_algorithm")
        if isinstance(algorithm, dict) and operation_model.has_streaming_input:
            algorithm["in"] = "trailer"

    monkeypatch.setattr(hc, "resolve_request_checksum_algorithm", forced)


def test_boto3_aws_chunked_trailer_unwrapped(bodies_daemon, rec_unwrap, moto_s3, key_prefix, boto3_trailer_checksums):
    s3 = count_boto3_calls(unsigned_s3(bodies_daemon.endpoint))
    data = os.urandom(100_000 + 5)
    s3.put_object(Bucket="rec-unwrap", Key=key_prefix + "sdk", Body=data)
    req = only(rec_unwrap, key_prefix + "sdk")
    assert_clean([req])
    assert req.body == data and req.header("content-length") == str(len(data))
    # Streamed (issue 21): presignd checked the trailer, but it came after the head, so no checksum goes upstream.
    assert req.header("x-amz-checksum-crc32") is None and req.header("x-amz-sdk-checksum-algorithm") is None
    assert req.header("x-amz-trailer") is None and "aws-chunked" not in (req.header("content-encoding") or "")
    # And through the unwrap-to-moto mount: reads back identical.
    s3.put_object(Bucket=UNWRAP_MOUNT.strip("/"), Key=key_prefix + "sdk", Body=data)
    assert moto_s3.get_object(Bucket=BUCKET, Key=key_prefix + "sdk")["Body"].read() == data


def test_boto3_aws_chunked_trailer_through_session_daemon(s3, moto_s3, key_prefix, boto3_trailer_checksums):
    """Session daemon (custom → forward) to moto: the SDK's aws-chunked body is forwarded and moto decodes it."""
    data = os.urandom(100_000 + 5)
    count_op("boto3")
    s3.put_object(Bucket=BUCKET, Key=key_prefix + "sdk", Body=data)
    assert moto_s3.get_object(Bucket=BUCKET, Key=key_prefix + "sdk")["Body"].read() == data


def test_boto3_aws_chunked_trailer_forwarded(bodies_daemon, rec_forward, key_prefix, boto3_trailer_checksums):
    s3 = count_boto3_calls(unsigned_s3(bodies_daemon.endpoint))
    data = os.urandom(100_000 + 5)
    s3.put_object(Bucket="rec-forward", Key=key_prefix + "sdk", Body=data)
    req = only(rec_forward, key_prefix + "sdk")
    assert_clean([req])
    assert req.header("content-encoding") == "aws-chunked" and req.header("x-amz-trailer") == "x-amz-checksum-crc32"
    assert req.header("x-amz-decoded-content-length") == str(len(data))
    assert req.body.endswith(f"x-amz-checksum-crc32:{crc32_b64(data)}\r\n\r\n".encode())
    # S3 decodes an aws-chunked body only when the payload hash says it is streaming.
    assert req.header("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER", req.headers


def test_aws_chunked_over_spool_limit_streams_instead(small_spool_daemon, key_prefix):
    """An aws-chunked upload whose decoded length is known is streamed (issue 21): the spool limit does not apply,
    and the spool is never touched."""
    data = os.urandom(2 * 1024 * 1024)
    for shape in ("aws-chunked", "aws-chunked-in-chunked"):
        resp = put(small_spool_daemon.endpoint, f"/small/{key_prefix}{shape}", shape, data)
        assert resp.status == 200, resp.body
        (req,) = [r for r in small_spool_daemon.recorder.snapshot() if r.target.endswith(f"{key_prefix}{shape}")]
        assert_clean([req])
        assert req.body == data and req.header("content-length") == str(len(data))
    assert spool_files(small_spool_daemon) == [] and open_spool_fds(small_spool_daemon) == []


