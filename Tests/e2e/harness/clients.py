"""The unsigned clients users point at presignd: boto3 (UNSIGNED), awscli (--no-sign-request) and curl.

Client processes get an environment with no AWS credentials, no proxies and an isolated AWS config, so a test
can only pass if presignd did the signing.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

import boto3
import botocore
import botocore.config

_STRIPPED_ENV = (
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy",
)


def client_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _STRIPPED_ENV}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost,::1"
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    env.update(extra or {})
    return env


def unsigned_s3(endpoint: str, **config_overrides):
    """boto3 S3 client that sends unsigned, path-style requests and never retries."""
    cfg = dict(
        signature_version=botocore.UNSIGNED,
        s3={"addressing_style": "path"},
        retries={"max_attempts": 1, "mode": "standard"},
        connect_timeout=5,
        read_timeout=60,
        proxies={},
    )
    cfg.update(config_overrides)
    session = boto3.session.Session(
        aws_access_key_id=None, aws_secret_access_key=None, region_name="us-east-1"
    )
    return session.client("s3", endpoint_url=endpoint, config=botocore.config.Config(**cfg))


class AwsCli:
    """`aws` with --no-sign-request against presignd, in an isolated config with path-style addressing."""

    def __init__(self, directory: str, endpoint: str) -> None:
        self.endpoint = endpoint
        os.makedirs(directory, exist_ok=True)
        self.config_file = os.path.join(directory, "aws-config")
        with open(self.config_file, "w") as f:
            f.write("[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n")
        self.env = client_env({
            "AWS_CONFIG_FILE": self.config_file,
            "AWS_SHARED_CREDENTIALS_FILE": os.path.join(directory, "no-credentials"),
            "AWS_RETRY_MODE": "standard",
            "AWS_MAX_ATTEMPTS": "1",
            "AWS_PAGER": "",
        })

    def run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        argv = ["aws", *args, "--no-sign-request", "--endpoint-url", self.endpoint]
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(argv)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
            )
        return proc


@dataclass
class CurlResult:
    status: int
    headers: dict[str, str]  # last response's headers, lowercased names
    all_head_lines: list[str]  # every status and header line (including interim 100 Continue)
    body: bytes
    exit_code: int
    stderr: str

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def curl(*args: str, input: bytes | None = None, timeout: float = 60, workdir: str | None = None) -> CurlResult:
    """Run curl; return the final status, headers and body. Never fails on HTTP errors (no -f).

    Uploads: pass `-H "Content-Type: application/octet-stream"` with `--data-binary`; curl's default
    `application/x-www-form-urlencoded` makes moto (Flask) parse the body as a form and store an empty object.
    """
    import tempfile

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        body_path, head_path = os.path.join(tmp, "body"), os.path.join(tmp, "head")
        argv = ["curl", "-sS", "--noproxy", "*", "--max-time", str(int(timeout)),
                "-o", body_path, "-D", head_path, "-w", "%{http_code}", *args]
        proc = subprocess.run(argv, input=input, capture_output=True, timeout=timeout + 10, env=client_env())
        status_text = proc.stdout.decode().strip()
        body = open(body_path, "rb").read() if os.path.exists(body_path) else b""
        head_lines = (open(head_path, "rb").read().decode("latin-1").splitlines()
                      if os.path.exists(head_path) else [])
    headers: dict[str, str] = {}
    for line in head_lines:
        if line.startswith("HTTP/"):
            headers = {}
        elif ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if "-I" in args or "--head" in args:
        body = b""  # with -I curl writes the head to the -o file too; a HEAD response has no body to compare
    return CurlResult(
        status=int(status_text) if status_text.isdigit() else 0,
        headers=headers,
        all_head_lines=[line for line in head_lines if line],
        body=body,
        exit_code=proc.returncode,
        stderr=proc.stderr.decode("utf-8", "replace"),
    )
