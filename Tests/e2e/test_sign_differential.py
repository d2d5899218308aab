"""Differential test: `presignd sign --json` / `presignd presign --json` against botocore's S3 signers.

For every generated request the expectation is: botocore's S3SigV4Auth, signing the wire URL presignd
produced, computes the same canonical request and signature; and independently the wire path is
`quote(decoded path bytes, safe='/-_.~')` and the wire query is the sorted, re-encoded decoded parameters.
"""
import hashlib
import random
import re
import urllib.parse

import pytest
from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from helpers_sigv4 import ACCESS_KEY, SECRET_KEY, frozen_botocore_clock, run_json

DATE = "20260301T120000Z"
REGION = "auto"
TOKEN = "FwoGZXIvYXdzEB/token+with=special/chars=="
SCRIPTS = ["café", "e\u0301", "日本語", "Ελληνικά", "русский", "עברית", "العربية", "한국어", "😀", "ß", "ﬁ"]
RESERVED = list("+%=&~!*'()$,;:@") + [" ", "?", "#", "[", "]", '"', "<", ">", "\\", "^", "`", "{", "|", "}"]
SAFE_RAW = "!$&'()*+,;=:@~-._"  # left unescaped in some raw client paths (a raw '+' is a literal plus)


def quote(text: str, safe: str) -> str:
    return urllib.parse.quote(text.encode("utf-8"), safe=safe)


def random_key(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.04:
        return "".join(rng.choice("abcdefghij/é ") for _ in range(rng.randint(600, 1000)))[:1000]
    parts = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        if kind < 0.25:
            parts.append(rng.choice(SCRIPTS))
        elif kind < 0.5:
            parts.append("".join(rng.choice(RESERVED) for _ in range(rng.randint(1, 4))))
        elif kind < 0.6:
            parts.append(rng.choice(["//", "/./", "/../", ".", "..", "%20", "%2F", "%", "a b", "+"]))
        else:
            parts.append("".join(rng.choice("abcXYZ019-_.~") for _ in range(rng.randint(1, 8))))
        parts.append(rng.choice(["", "", "/"]))
    key = "".join(parts)
    if rng.random() < 0.15:
        key += "/"
    return key


def raw_client_path(rng: random.Random, decoded_path: str) -> str:
    """A raw path that decodes (once) to decoded_path, encoded the way some client might have."""
    safe = "/" + "".join(c for c in SAFE_RAW if rng.random() < 0.5)
    if "+" in decoded_path:
        safe = safe.replace("+", "")  # keep a literal plus encoded half the time (raw '+' is literal too)
    raw = quote(decoded_path, safe=safe)
    if rng.random() < 0.3:  # lower-case hex from sloppy clients
        raw = re.sub(r"%([0-9A-F]{2})", lambda m: "%" + m.group(1).lower(), raw)
    return raw


def random_query(rng: random.Random):
    """Returns (raw query string, decoded (name, value) list)."""
    params, pieces = [], []
    names = ["prefix", "delimiter", "uploads", "acl", "versionId", "marker", "k", "Param", "Param-3", "p\u00e9"]
    for _ in range(rng.randint(0, 6)):
        name = rng.choice(names)
        if name in ("uploads", "acl") and rng.random() < 0.7:
            params.append((name, ""))
            pieces.append(name)
            continue
        value = rng.choice(["a b", "x+y", "1", "2", "10", "", "é/ü", "a&b=c", "~.-_", "%41", rng.choice(SCRIPTS)])
        params.append((name, value))
        if rng.random() < 0.5:
            pieces.append(urllib.parse.quote_plus(name) + "=" + urllib.parse.quote_plus(value))  # '+' for spaces
        else:
            pieces.append(quote(name, "") + "=" + quote(value, ""))
        if rng.random() < 0.2:
            pieces.append("")  # an empty piece (`a=1&&b=2`)
    return "&".join(pieces), params


def random_headers(rng: random.Random):
    headers = []
    for _ in range(rng.randint(0, 4)):
        name = rng.choice(["x-amz-meta-Color", "X-Amz-Meta-a", "Content-Type", "Range", "Cache-Control", "If-Match",
                           "x-amz-storage-class", "User-Agent"])
        value = rng.choice(["a   b", "a\t\tb", "x \t y  z", "v", "\"quoted   value\"", "bytes=0-9", "MiXeD CaSe"])
        headers.append((name, value))
    if rng.random() < 0.3:
        headers.append(("X-Amz-Meta-Dup", "first"))
        headers.append(("x-amz-meta-dup", "second  one"))
    return headers


def make_cases(count: int, seed: int):
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        bucket = rng.choice(["bucket", "my.bucket", "b-1"])
        key = random_key(rng)
        decoded_path = "/" + bucket + "/" + key
        raw_query, params = random_query(rng)
        host = rng.choice(["s3.example.com", "127.0.0.1:9000", "account.r2.cloudflarestorage.com"])
        scheme = "http" if host.startswith("127.") else "https"
        body = b"" if rng.random() < 0.6 else rng.randbytes(rng.randint(1, 64))
        cases.append(dict(
            id=index, method=rng.choice(["GET", "PUT", "HEAD", "DELETE", "POST"]), scheme=scheme, host=host,
            decoded_path=decoded_path, raw_path=raw_client_path(rng, decoded_path), raw_query=raw_query,
            params=params, headers=random_headers(rng), body=body, token=TOKEN if rng.random() < 0.2 else None))
    return cases


class CapturingS3SigV4Auth(S3SigV4Auth):
    """S3SigV4Auth that remembers the canonical request it signed."""

    def canonical_request(self, request):
        self.captured = super().canonical_request(request)
        return self.captured


def botocore_sign(case, wire_url):
    creds = Credentials(ACCESS_KEY, SECRET_KEY, case["token"])
    request = AWSRequest(method=case["method"], url=wire_url, data=case["body"])
    for name, value in case["headers"]:
        if name.lower() != "user-agent":  # presignd forwards it unsigned; botocore never signs it
            request.headers[name] = value  # HTTPHeaders appends: repeated names are kept in order
    auth = CapturingS3SigV4Auth(creds, "s3", REGION)
    with frozen_botocore_clock(DATE):
        auth.add_auth(request)
    canonical = auth.captured
    signature = request.headers["Authorization"].rsplit("Signature=", 1)[1]
    return canonical, signature


CASES = make_cases(300, seed=20260301)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"sign-{c['id']}")
def test_sign_matches_botocore(case):
    args = ["sign", "--url", f"{case['scheme']}://{case['host']}{case['raw_path']}"
            + (f"?{case['raw_query']}" if case["raw_query"] else ""),
            "--method", case["method"], "--date", DATE, "--region", REGION,
            "--access-key-id", ACCESS_KEY, "--secret-access-key", SECRET_KEY,
            "--payload", hashlib.sha256(case["body"]).hexdigest() if case["body"] else "empty"]
    if case["token"]:
        args += ["--session-token", case["token"]]
    for name, value in case["headers"]:
        args += ["--header", f"{name}: {value}"]
    result = run_json(args)
    wire = urllib.parse.urlsplit(result["wire_url"])

    # Independent expectations: decode once, encode once; query sorted by (encoded name, encoded value).
    assert wire.path == quote(case["decoded_path"], safe="/-_.~")
    expected_query = "&".join(f"{k}={v}" for k, v in sorted(
        (quote(name, "-_.~"), quote(value, "-_.~")) for name, value in case["params"]))
    assert wire.query == expected_query
    assert result["canonical_request"].split("\n")[1] == wire.path
    assert result["canonical_request"].split("\n")[2] == wire.query

    canonical, signature = botocore_sign(case, result["wire_url"])
    assert result["canonical_request"] == canonical
    assert result["signature"] == signature
    assert SECRET_KEY not in str(result)


