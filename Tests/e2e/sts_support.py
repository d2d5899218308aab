"""Shared by the STS e2e tests (issue 22): moto with an assumable role, a TLS wrapper for the test's own servers,
and `StsBroker`, a small STS that verifies what presignd sends and hands out real moto session credentials.

The broker exists because moto's STS cannot serve every case: with authentication on it refuses the unsigned
`AssumeRoleWithWebIdentity`, and it never issues sessions shorter than asked. The broker checks each call the way
STS would (AssumeRole: the SigV4 signature for service `sts`, recomputed with botocore over exactly what arrived;
web identity: the token, unsigned), then asks moto's STS for a session of `lifetime` seconds with the moto user's
key, so the keys presignd receives are ones the strict S3 server accepts (with their session token)."""
from __future__ import annotations

import json
import ssl
import threading
import time
import urllib.parse

import boto3
import botocore.config
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from credentials_support import LocalServer, QuietHandler, iso
from harness.presignd import PresigndConfig, toml_str

ROLE_NAME = "presignd-role"
ROLE_ARN = "arn:aws:iam::123456789012:role/presignd-role"
EXTERNAL_ID = "presignd-e2e-external-id"


def setup_role(iam) -> None:
    """Before moto turns authentication on: a role anyone may assume, allowed everything in S3."""
    trust = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": "*"},
        "Action": ["sts:AssumeRole", "sts:AssumeRoleWithWebIdentity"]}]}
    iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument=json.dumps(trust))
    iam.put_role_policy(RoleName=ROLE_NAME, PolicyName="s3-all", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))


