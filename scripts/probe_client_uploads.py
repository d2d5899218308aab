#!/usr/bin/env python3
"""Which S3 client sends what for an upload (issue 21): each real client installed here PUTs 100000 bytes, with
placeholder keys, to a recording upstream over plain HTTP and over HTTPS (nginx with a test CA in front of it), and
the headers that decide presignd's body handling are printed as a Markdown table (docs/CLIENT-UPLOADS.md).

Clients: boto3 (signed with placeholder keys, and UNSIGNED), the aws CLI, minio-go (Tests/e2e/signedchunks) and
the AWS SDK for Go v2 (scripts/probe-gosdkv2), the Go ones built in GOPATH mode against /usr/share/gocode. A client
that is not installed is listed as such. Everything runs on 127.0.0.1.

Usage: scripts/probe_client_uploads.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "e2e"))

import boto3  # noqa: E402
import botocore  # noqa: E402
from botocore.config import Config  # noqa: E402

import chunked_support as cs  # noqa: E402
from harness.nginx import NginxTLSFront  # noqa: E402
from harness.recorder import VerifyingUpstreamRecorder  # noqa: E402
from harness.tls import TestCA  # noqa: E402

BUCKET = "probe-bucket"
DATA = os.urandom(100_000)


def boto3_put(endpoint, ca, signed):
    config = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                    signature_version=None if signed else botocore.UNSIGNED)
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="PLACEHOLDER",
                      aws_secret_access_key="placeholder", config=config, verify=ca)
    s3.put_object(Bucket=BUCKET, Key="probe", Body=DATA)


def awscli_put(endpoint, ca, work):
    path = os.path.join(work, "probe.bin")
    with open(path, "wb") as f:
        f.write(DATA)
    env = dict(os.environ, AWS_ACCESS_KEY_ID="PLACEHOLDER", AWS_SECRET_ACCESS_KEY="placeholder",
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=os.path.join(work, "aws-config"))
    with open(env["AWS_CONFIG_FILE"], "w") as f:
        f.write("[default]\ns3 =\n    addressing_style = path\n")
    args = ["aws", "s3", "cp", path, f"s3://{BUCKET}/probe", "--endpoint-url", endpoint]
    if ca:
        args += ["--ca-bundle", ca]
    subprocess.run(args, env=env, check=True, capture_output=True, timeout=60)


def go_build(directory, work, name):
    binary = os.path.join(work, name)
    env = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode", GOCACHE=os.path.join(work, "gocache"))
    subprocess.run(["go", "build", "-o", binary, "."], cwd=directory, env=env, check=True, timeout=600)
    return binary


def main():
    rows = []
    with tempfile.TemporaryDirectory(prefix="probe-uploads-") as work:
        recorder = VerifyingUpstreamRecorder(reject_bad_signatures=False).start()
        ca = TestCA(os.path.join(work, "ca"))
        front = NginxTLSFront(os.path.join(work, "nginx"), ca, "127.0.0.1", recorder.port).start()
        have_go = shutil.which("go") is not None
        minio = cs.go_client(work) if have_go else None
        gosdk = go_build(os.path.join(ROOT, "scripts", "probe-gosdkv2"), work, "gosdkv2") if have_go else None
        try:
            clients = [
                (f"boto3 {boto3.__version__} (keys)", lambda ep, ca: boto3_put(ep, ca, True)),
                (f"boto3 {boto3.__version__} (UNSIGNED)", lambda ep, ca: boto3_put(ep, ca, False)),
                ("aws CLI (keys)", lambda ep, ca: awscli_put(ep, ca, work)),
                ("minio-go 7 (Debian)", lambda ep, ca: subprocess.run(
                    [minio, "-endpoint", ep.split("://")[1], "-bucket", BUCKET, "-key", "probe", "-size", "100000",
                     "-skip-read"] + (["-secure"] if ca else []),
                    env=dict(os.environ, SSL_CERT_FILE=ca or ""), check=True, capture_output=True, timeout=60)),
                ("aws-sdk-go-v2 1.17 (Debian)", lambda ep, ca: subprocess.run(
                    [gosdk, ep], env=dict(os.environ, SSL_CERT_FILE=ca or ""), check=True, capture_output=True,
                    timeout=60)),
            ]
            for name, put in clients:
                for transport, endpoint, bundle in (("HTTP", recorder.endpoint, None),
                                                    ("HTTPS", front.endpoint("good"), ca.ca_file)):
                    recorder.clear()
                    if "go" in name and not have_go:
                        rows.append((name, transport, "not installed", "", "", ""))
                        continue
                    try:
                        put(endpoint, bundle)
                    except Exception as error:  # noqa: BLE001 - the table says what happened
                        if not [r for r in recorder.snapshot() if r.method == "PUT"]:
                            rows.append((name, transport, f"failed: {str(error).splitlines()[0][:60]}", "", "", ""))
                            continue
                    (req,) = [r for r in recorder.snapshot() if r.method == "PUT"][:1]
                    checksum = ", ".join(f"{k}" for k, _ in req.headers if k.lower().startswith("x-amz-checksum-"))
                    framing = "chunked" if req.was_chunked else f"Content-Length {req.header('content-length')}"
                    rows.append((name, transport, req.header("x-amz-content-sha256") or "(none)",
                                 req.header("content-encoding") or "", req.header("x-amz-trailer") or checksum,
                                 framing))
        finally:
            front.stop()
            recorder.stop()
    print("| client | transport | x-amz-content-sha256 | Content-Encoding | checksum (trailer or header) | framing |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in rows:
        value = row[2] if len(row[2]) != 64 else "SHA-256 of the body"
        print(f"| {row[0]} | {row[1]} | {value} | {row[3]} | {row[4]} | {row[5]} |")


if __name__ == "__main__":
    main()
