"""VerifyingUpstreamRecorder: a plain-HTTP upstream that records exactly what arrives and re-verifies SigV4.

moto checks the signature but not the payload hash, the region in the scope, or whether every `x-amz-*` header
is signed (docs/TESTING.md). This server records each request (method, raw target, headers in order, body hash)
and recomputes the signature with botocore's `S3SigV4Auth` over exactly what arrived, with the expected
credentials and region and the `x-amz-date` received. Problems are listed per request in `problems`; a request
with no problems was signed the way S3 would accept it.

It also acts as a tiny in-memory object store (PUT stores, GET/HEAD return, DELETE removes, multipart uploads)
so that clients going through presignd get sensible answers. Like S3 it is strict about bodies (issue 21): a body
shorter than its Content-Length (the sender dropped the connection) is recorded with `complete=False` and stores
nothing; an `aws-chunked` body (STREAMING-UNSIGNED-PAYLOAD-TRAILER) is decoded and its trailer checksum checked
(400 BadDigest on a mismatch). `digest_only=True` keeps only each object's SHA-256 and length (`digests`), and no
request bodies, for multi-GiB transfers.

Faults (issue 21): `script` is a list of answers `(status, headers, body)` given, in order, to the next requests
instead of the normal ones (each request is still recorded); `fail_all`, when set, is the answer to every
request. A fault's body may be a list of `(delay_seconds, bytes)` pieces instead: the answer is then chunked and
each piece sent after its delay (S3's slow `200 OK` of CompleteMultipartUpload or CopyObject: the head at once,
whitespace while it works, then the result or an `<Error>`); `sent_pieces` records when each went out.
`clock_offset` makes the recorder's clock run that many seconds ahead of the machine's: signatures are
checked against it (a date more than 15 minutes off gets `403 RequestTimeTooSkewed`, as S3 answers) and its
`Date` response header shows it.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import zlib
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.compat import HTTPHeaders
from botocore.credentials import Credentials

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<cred>[^,\s]+),\s*SignedHeaders=(?P<signed>[^,\s]+),\s*"
    r"Signature=(?P<sig>[0-9a-f]{64})$"
)
MAX_CLOCK_SKEW_SECONDS = 15 * 60


@dataclass
class RecordedRequest:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes
    body_sha256: str
    was_chunked: bool
    problems: list[str] = field(default_factory=list)
    signature: str = ""
    arrived_at: float = 0.0
    complete: bool = True
    body_length: int = 0

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def header_names(self) -> set[str]:
        return {k.lower() for k, _ in self.headers}

    def signed_headers(self) -> list[str]:
        m = _AUTH.match(self.header("authorization") or "")
        return m.group("signed").split(";") if m else []

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def query(self) -> str:
        return self.target.split("?", 1)[1] if "?" in self.target else ""


def _s3_uri_encode(text: str, encode_slash: bool) -> str:
    # SigV4: unreserved characters A-Z a-z 0-9 - _ . ~ stay, everything else %XX (uppercase), UTF-8.
    return urllib.parse.quote(text, safe="" if encode_slash else "/")


def verify_request(
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    access_key_id: str,
    secret_access_key: str,
    region: str,
    now: float | None = None,
    payload_sha256: str | None = None,
) -> tuple[list[str], str]:
    """Check a received request's SigV4 header signature the way S3 would. Returns (problems, signature)."""
    problems: list[str] = []
    lower = [(k.lower(), v) for k, v in headers]
    names = {k for k, _ in lower}

    def get(name: str) -> str | None:
        for k, v in lower:
            if k == name:
                return v
        return None

    auth = get("authorization")
    if auth is None:
        return ["no Authorization header"], ""
    if sum(1 for k, _ in lower if k == "authorization") > 1:
        problems.append("more than one Authorization header")
    m = _AUTH.match(auth)
    if not m:
        return problems + [f"malformed Authorization header: {auth!r}"], ""
    signature = m.group("sig")
    signed = m.group("signed").split(";")

    amz_date = get("x-amz-date")
    if amz_date is None or not re.match(r"^\d{8}T\d{6}Z$", amz_date):
        return problems + [f"missing or malformed x-amz-date: {amz_date!r}"], signature
    cred_parts = m.group("cred").split("/")
    expected_cred = [access_key_id, amz_date[:8], region, "s3", "aws4_request"]
    if cred_parts != expected_cred:
        problems.append(f"credential scope {'/'.join(cred_parts)!r} != expected {'/'.join(expected_cred)!r}")
    signed_at = calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))
    if abs((now if now is not None else time.time()) - signed_at) > MAX_CLOCK_SKEW_SECONDS:
        problems.append(f"x-amz-date {amz_date} is more than 15 minutes off the clock")

    # What S3 requires to be signed.
    if signed != sorted(signed) or any(h != h.lower() for h in signed):
        problems.append(f"SignedHeaders not lowercase and sorted: {signed}")
    for required in ("host", "x-amz-date", "x-amz-content-sha256"):
        if required not in signed:
            problems.append(f"{required} is not signed")
    for name in sorted(names):
        if (name.startswith("x-amz-") or name in ("content-md5",)) and name not in signed:
            problems.append(f"header {name} is sent but not signed")
    for name in signed:
        if name not in names:
            problems.append(f"signed header {name} was not sent")
    if "expect" in signed:
        problems.append("Expect is signed (hop-by-hop; proxies drop or answer it)")

    content_sha = get("x-amz-content-sha256")
    if content_sha is None:
        problems.append("no x-amz-content-sha256 header")
    elif _HEX64.match(content_sha):
        actual = payload_sha256 or hashlib.sha256(body).hexdigest()
        if actual != content_sha:
            problems.append(f"x-amz-content-sha256 {content_sha} != sha256 of the body received {actual}")
    elif content_sha not in (
        "UNSIGNED-PAYLOAD",
        "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
        "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
    ):
        problems.append(f"unexpected x-amz-content-sha256 value {content_sha!r}")

    # The wire target must already be canonical (moto and S3 then agree on what was signed).
    path, _, query = target.partition("?")
    if _s3_uri_encode(urllib.parse.unquote(path), encode_slash=False) != path:
        problems.append(f"path {path!r} is not in canonical (encode-once) form")
    if query:
        for pair in query.split("&"):
            k, _, v = pair.partition("=")
            for part in (k, v):
                if _s3_uri_encode(urllib.parse.unquote(part), encode_slash=True) != part:
                    problems.append(f"query component {part!r} is not canonically encoded")

    # Recompute the signature over exactly what arrived, with botocore.
    class _ReceivedSignedHeaders(S3SigV4Auth):
        def headers_to_sign(self, request):  # only what the sender said it signed
            header_map = HTTPHeaders()
            for k, v in lower:
                if k in signed:
                    header_map[k] = v
            return header_map

    signer = _ReceivedSignedHeaders(Credentials(access_key_id, secret_access_key), "s3", region)
    host = get("host") or "missing-host"
    request = AWSRequest(method=method, url=f"http://{host}{target}", headers=dict(headers), data=body)
    request.context["timestamp"] = amz_date
    canonical_request = signer.canonical_request(request)
    string_to_sign = signer.string_to_sign(request, canonical_request)
    expected = signer.signature(string_to_sign, request)
    if expected != signature:
        problems.append(
            f"signature mismatch: got {signature}, expected {expected}\n--- canonical request ---\n"
            f"{canonical_request}\n---"
        )
    return problems, signature