def serve_tls(server: LocalServer, ca) -> None:
    """Wraps a `LocalServer`'s socket in TLS with the test CA's `good` certificate (127.0.0.1, localhost)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(ca.good.cert, ca.good.key)
    server.server.socket = context.wrap_socket(server.server.socket, server_side=True)


def https_endpoint(server: LocalServer) -> str:
    return f"https://127.0.0.1:{server.server.server_address[1]}"


def verify_sts_signature(headers: dict, body: bytes, host: str, key_id: str, secret: str, region: str) -> list[str]:
    """What STS would say about a signed query-API call: scope, signed headers, and the signature recomputed with
    botocore's SigV4Auth for service `sts` over the headers the request says it signed."""
    lower = {k.lower(): v for k, v in headers.items()}
    auth = lower.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return [f"no SigV4 Authorization header: {auth!r}"]
    fields = dict(part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    amz_date = lower.get("x-amz-date", "")
    scope = fields.get("Credential", "").split("/")
    problems = []
    if scope != [key_id, amz_date[:8], region, "sts", "aws4_request"]:
        problems.append(f"credential scope {scope} is not {key_id}/{amz_date[:8]}/{region}/sts/aws4_request")
    signed = fields.get("SignedHeaders", "").split(";")
    for required in ("host", "x-amz-date", "content-type"):
        if required not in signed:
            problems.append(f"{required} is not signed")
    if "x-amz-security-token" in lower and "x-amz-security-token" not in signed:
        problems.append("x-amz-security-token is sent but not signed")

    class Received(SigV4Auth):
        def headers_to_sign(self, request):
            from botocore.compat import HTTPHeaders
            chosen = HTTPHeaders()
            for name in signed:
                chosen[name] = lower.get(name, "")
            return chosen

    signer = Received(Credentials(key_id, secret), "sts", region)
    request = AWSRequest(method="POST", url=f"https://{host}/", headers=dict(headers), data=body)
    request.context["timestamp"] = amz_date
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != fields.get("Signature"):
        problems.append(f"signature mismatch\n--- canonical request ---\n{canonical}\n---")
    return problems


class StsBroker(LocalServer):
    """STS's query API (`POST /`, form body) for AssumeRole (verified against `source_key`) and
    AssumeRoleWithWebIdentity (against `token`), answering after `delay` seconds with a moto session of
    `lifetime` seconds."""

    def __init__(self, moto, source_key: tuple[str, str], region: str, lifetime: int, delay: float = 0.0):
        self.moto, self.source_key, self.region, self.lifetime, self.delay = moto, source_key, region, lifetime, delay
        self.token = ""
        self.lock = threading.Lock()
        self.calls: list[tuple[str, float]] = []  # (action, time answered)
        self.problems: list[str] = []
        self.parameters: list[dict] = []
        outer = self

        class Handler(QuietHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                form = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode(), keep_blank_values=True).items()}
                problem = outer.check(form, dict(self.headers.items()), body)
                with outer.lock:
                    outer.parameters.append(form)
                    if problem:
                        outer.problems.append(problem)
                if problem:
                    self.answer(403, (f"<ErrorResponse><Error><Code>AccessDenied</Code><Message>{problem[:200]}"
                                      "</Message></Error></ErrorResponse>").encode())
                    return
                time.sleep(outer.delay)  # a slow STS: no proxied request may wait for this
                self.answer(200, outer.session(form["Action"], form["RoleSessionName"]))
                with outer.lock:
                    outer.calls.append((form["Action"], time.monotonic()))

        super().__init__(Handler)

    def check(self, form: dict, headers: dict, body: bytes) -> str:
        if form.get("Version") != "2011-06-15" or form.get("RoleArn") != ROLE_ARN:
            return f"unexpected Version or RoleArn: {form}"
        if headers.get("Content-Type") != "application/x-www-form-urlencoded; charset=utf-8":
            return f"Content-Type {headers.get('Content-Type')!r}"
        if form.get("Action") == "AssumeRole":
            if form.get("ExternalId") != EXTERNAL_ID:
                return "wrong ExternalId"
            problems = verify_sts_signature(headers, body, headers.get("Host", ""), *self.source_key, self.region)
            return "; ".join(problems)
        if form.get("Action") == "AssumeRoleWithWebIdentity":
            if any(k.lower() == "authorization" for k in headers):
                return "AssumeRoleWithWebIdentity must not be signed"
            with self.lock:
                expected = self.token
            return "" if form.get("WebIdentityToken") == expected else "wrong web identity token"
        return f"unknown Action {form.get('Action')}"

    def session(self, action: str, session_name: str) -> bytes:
        sts = boto3.client("sts", endpoint_url=self.moto.endpoint, region_name="us-east-1",
                           aws_access_key_id=self.moto.access_key_id,
                           aws_secret_access_key=self.moto.secret_access_key,
                           # STS refuses sessions under 900 s; moto does not: short sessions keep the test short.
                           config=botocore.config.Config(retries={"max_attempts": 1}, proxies={},
                                                         parameter_validation=False))
        issued = sts.assume_role(RoleArn=ROLE_ARN, RoleSessionName=session_name,
                                 DurationSeconds=self.lifetime)["Credentials"]
        expiration = iso(int(time.time()) + self.lifetime)
        return (f'<{action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><{action}Result>'
                f"<Credentials><AccessKeyId>{issued['AccessKeyId']}</AccessKeyId>"
                f"<SecretAccessKey>{issued['SecretAccessKey']}</SecretAccessKey>"
                f"<SessionToken>{issued['SessionToken']}</SessionToken><Expiration>{expiration}</Expiration>"
                f"</Credentials></{action}Result></{action}Response>").encode()

    def count(self, action: str) -> int:
        with self.lock:
            return sum(1 for name, _ in self.calls if name == action)


class UpstreamsConfig(PresigndConfig):
    """The harness config with upstreams given as TOML key/value dicts (each `provider = "custom"` at
    `endpoint`) and one bucket per upstream, named as given."""

    def __init__(self, endpoint: str, upstreams: dict[str, dict], buckets: dict[str, str]):
        super().__init__(upstreams=[], buckets=[], workers=2)
        self.endpoint, self.upstream_tables, self.bucket_map = endpoint, upstreams, buckets

    def render(self) -> str:
        lines = ["[server]", f"listen = {json.dumps(self.listen)}", f"admin_listen = {toml_str(self.admin_listen)}",
                 f"workers = {self.workers}"]
        for name, table in self.upstream_tables.items():
            lines += ["", f"[upstream.{name}]", 'provider = "custom"', f"endpoint = {toml_str(self.endpoint)}",
                      *[f"{key} = {toml_str(value)}" for key, value in table.items()]]
        for bucket, upstream in self.bucket_map.items():
            lines += ["", "[[bucket]]", f"name = {toml_str(bucket)}", f"upstream = {toml_str(upstream)}",
                      'access = "read-write"']
        return "\n".join(lines) + "\n"
