"""VerifyingUpstreamRecorder: a plain-HTTP upstream that records exactly what arrives and re-verifies SigV4.

moto checks the signature but not the payload hash, the region in the scope, or whether every `x-amz-*` header
is signed (docs/TESTING.md). This server records each request (method, raw target, headers in order, body hash)
and recomputes the signature with botocore's `S3SigV4Auth` over exactly what arrived, with the expected
credentials and region and the `x-amz-date` received. Problems are listed per request in `problems`; a request
with no problems was signed the way S3 would accept it.

It also acts as a tiny in-memory object store (PUT stores, GET/HEAD return, DELETE removes) so that clients
going through presignd get sensible answers.

Faults (issue 21): `script` is a list of answers `(status, headers, body)` given, in order, to the next requests
instead of the normal ones (each request is still recorded); `fail_all`, when set, is the answer to every
request. `clock_offset` makes the recorder's clock run that many seconds ahead of the machine's: signatures are
checked against it (a date more than 15 minutes off gets `403 RequestTimeTooSkewed`, as S3 answers) and its
`Date` response header shows it.
"""

from __future__ import annotations

import calendar
import hashlib
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
        actual = hashlib.sha256(body).hexdigest()
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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format, *args):  # noqa: A002 - keep pytest output clean
        pass

    def _read_body(self) -> tuple[bytes, bool]:
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            chunks = []
            while True:
                size_line = self.rfile.readline()
                size = int(size_line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks), True
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return (self.rfile.read(length) if length else b""), False

    def _handle(self) -> None:
        rec = self.server.owner
        body, chunked = self._read_body()
        headers = list(self.headers.items())
        problems, signature = verify_request(
            self.command, self.path, headers, body, rec.access_key_id, rec.secret_access_key, rec.region,
            now=time.time() + rec.clock_offset,
        )
        request = RecordedRequest(
            method=self.command,
            target=self.path,
            headers=headers,
            body=body,
            body_sha256=hashlib.sha256(body).hexdigest(),
            was_chunked=chunked,
            problems=problems,
            signature=signature,
            arrived_at=time.monotonic(),
        )
        with rec.lock:
            rec.requests.append(request)
            fault = rec.script.pop(0) if rec.script else rec.fail_all
        if fault is not None:
            status, fault_headers, fault_body = fault
            self._send(status, fault_body, fault_headers)
            return
        self._respond(request)

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

    def _respond(self, request: RecordedRequest) -> None:
        rec = self.server.owner
        if request.problems and rec.reject_bad_signatures and any("15 minutes" in p for p in request.problems):
            xml = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>RequestTimeTooSkewed</Code>"
                   b"<Message>The difference between the request time and the current time is too large."
                   b"</Message><MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds></Error>")
            self._send(403, xml, {"Content-Type": "application/xml"})
            return
        if request.problems and rec.reject_bad_signatures:
            xml = (
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>"
                "<Message>recorder: " + "; ".join(p.splitlines()[0] for p in request.problems) + "</Message></Error>"
            ).encode()
            self._send(403, xml, {"Content-Type": "application/xml"})
            return
        key = urllib.parse.unquote(request.path)
        with rec.lock:
            if request.method == "PUT":
                rec.objects[key] = request.body
                self._send(200, b"", {"ETag": '"' + hashlib.md5(request.body).hexdigest() + '"'})
            elif request.method == "GET" and key.strip("/").count("/") == 0:  # bucket level: an empty listing
                xml = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult "
                       b"xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>" + key.strip("/").encode()
                       + b"</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>"
                       b"</ListBucketResult>")
                self._send(200, xml, {"Content-Type": "application/xml"})
            elif request.method in ("GET", "HEAD"):
                data = rec.objects.get(key)
                if data is None:
                    xml = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code></Error>"
                    self._send(404, xml, {"Content-Type": "application/xml"})
                else:
                    self._send(200, data, {"Content-Type": "application/octet-stream",
                                           "ETag": '"' + hashlib.md5(data).hexdigest() + '"'})
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
                 region: str = "us-east-1", host: str = "127.0.0.1", reject_bad_signatures: bool = True) -> None:
        self.access_key_id = access_key_id
        self.secret_access_key = secret_access_key
        self.region = region
        self.host = host
        self.reject_bad_signatures = reject_bad_signatures
        self.script: list[tuple[int, dict[str, str], bytes]] = []
        self.fail_all: tuple[int, dict[str, str], bytes] | None = None
        self.clock_offset = 0.0
        self.lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.objects: dict[str, bytes] = {}
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

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()

    def snapshot(self) -> list[RecordedRequest]:
        with self.lock:
            return list(self.requests)

    def requests_for(self, path_prefix: str) -> list[RecordedRequest]:
        return [r for r in self.snapshot() if r.path.startswith(path_prefix)]