def _is_aws_chunked(headers) -> bool:
    return ("aws-chunked" in (headers.get("Content-Encoding") or "").lower()
            or (headers.get("x-amz-content-sha256") or "").startswith("STREAMING-"))


_CHECKSUMS = {
    "x-amz-checksum-crc32": lambda data: zlib.crc32(data).to_bytes(4, "big"),
    "x-amz-checksum-sha1": lambda data: hashlib.sha1(data).digest(),
    "x-amz-checksum-sha256": lambda data: hashlib.sha256(data).digest(),
}


def decode_aws_chunked(body: bytes, headers) -> bytes:
    """Decodes an aws-chunked body as S3 does: chunk framing (signatures not checked here), the decoded length,
    and the declared trailer's checksum (CRC32, SHA-1, SHA-256). ValueError says what is wrong."""
    out = bytearray()
    position = 0
    while True:
        end = body.find(b"\r\n", position)
        if end < 0:
            raise ValueError("truncated chunk header")
        size = int(body[position:end].split(b";", 1)[0], 16)
        position = end + 2
        if size == 0:
            break
        out += body[position:position + size]
        if body[position + size:position + size + 2] != b"\r\n":
            raise ValueError("chunk data not followed by CRLF")
        position += size + 2
    trailers = {}
    while True:
        end = body.find(b"\r\n", position)
        if end < 0:
            raise ValueError("truncated trailer")
        line = body[position:end]
        position = end + 2
        if not line:
            break
        name, _, value = line.decode().partition(":")
        trailers[name.strip().lower()] = value.strip()
    if position != len(body):
        raise ValueError("bytes after the trailer")
    declared = headers.get("x-amz-decoded-content-length")
    if declared is not None and int(declared) != len(out):
        raise ValueError(f"decoded length {len(out)} != x-amz-decoded-content-length {declared}")
    trailer = (headers.get("x-amz-trailer") or "").strip().lower()
    if trailer:
        if trailer not in trailers:
            raise ValueError(f"checksum trailer {trailer} missing")
        compute = _CHECKSUMS.get(trailer)
        if compute and base64.b64encode(compute(bytes(out))).decode() != trailers[trailer]:
            raise ValueError(f"checksum {trailer} does not match")
    return bytes(out)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format, *args):  # noqa: A002 - keep pytest output clean
        pass

    def _read_exactly(self, length: int, sink) -> int:
        got = 0
        while got < length:
            piece = self.rfile.read(min(1 << 20, length - got))
            if not piece:
                break
            sink(piece)
            got += len(piece)
        return got

    def _read_body(self, sink) -> tuple[bool, bool]:
        """Feeds the body to `sink`; returns (was_chunked, complete)."""
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            while True:
                size_line = self.rfile.readline()
                if not size_line.endswith(b"\n"):
                    return True, False
                size = int(size_line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while True:
                        line = self.rfile.readline()
                        if line in (b"\r\n", b"\n"):
                            return True, True
                        if line == b"":
                            return True, False
                if self._read_exactly(size, sink) < size:
                    return True, False
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return False, self._read_exactly(length, sink) == length

    def _handle(self) -> None:
        rec = self.server.owner
        with rec.lock:
            rec.heads.append(self.path)
        sha = hashlib.sha256()
        parts: list[bytes] = []
        length = 0

        def sink(piece: bytes) -> None:
            nonlocal length
            sha.update(piece)
            length += len(piece)
            if not rec.digest_only or _is_aws_chunked(self.headers):
                parts.append(piece)
        chunked, complete = self._read_body(sink)
        body = b"".join(parts)
        headers = list(self.headers.items())
        problems, signature = verify_request(
            self.command, self.path, headers, body if not rec.digest_only else b"", rec.access_key_id,
            rec.secret_access_key, rec.region, now=time.time() + rec.clock_offset, payload_sha256=sha.hexdigest())
        request = RecordedRequest(
            method=self.command,
            target=self.path,
            headers=headers,
            body=b"" if rec.digest_only else body,
            body_sha256=sha.hexdigest(),
            was_chunked=chunked,
            problems=problems,
            signature=signature,
            arrived_at=time.monotonic(),
            complete=complete,
            body_length=length,
        )
        with rec.lock:
            rec.requests.append(request)
            fault = None
            if complete:
                fault = rec.script.pop(0) if rec.script else rec.fail_all
        if not complete:  # the sender gave up mid-body: nothing is stored, nobody to answer
            self.close_connection = True
            return
        if fault is not None:
            status, fault_headers, fault_body = fault
            if isinstance(fault_body, list):
                self._send_pieces(status, fault_body, fault_headers)
            else:
                self._send(status, fault_body, fault_headers)
            return
        self._respond(request, body)

    def date_time_string(self, timestamp=None):  # the Date header, on the recorder's clock
        return super().date_time_string(time.time() + self.server.owner.clock_offset)

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def _send_pieces(self, status: int, pieces: list[tuple[float, bytes]], headers: dict[str, str]) -> None:
        rec = self.server.owner
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for delay, piece in pieces:
                time.sleep(delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
                with rec.lock:
                    rec.sent_pieces.append((time.monotonic(), piece))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the peer went away mid-answer
            self.close_connection = True

    def _error(self, status: int, code: str, message: str = "") -> None:
        xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code + "</Code><Message>recorder: "
               + message + "</Message></Error>").encode()
        self._send(status, xml, {"Content-Type": "application/xml"})

    def _respond(self, request: RecordedRequest, body: bytes) -> None:
        rec = self.server.owner
        if request.problems and rec.reject_bad_signatures and any("15 minutes" in p for p in request.problems):
            xml = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>RequestTimeTooSkewed</Code>"
                   b"<Message>The difference between the request time and the current time is too large."
                   b"</Message><MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds></Error>")
            self._send(403, xml, {"Content-Type": "application/xml"})
            return
        if request.problems and rec.reject_bad_signatures:
            self._error(403, "SignatureDoesNotMatch", "; ".join(p.splitlines()[0] for p in request.problems))
            return
        key = urllib.parse.unquote(request.path)
        query = urllib.parse.parse_qs(request.query, keep_blank_values=True)
        if request.method == "PUT" and _is_aws_chunked(self.headers):
            try:
                body = decode_aws_chunked(body, self.headers)
            except ValueError as error:
                code = "BadDigest" if "checksum" in str(error) else "IncompleteBody"
                self._error(400, code, str(error))
                return
        with rec.lock:
            if request.method == "PUT" and "uploadId" in query:
                rec.uploads.setdefault(query["uploadId"][0], {})[int(query["partNumber"][0])] = body
                self._send(200, b"", {"ETag": '"' + hashlib.md5(body).hexdigest() + '"'})
            elif request.method == "PUT" and request.header("x-amz-copy-source"):
                source = "/" + urllib.parse.unquote(request.header("x-amz-copy-source")).split("?")[0].lstrip("/")
                data = rec.objects.get(source)
                if data is None:
                    self._error(404, "NoSuchKey", source)
                    return
                rec.store(key, data, request)
                xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CopyObjectResult><ETag>\""
                       + hashlib.md5(data).hexdigest() + "\"</ETag><LastModified>2026-12-06T00:00:00.000Z"
                       "</LastModified></CopyObjectResult>").encode()
                self._send(200, xml, {"Content-Type": "application/xml"})
            elif request.method == "PUT":
                rec.store(key, body, request)
                self._send(200, b"", {"ETag": '"' + hashlib.md5(body).hexdigest() + '"'})
            elif request.method == "POST" and "uploads" in query:
                upload_id = f"upload-{len(rec.uploads) + 1}-{time.monotonic_ns()}"
                rec.uploads[upload_id] = {}
                xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult><Bucket>"
                       + key.strip("/").split("/")[0] + "</Bucket><Key>" + key.split("/", 2)[-1] + "</Key><UploadId>"
                       + upload_id + "</UploadId></InitiateMultipartUploadResult>").encode()
                self._send(200, xml, {"Content-Type": "application/xml"})
            elif request.method == "POST" and "uploadId" in query:
                parts = rec.uploads.pop(query["uploadId"][0], None)
                if parts is None:
                    self._error(404, "NoSuchUpload")
                    return
                numbers = [int(n) for n in re.findall(rb"<PartNumber>(\d+)</PartNumber>", body)]
                data = b"".join(parts[n] for n in numbers)
                rec.store(key, data, request)
                xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUploadResult><Bucket>"
                       + key.strip("/").split("/")[0] + "</Bucket><Key>" + key.split("/", 2)[-1] + "</Key><ETag>\"" + hashlib.md5(data).hexdigest() + "-" + str(len(numbers))
                       + "\"</ETag></CompleteMultipartUploadResult>").encode()
                self._send(200, xml, {"Content-Type": "application/xml"})
            elif request.method == "DELETE" and "uploadId" in query:
                rec.uploads.pop(query["uploadId"][0], None)
                self._send(204)
            elif request.method == "GET" and key.strip("/").count("/") == 0:  # bucket level: an empty listing
                xml = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult "
                       b"xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>" + key.strip("/").encode()
                       + b"</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>"
                       b"</ListBucketResult>")
                self._send(200, xml, {"Content-Type": "application/xml"})
            elif request.method in ("GET", "HEAD"):
                data = rec.objects.get(key)
                if data is None:
                    self._error(404, "NoSuchKey")
                else:
                    self._send(200, data, {"Content-Type": "application/octet-stream",
                                           "ETag": '"' + hashlib.md5(data).hexdigest() + '"',
                                           "Last-Modified": self.date_time_string(rec.started)})
            elif request.method == "DELETE":
                rec.objects.pop(key, None)
                self._send(204)
            else:
                self._send(200, b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Ok/>",
                           {"Content-Type": "application/xml"})

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: "VerifyingUpstreamRecorder"


