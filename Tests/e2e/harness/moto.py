"""MotoServer: moto's S3 server with request authentication turned on (see docs/TESTING.md).

Authentication is off until turned on: the fixture creates an IAM user with an `s3:*` policy and an access key
through moto's IAM API, then POSTs `0` to `/moto-api/reset-auth`; from then on every request must be signed
with that key. `self_check()` proves it: a signed request passes, an unsigned one and a wrong-secret one fail.

What moto does not check (payload hash, region in scope, unsigned x-amz-* headers, ...) is covered by
`recorder.VerifyingUpstreamRecorder`.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request

import boto3
import botocore.config
import botocore.exceptions

from .net import DIRECT, free_port, http_answers, wait_until
from .process import ManagedProcess

REGION = "us-east-1"


def _moto_env() -> dict[str, str]:
    env = dict(os.environ)
    # Our own switch decides when auth starts; never inherit one.
    env.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        env.pop(name, None)
    return env


class MotoServer:
    def __init__(self, directory: str, host: str = "127.0.0.1", user_actions: tuple[str, ...] = ("s3:*",),
                 before_auth=None) -> None:
        """`user_actions`: what the user's policy allows; `before_auth(iam)`: more IAM set-up (roles) while
        requests are still unauthenticated."""
        self.user_actions = list(user_actions)
        self.before_auth = before_auth
        self.dir = directory
        self.host = host
        self.port = 0
        self.proc: ManagedProcess | None = None
        self.access_key_id = ""
        self.secret_access_key = ""
        os.makedirs(directory, exist_ok=True)

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> "MotoServer":
        exe = os.environ.get("MOTO_SERVER") or shutil.which("moto_server")
        if not exe:
            raise RuntimeError("moto_server not found on PATH (pip install 'moto[server]')")
        self.port = free_port(self.host)
        self.proc = ManagedProcess(
            "moto",
            [exe, "-H", self.host, "-p", str(self.port)],
            log_path=os.path.join(self.dir, "moto.log"),
            env=_moto_env(),
        )
        wait_until(
            lambda: http_answers(f"{self.endpoint}/moto-api/"),
            timeout,
            f"moto_server on {self.endpoint}",
            alive=self.proc.is_running,
            details=self.proc.log_tail,
        )
        self._enable_auth()
        self.self_check()
        return self

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()
            self.proc = None

    # -- authentication -------------------------------------------------------------------------------------

    def _enable_auth(self) -> None:
        iam = boto3.client(
            "iam",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id="AKIDBOOTSTRAP",
            aws_secret_access_key="bootstrap-secret",
            config=botocore.config.Config(retries={"max_attempts": 1}, proxies={}),
        )
        iam.create_user(UserName="presignd-e2e")
        policy = iam.create_policy(
            PolicyName="presignd-e2e-s3-all",
            PolicyDocument=json.dumps(
                {"Version": "2012-10-17",
                 "Statement": [{"Effect": "Allow", "Action": self.user_actions, "Resource": "*"}]}
            ),
        )
        iam.attach_user_policy(UserName="presignd-e2e", PolicyArn=policy["Policy"]["Arn"])
        key = iam.create_access_key(UserName="presignd-e2e")["AccessKey"]
        self.access_key_id = key["AccessKeyId"]
        self.secret_access_key = key["SecretAccessKey"]
        if self.before_auth:
            self.before_auth(iam)
        # text/plain: with a form content type Flask eats the body and moto sees "".
        req = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"}
        )
        with DIRECT.open(req, timeout=10) as resp:
            body = resp.read()
            if resp.status != 200:
                raise RuntimeError(f"moto reset-auth failed: {resp.status} {body!r}")

    def client(self, secret_access_key: str | None = None, endpoint: str | None = None, verify=None):
        """A boto3 S3 client signed with the moto user's key (path-style), directly against moto by default."""
        return boto3.client(
            "s3",
            endpoint_url=endpoint or self.endpoint,
            region_name=REGION,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=secret_access_key if secret_access_key is not None else self.secret_access_key,
            verify=verify,
            config=botocore.config.Config(
                s3={"addressing_style": "path"},
                retries={"max_attempts": 1},
                connect_timeout=5,
                read_timeout=60,
                proxies={},
            ),
        )

    def create_buckets(self, *names: str) -> None:
        s3 = self.client()
        for name in names:
            s3.create_bucket(Bucket=name)

    def self_check(self) -> None:
        """Fail loudly unless moto enforces signatures: signed passes, unsigned and wrong secret fail."""
        bucket = "presignd-e2e-authcheck"
        s3 = self.client()
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="probe", Body=b"probe")
        if s3.get_object(Bucket=bucket, Key="probe")["Body"].read() != b"probe":
            raise RuntimeError("moto self-check: signed GET did not return the object")
        # moto < 5.2.5 signs werkzeug's re-encoded URL instead of the raw target: correctly signed requests for
        # non-ASCII keys, `+`/`=`/`&` in keys or `%2F` in query values then fail. Refuse to test against it.
        odd_key = "probe ü+=&/x"
        try:
            s3.put_object(Bucket=bucket, Key=odd_key, Body=b"odd")
            s3.list_objects_v2(Bucket=bucket, Prefix="probe ü+=&/")
        except botocore.exceptions.ClientError as e:
            raise RuntimeError(
                "moto self-check: a correctly signed request for an encoded key was rejected "
                f"({e.response.get('Error', {}).get('Code')}); moto must be >= 5.2.5 "
                "(pip install 'moto[server]==5.2.5'), older versions verify a re-encoded URL"
            ) from None
        status = self.unsigned_status(f"/{bucket}/probe")
        if status != 403:
            raise RuntimeError(f"moto self-check: unsigned GET answered {status}, expected 403 (auth not enforced)")
        try:
            self.client(secret_access_key="wrong-" + self.secret_access_key).get_object(Bucket=bucket, Key="probe")
        except botocore.exceptions.ClientError as e:
            code = e.response.get("Error", {}).get("Code")
            if code != "SignatureDoesNotMatch":
                raise RuntimeError(f"moto self-check: wrong secret gave {code}, expected SignatureDoesNotMatch")
        else:
            raise RuntimeError("moto self-check: a wrong-secret request succeeded (auth not enforced)")

    def unsigned_status(self, path: str, method: str = "GET") -> int:
        req = urllib.request.Request(f"{self.endpoint}{path}", method=method)
        try:
            with DIRECT.open(req, timeout=10) as resp:
                resp.read()
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code