PRESIGN_CASES = make_cases(50, seed=7)


@pytest.mark.parametrize("case", PRESIGN_CASES, ids=lambda c: f"presign-{c['id']}")
def test_presign_matches_botocore(case):
    bucket, key = case["decoded_path"][1:].split("/", 1)
    method = ["GET", "HEAD", "PUT", "DELETE"][case["id"] % 4]
    expires = [1, 60, 3600, 604800][case["id"] % 4]
    endpoint = f"{case['scheme']}://{case['host']}"
    args = ["presign", f"s3://{bucket}/{key}", "--endpoint", endpoint, "--method", method, "--expires", str(expires),
            "--date", DATE, "--region", REGION, "--access-key-id", ACCESS_KEY, "--secret-access-key", SECRET_KEY]
    overrides = {}
    if case["id"] % 3 == 0:
        overrides["response-content-disposition"] = 'attachment; filename="r\u00e9sum\u00e9 1.pdf"'
        overrides["response-content-type"] = "text/plain; charset=utf-8"
    for name, value in overrides.items():
        args += [f"--{name}", value]
    headers = {}
    if method == "PUT" and case["id"] % 2 == 0:
        headers["Content-Type"] = "image/png"
        args += ["--content-type", "image/png"]
    if case["token"]:
        args += ["--session-token", case["token"]]
    result = run_json(args)
    url = urllib.parse.urlsplit(result["url"])
    assert url.path == quote(case["decoded_path"], safe="/-_.~")
    assert url.query.endswith("&X-Amz-Signature=" + url.query.rsplit("=", 1)[1])
    ours = url.query.rsplit("&X-Amz-Signature=", 1)[1]

    request = AWSRequest(method=method, url=f"{endpoint}{url.path}", headers=headers, params=dict(overrides))
    auth = S3SigV4QueryAuth(Credentials(ACCESS_KEY, SECRET_KEY, case["token"]), "s3", REGION, expires=expires)
    with frozen_botocore_clock(DATE):
        auth.add_auth(request)
    theirs = request.url.rsplit("X-Amz-Signature=", 1)[1]
    assert ours == theirs
    assert result["method"] == method
    assert result["headers"] == headers
    assert SECRET_KEY not in str(result)
