"""R2 temporary credentials as Cloudflare documents them ("Temporary credentials", "Generate locally
(client-side signing)"), recomputed independently with Python's hmac/hashlib/base64, shared by the tests of
`presignd mint`, `POST /v1/credentials` and `credential_source = "r2_temporary"`:

- the session token is base64("jwt/" + JWT), the JWT HS256-signed with the parent secret;
- the temporary secret is the SHA-256 hex digest of the JWT, the access key id the parent's;
- `R2VerifyingUpstream` checks requests the way R2 would: the token's signature and claims (issuer, account,
  audience, lifetime, bucket, scope, paths), then the SigV4 signature (header or presigned) with the *derived*
  secret."""
from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import threading
import time
import urllib.parse

from credentials_support import LocalServer, QuietHandler
from harness.recorder import verify_request
from presign_verifier import VerificationError
from presign_verifier import verify as verify_presigned

READ_METHODS = {"GET", "HEAD"}
SCOPE_METHODS = {
    "object-read-only": READ_METHODS, "admin-read-only": READ_METHODS,
    "object-read-write": READ_METHODS | {"PUT", "POST", "DELETE"},
    "admin-read-write": READ_METHODS | {"PUT", "POST", "DELETE"},
}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenError(Exception):
    """Why R2 would refuse a session token."""


def decode_session_token(session_token: str, parent_secret: str) -> tuple[str, dict]:
    """(JWT, claims) of a session token whose HS256 signature the parent secret verifies; TokenError otherwise."""
    try:
        token = base64.b64decode(session_token, validate=True).decode()
    except ValueError as error:
        raise TokenError(f"session token is not base64: {error}") from error
    if not token.startswith("jwt/"):
        raise TokenError("session token is not base64('jwt/' + JWT)")
    jwt = token[len("jwt/"):]
    try:
        header_b64, payload_b64, signature_b64 = jwt.split(".")
        header = json.loads(b64url_decode(header_b64))
        claims = json.loads(b64url_decode(payload_b64))
    except ValueError as error:
        raise TokenError(f"malformed JWT: {error}") from error
    if header != {"alg": "HS256", "typ": "JWT"}:
        raise TokenError(f"unexpected JWT header {header}")
    mac = hmac.new(parent_secret.encode(), f"{header_b64}.{payload_b64}".encode(), hashlib.sha256).digest()
    if signature_b64 != b64url(mac):  # unpadded base64url, RFC 7515
        raise TokenError("JWT signature does not verify with the parent secret")
    return jwt, claims


def derived_secret(jwt: str) -> str:
    """The temporary secret access key: the SHA-256 hex digest of the signed JWT."""
    return hashlib.sha256(jwt.encode()).hexdigest()


def check_scope(claims: dict, method: str, bucket: str, key: str) -> str:
    """Why the claims do not cover `method` on bucket/key ('' when they do)."""
    if claims.get("bucket") != bucket:
        return f"token is for bucket {claims.get('bucket')!r}, not {bucket!r}"
    if method not in SCOPE_METHODS.get(claims.get("scope"), set()):
        return f"scope {claims.get('scope')!r} does not allow {method}"
    paths = claims.get("paths")
    if paths and not (any(key.startswith(p) for p in paths.get("prefixPaths", []))
                      or key in paths.get("objectPaths", [])):
        return f"key {key!r} is outside the token's paths {paths}"
    return ""


class R2VerifyingUpstream(LocalServer):
    """A local stand-in for R2 that accepts only temporary credentials minted from one parent key, for one
    account, at this server's own host: token and claims first, then the signature with the derived secret.
    Records each accepted request's token `iat` and each refusal's reason."""

    def __init__(self, parent_key: str, parent_secret: str, account: str, region: str = "auto"):
        self.parent_key, self.parent_secret, self.account, self.region = parent_key, parent_secret, account, region
        self.lock = threading.Lock()
        self.accepted: list[dict] = []  # {"method", "path", "iat", "exp", "presigned"}
        self.refusals: list[str] = []
        self.objects: dict[str, bytes] = {}
        outer = self

        class Handler(QuietHandler):
            def handle_one(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                problem, path = outer.check(self.command, self.path, self.headers, body)
                if problem:
                    with outer.lock:
                        outer.refusals.append(problem)
                    xml = f"<Error><Code>AccessDenied</Code><Message>{problem}</Message></Error>".encode()
                    return self.answer(403, xml)
                with outer.lock:
                    if self.command == "PUT":
                        outer.objects[path] = body
                    stored = outer.objects.get(path, b"object body")
                self.answer(200, b"" if self.command == "PUT" else stored)

            do_GET = do_PUT = do_DELETE = handle_one

            def do_HEAD(self):
                problem, _ = outer.check("HEAD", self.path, self.headers, b"")
                if problem:
                    with outer.lock:
                        outer.refusals.append(problem)
                self.send_response(403 if problem else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        super().__init__(Handler)

    def check(self, method: str, target: str, headers, body: bytes) -> tuple[str, str]:
        """(problem, object path); problem is '' for a request R2 would accept."""
        raw_path, _, raw_query = target.partition("?")
        query = dict(urllib.parse.parse_qsl(raw_query, keep_blank_values=True))
        presigned = "X-Amz-Signature" in query
        token = query.get("X-Amz-Security-Token") if presigned else headers.get("x-amz-security-token")
        if not token:
            return "no session token (R2 temporary credentials need X-Amz-Security-Token)", ""
        try:
            jwt, claims = decode_session_token(token, self.parent_secret)
        except TokenError as error:
            return str(error), ""
        credential = query.get("X-Amz-Credential", "") if presigned else headers.get("authorization", "")
        if f"Credential={self.parent_key}/" not in credential and not credential.startswith(self.parent_key + "/"):
            return "the access key id is not the parent's", ""
        now = time.time()
        if claims.get("iss") != self.parent_key:
            return f"iss {claims.get('iss')!r} is not the parent key", ""
        if claims.get("sub") != self.account:
            return f"sub {claims.get('sub')!r} is not the account", ""
        if claims.get("aud") != headers.get("host"):
            return f"aud {claims.get('aud')!r} is not this endpoint ({headers.get('host')!r})", ""
        if not claims.get("iat", now + 1) <= now + 1 or not now < claims.get("exp", 0):
            return f"token not valid now (iat {claims.get('iat')}, exp {claims.get('exp')}, now {now:.1f})", ""
        path = urllib.parse.unquote(raw_path)
        bucket, _, key = path.lstrip("/").partition("/")
        problem = check_scope(claims, method, bucket, key)
        if problem:
            return problem, ""
        secret = derived_secret(jwt)
        if presigned:
            try:
                verify_presigned(method, target, headers, {self.parent_key: secret}, self.region,
                                 datetime.datetime.now(datetime.timezone.utc))
            except VerificationError as error:
                return f"{error.code}: {error.message}", ""
        else:
            problems, _ = verify_request(method, target, list(headers.items()), body, self.parent_key, secret,
                                         self.region)
            if problems:
                return "; ".join(problems), ""
        with self.lock:
            self.accepted.append({"method": method, "path": path, "iat": claims["iat"], "exp": claims["exp"],
                                  "presigned": presigned})
        return "", path
