"""An independent presigned-URL verifying S3-ish server (stdlib http.server + botocore).

    python3 presign_verifier.py --access-key-id AK --secret-access-key SK [--region R]

Binds 127.0.0.1:0 and prints `PORT <n>` on stdout. Accepts presigned GET/HEAD/PUT/DELETE URLs only: it
recomputes the signature with botocore's S3SigV4QueryAuth stages from the raw path and query it received,
checks X-Amz-Date + X-Amz-Expires against the clock, the credential scope, and that every signed header was
actually sent. Objects live in memory. Failures are 403 with an S3 XML error body.

Like a bucket with a permissive CORS rule, it answers preflight `OPTIONS` without authentication and adds
`Access-Control-Allow-Origin` to every answer (browser upload tests). GET honours a single `Range: bytes=a-b`
(206 + Content-Range), as S3 does.
"""
import argparse
import datetime
import hmac
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

MAX_EXPIRES = 604800
MAX_SKEW = datetime.timedelta(minutes=15)


class VerificationError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def s3_quote(text: str, safe: str) -> str:
    return urllib.parse.quote(text.encode("utf-8"), safe=safe)


def verify(method, raw_target, headers, keys, region, now):
    """Returns the decoded object path if the presigned request is valid; raises VerificationError."""
    raw_path, _, raw_query = raw_target.partition("?")
    pieces = [p for p in raw_query.split("&") if p]
    params = []
    for piece in pieces:
        name, _, value = piece.partition("=")
        params.append((urllib.parse.unquote_plus(name), urllib.parse.unquote_plus(value)))
    auth = {name: value for name, value in params if name.startswith("X-Amz-")}
    for required in ("X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
                     "X-Amz-Signature"):
        if required not in auth:
            raise VerificationError("AccessDenied", f"missing {required}")
    if auth["X-Amz-Algorithm"] != "AWS4-HMAC-SHA256":
        raise VerificationError("AuthorizationQueryParametersError", "bad algorithm")
    akid, date_stamp, scope_region, service, terminator = (auth["X-Amz-Credential"].split("/") + [""] * 5)[:5]
    if akid not in keys:
        raise VerificationError("InvalidAccessKeyId", "unknown access key")
    amz_date = auth["X-Amz-Date"]
    try:
        signed_at = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        expires = int(auth["X-Amz-Expires"])
    except ValueError as error:
        raise VerificationError("AuthorizationQueryParametersError", str(error)) from error
    if (date_stamp, scope_region, service, terminator) != (amz_date[:8], region, "s3", "aws4_request"):
        raise VerificationError("AuthorizationQueryParametersError", "bad credential scope")
    if not 1 <= expires <= MAX_EXPIRES:
        raise VerificationError("AuthorizationQueryParametersError", "X-Amz-Expires out of range")
    if signed_at - now > MAX_SKEW:
        raise VerificationError("AccessDenied", "Request is not valid yet")
    if now > signed_at + datetime.timedelta(seconds=expires):
        raise VerificationError("AccessDenied", "Request has expired")

    signed_names = auth["X-Amz-SignedHeaders"].split(";")
    if "host" not in signed_names:
        raise VerificationError("AuthorizationQueryParametersError", "host must be signed")
    signed_headers = {}
    for name in signed_names:
        values = headers.get_all(name)
        if not values:
            raise VerificationError("AccessDenied", f"signed header {name} was not sent")
        signed_headers[name] = ",".join(values)

    # Rebuild what S3 rebuilds: decode the path once and encode again, decode and re-encode the query (§2.3, §3).
    decoded_path = urllib.parse.unquote(raw_path, errors="strict")
    canonical_path = s3_quote(decoded_path, safe="/-_.~")
    query = "&".join(f"{s3_quote(n, '-_.~')}={s3_quote(v, '-_.~')}" for n, v in params if n != "X-Amz-Signature")
    request = AWSRequest(method=method, url=f"http://{signed_headers['host']}{canonical_path}?{query}")
    for name, value in signed_headers.items():
        request.headers[name] = value
    request.context["timestamp"] = amz_date
    signer = S3SigV4QueryAuth(Credentials(akid, keys[akid]), "s3", region, expires=expires)
    canonical = signer.canonical_request(request)
    string_to_sign = signer.string_to_sign(request, canonical)
    expected = signer.signature(string_to_sign, request)
    if not hmac.compare_digest(expected, auth["X-Amz-Signature"]):
        raise VerificationError("SignatureDoesNotMatch", "The request signature we calculated does not match")
    return decoded_path


def make_handler(keys, region, store, lock):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet
            pass

        def _cors(self):
            if self.headers.get("Origin"):
                self.send_header("Access-Control-Allow-Origin", self.headers["Origin"])
                self.send_header("Vary", "Origin")

        def _reply(self, status, body=b"", content_type="application/xml", head=False, extra=()):
            self.send_response(status)
            self._cors()
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in extra:
                self.send_header(name, value)
            self.end_headers()
            if not head and body:
                self.wfile.write(body)

        def _error(self, error: VerificationError, head=False):
            body = (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{error.code}</Code>"
                    f"<Message>{error.message}</Message></Error>").encode()
            self._reply(403, body, head=head)

        def _handle(self):
            head = self.command == "HEAD"
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            try:
                key = verify(self.command, self.path, self.headers, keys, region,
                             datetime.datetime.now(datetime.timezone.utc))
            except VerificationError as error:
                return self._error(error, head=head)
            except (ValueError, UnicodeDecodeError) as error:
                return self._error(VerificationError("InvalidRequest", str(error)), head=head)
            with lock:
                if self.command == "PUT":
                    store[key] = (body, self.headers.get("Content-Type", "binary/octet-stream"))
                    return self._reply(200, b"", "text/plain")
                if self.command == "DELETE":
                    store.pop(key, None)
                    self.send_response(204)
                    self._cors()
                    self.end_headers()
                    return None
                found = store.get(key)
            if found is None:
                return self._reply(404, b"<Error><Code>NoSuchKey</Code></Error>", head=head)
            data, content_type = found
            query = dict(urllib.parse.parse_qsl(self.path.partition("?")[2]))
            content_type = query.get("response-content-type", content_type)
            extra = [("Content-Disposition", query["response-content-disposition"])] \
                if "response-content-disposition" in query else []
            ranged = self.headers.get("Range", "")
            if ranged.startswith("bytes=") and "," not in ranged and data:
                first, _, last = ranged[6:].partition("-")
                start = int(first) if first else max(0, len(data) - int(last))
                end = min(int(last), len(data) - 1) if first and last else len(data) - 1
                if start <= end:
                    extra.append(("Content-Range", f"bytes {start}-{end}/{len(data)}"))
                    return self._reply(206, data[start:end + 1], content_type, head=head, extra=extra)
            return self._reply(200, data, content_type, head=head, extra=extra)

        do_GET = do_HEAD = do_PUT = do_DELETE = _handle

        def do_OPTIONS(self):  # CORS preflight: never authenticated (as S3 bucket CORS)
            self.send_response(200)
            self._cors()
            self.send_header("Access-Control-Allow-Methods", "GET, HEAD, PUT, DELETE")
            self.send_header("Access-Control-Allow-Headers", self.headers.get("Access-Control-Request-Headers", "*"))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            self._error(VerificationError("MethodNotAllowed", "presigned POST is not supported"))

    return Handler


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--access-key-id", required=True)
    parser.add_argument("--secret-access-key", required=True)
    parser.add_argument("--region", default="us-east-1")
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(
        {args.access_key_id: args.secret_access_key}, args.region, {}, threading.Lock()))
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