class VerifyingUpstreamRecorder:
    def __init__(self, access_key_id: str = "AKIDRECORDEREXAMPLE",
                 secret_access_key: str = "recorder/Secret+Key/EXAMPLEKEY0123456789",
                 region: str = "us-east-1", host: str = "127.0.0.1", reject_bad_signatures: bool = True,
                 digest_only: bool = False) -> None:
        self.access_key_id = access_key_id
        self.secret_access_key = secret_access_key
        self.region = region
        self.host = host
        self.reject_bad_signatures = reject_bad_signatures
        self.script: list[tuple[int, dict[str, str], bytes]] = []
        self.fail_all: tuple[int, dict[str, str], bytes] | None = None
        # (time.monotonic(), piece) of each piece of a fault sent in pieces.
        self.sent_pieces: list[tuple[float, bytes]] = []
        self.clock_offset = 0.0
        self.lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.objects: dict[str, bytes] = {}
        self.digest_only = digest_only
        self.started = time.time()
        # digest_only: key → (sha256 hex, length) of each stored object.
        self.digests: dict[str, tuple[str, int]] = {}
        self.uploads: dict[str, dict[int, bytes]] = {}
        # Targets whose head arrived, as soon as it did (the body may still be on its way).
        self.heads: list[str] = []
        # The x-amz-checksum-* headers each stored object arrived with (what S3 would store).
        self.checksums: dict[str, dict[str, str]] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> "VerifyingUpstreamRecorder":
        self._server = _Server((self.host, 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="recorder", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def store(self, key: str, data: bytes, request: RecordedRequest) -> None:
        """Called with `lock` held."""
        self.checksums[key] = {k.lower(): v for k, v in request.headers if k.lower().startswith("x-amz-checksum-")}
        if self.digest_only:
            self.digests[key] = (request.body_sha256 if not data else hashlib.sha256(data).hexdigest(),
                                 request.body_length if not data else len(data))
        else:
            self.objects[key] = data

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()

    def snapshot(self) -> list[RecordedRequest]:
        with self.lock:
            return list(self.requests)

    def requests_for(self, path_prefix: str) -> list[RecordedRequest]:
        return [r for r in self.snapshot() if r.path.startswith(path_prefix)]
