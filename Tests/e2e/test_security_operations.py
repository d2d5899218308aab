"""The operation-aware access policy (issue 19), end to end.

Denied requests never reach a recording upstream (DeleteObjects naming a key outside the prefixes, copies from
an unconfigured bucket or from outside a prefix, bucket administration on a read-write bucket, `POST ?delete`
without delete rights, method overrides, a copy source in the query, dot segments, a listing outside the
prefixes), while the allowed forms of the same operations work against moto with boto3 and the aws CLI. Two
local users on one unix socket get different answers, and the presign API refuses the user the bucket does not
allow. `presignd explain` prints the same decisions.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
import uuid

import pytest
from botocore.exceptions import ClientError

from harness.clients import AwsCli, unsigned_s3
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream
from harness.rawhttp import RawConnection
from harness.s3xml import parse_error

from conftest import BUCKET, require_presignd_binary

NOBODY = 65534
CI_TOKEN = "ci-" + "0123456789abcdef" * 2


class TokenConfig(PresigndConfig):
    """The harness's configuration plus one `[token.ci]` table (the harness renders no token tables)."""

    token_file: str = ""

    def render(self) -> str:
        return super().render() + f'\n[token.ci]\nfile = "{self.token_file}"\n'


@pytest.fixture(scope="module")
def socket_dir():
    # Under /tmp with 0755, so another local user can reach the socket (pytest's own tmp dirs are 0700).
    path = tempfile.mkdtemp(prefix="presignd-ops-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def ops_daemon(moto, nginx_front, test_ca, recorder, socket_dir, tmp_path_factory):
    directory = tmp_path_factory.mktemp("ops")
    token_file = directory / "ci-token"
    token_file.write_text(CI_TOKEN + "\n")
    config = TokenConfig(
        upstreams=[
            Upstream(name="moto", endpoint=nginx_front.endpoint("good"), ca_file=test_ca.ca_file,
                     access_key_id=moto.access_key_id, secret_access_key=moto.secret_access_key),
            Upstream(name="rec", endpoint=recorder.endpoint, region=recorder.region,
                     access_key_id=recorder.access_key_id, secret_access_key=recorder.secret_access_key),
        ],
        buckets=[
            Bucket(BUCKET, "moto", extra={"allowed_prefixes": ["ops/"]}),
            Bucket("rec-ops", "rec", extra={"allowed_prefixes": ["incoming/"]}),
            Bucket("rec-rw", "rec"),
            Bucket("rec-meth", "rec", extra={"allowed_methods": ["GET", "HEAD", "PUT"]}),
            Bucket("rec-users", "rec", extra={"allow": ["uid:0"]}),
            Bucket("rec-tok", "rec", extra={"allow": ["token:ci"]}),
        ],
        listen=["127.0.0.1:0", f"unix:{socket_dir}/proxy.sock"],
        admin_listen=f"unix:{socket_dir}/admin.sock",
        server_extra={"unix_socket_mode": "0666"},
    )
    config.token_file = str(token_file)
    daemon = Presignd(require_presignd_binary(), config, str(directory)).start()
    yield daemon
    alive = daemon.is_running()
    daemon.stop() if alive else daemon.kill()
    assert alive, f"presignd died during the operation tests:\n{daemon.log_text()}"


def _tcp(daemon) -> tuple[str, int]:
    address = next(a for a in daemon.listen_addresses if not a.startswith("unix:"))
    host, port = address.rsplit(":", 1)
    return host, int(port)


def _send(daemon, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b""):
    with RawConnection(*_tcp(daemon)) as conn:
        return conn.request(method, target, headers=headers, body=body)


def _delete_body(*keys: str) -> bytes:
    objects = "".join(f"<Object><Key>{k}</Key></Object>" for k in keys)
    return f'<?xml version="1.0" encoding="UTF-8"?><Delete>{objects}</Delete>'.encode()


def _md5(body: bytes) -> str:
    return base64.b64encode(hashlib.md5(body).digest()).decode()


OUTSIDE_DELETE = _delete_body("incoming/a", "secret/b")

DENIED = [
    ("DeleteObjects with one key outside", "POST", "/rec-ops?delete",
     {"Content-MD5": _md5(OUTSIDE_DELETE)}, OUTSIDE_DELETE, 403, "AccessDenied"),
    ("copy from an unconfigured bucket", "PUT", "/rec-ops/incoming/c", {"x-amz-copy-source": "/nope/x"}, b"",
     403, "AccessDenied"),
    ("copy from outside a prefix", "PUT", "/rec-ops/incoming/c", {"x-amz-copy-source": "/rec-ops/secret/x"}, b"",
     403, "AccessDenied"),
    ("PUT ?policy on read-write", "PUT", "/rec-rw?policy", {}, b"{}", 403, "AccessDenied"),
    ("PUT ?lifecycle on read-write", "PUT", "/rec-rw?lifecycle", {}, b"<LifecycleConfiguration/>", 403,
     "AccessDenied"),
    ("DELETE bucket on read-write", "DELETE", "/rec-rw", {}, b"", 403, "AccessDenied"),
    ("GET ?acl on read-write", "GET", "/rec-rw/k?acl", {}, b"", 403, "AccessDenied"),
    ("POST ?delete without DELETE in allowed_methods", "POST", "/rec-meth?delete", {}, _delete_body("k"), 403,
     "AccessDenied"),
    ("method override", "GET", "/rec-rw/k", {"X-HTTP-Method-Override": "DELETE"}, b"", 400, "InvalidRequest"),
    ("copy source in the query", "PUT", "/rec-rw/k?x-amz-copy-source=/rec-rw/a", {}, b"", 400, "InvalidRequest"),
    ("dot segments", "GET", "/rec-rw/a/../b", {}, b"", 400, "InvalidURI"),
    ("encoded dot segments", "GET", "/rec-rw/a/%2E%2e/b", {}, b"", 400, "InvalidURI"),
    ("SigV2 query authentication", "GET", "/rec-rw/k?AWSAccessKeyId=AKID&Signature=x&Expires=9", {}, b"", 400,
     "AuthorizationQueryParametersError"),
    ("canned ACL header", "PUT", "/rec-rw/k", {"x-amz-acl": "public-read"}, b"x", 403, "AccessDenied"),
    ("listing outside the prefixes", "GET", "/rec-ops?list-type=2&prefix=secret/", {}, b"", 403, "AccessDenied"),
    ("listing without a prefix", "GET", "/rec-ops?list-type=2", {}, b"", 403, "AccessDenied"),
    ("unknown subresource", "GET", "/rec-rw?analytics", {}, b"", 403, "AccessDenied"),
]


@pytest.mark.parametrize("name,method,target,headers,body,status,code", DENIED, ids=[d[0] for d in DENIED])
def test_denied_operations_never_reach_the_upstream(ops_daemon, recorder, name, method, target, headers, body,
                                                    status, code):
    before = len(recorder.snapshot())
    response = _send(ops_daemon, method, target, headers=headers, body=body)
    assert response.status == status, (name, response.status, response.body[:300])
    assert parse_error(response.body).code == code
    assert len(recorder.snapshot()) == before, f"{name}: a denied request reached the upstream"


def test_denials_are_logged_with_operation_and_rule_and_counted(ops_daemon):
    _send(ops_daemon, "PUT", "/rec-rw?policy", body=b"{}")
    line = ops_daemon.wait_for_log(lambda l: "s3.operation=PutBucketPolicy" in l and "policy.rule=" in l)
    assert "principal=addr:127.0.0.1" in line, line
    metrics = _curl_unix(f"{ops_daemon.config.admin_listen[5:]}", "http://localhost/metrics")
    assert 'presignd_denied_total{operation="PutBucketPolicy",reason="action"}' in metrics.stdout, metrics.stdout[-2000:]


def test_a_bearer_token_names_the_principal(ops_daemon, recorder):
    before = len(recorder.snapshot())
    assert _send(ops_daemon, "GET", "/rec-tok/k").status == 403
    assert _send(ops_daemon, "GET", "/rec-tok/k", headers={"Authorization": "Bearer wrong-token"}).status == 403
    assert len(recorder.snapshot()) == before, "a request without the token reached the upstream"
    response = _send(ops_daemon, "GET", "/rec-tok/k", headers={"Authorization": "Bearer " + CI_TOKEN})
    assert response.status != 403 and len(recorder.snapshot()) == before + 1, response.body[:300]
    sent = recorder.snapshot()[-1]
    assert CI_TOKEN not in (sent.header("authorization") or ""), "the bearer token went upstream"
    ops_daemon.wait_for_log(lambda l: "principal=token:ci" in l and "/rec-tok/k" in l)
    assert CI_TOKEN not in ops_daemon.log_text()
    metrics = _curl_unix(f"{ops_daemon.config.admin_listen[5:]}", "http://localhost/metrics")
    assert 'presignd_principal_requests_total{principal="token:ci"}' in metrics.stdout


def test_allowed_delete_objects_keeps_its_content_md5_and_deletes(ops_daemon, recorder):
    body = _delete_body("incoming/a", "incoming/b")
    response = _send(ops_daemon, "POST", "/rec-ops?delete", headers={"Content-MD5": _md5(body)}, body=body)
    assert response.status == 200, response.body[:300]
    sent = [r for r in recorder.snapshot() if r.method == "POST" and r.path == "/rec-ops"][-1]
    assert sent.body == body and sent.header("content-md5") == _md5(body)


def test_allowed_forms_work_against_moto_with_boto3(ops_daemon, moto_s3):
    s3 = unsigned_s3("http://%s:%d" % _tcp(ops_daemon))
    base = f"ops/{uuid.uuid4().hex[:8]}/"
    for name in ("a", "b", "c"):
        s3.put_object(Bucket=BUCKET, Key=base + name, Body=name.encode())
    s3.copy_object(Bucket=BUCKET, Key=base + "d", CopySource={"Bucket": BUCKET, "Key": base + "a"})
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=base)
    assert [o["Key"] for o in listed["Contents"]] == [base + n for n in "abcd"]
    with pytest.raises(ClientError) as denied:
        s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": base + "a"}, {"Key": "elsewhere/x"}]})
    assert denied.value.response["Error"]["Code"] == "AccessDenied"
    assert moto_s3.list_objects_v2(Bucket=BUCKET, Prefix=base)["KeyCount"] == 4, "a denied batch deleted something"
    with pytest.raises(ClientError) as unlisted:
        s3.list_objects_v2(Bucket=BUCKET)
    assert unlisted.value.response["Error"]["Code"] == "AccessDenied"
    with pytest.raises(ClientError) as policy:
        s3.put_bucket_policy(Bucket=BUCKET, Policy="{}")
    assert policy.value.response["Error"]["Code"] == "AccessDenied"
    result = s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": base + "a"}, {"Key": base + "b"}]})
    assert sorted(d["Key"] for d in result["Deleted"]) == [base + "a", base + "b"]
    assert moto_s3.list_objects_v2(Bucket=BUCKET, Prefix=base)["KeyCount"] == 2


def test_allowed_forms_work_against_moto_with_the_aws_cli(ops_daemon, moto_s3, tmp_path):
    cli = AwsCli(str(tmp_path / "awscli"), "http://%s:%d" % _tcp(ops_daemon))
    base = f"ops/{uuid.uuid4().hex[:8]}/"
    local = tmp_path / "files"
    local.mkdir()
    for name in ("x", "y", "z"):
        (local / name).write_bytes(name.encode() * 100)
    cli.run("s3", "cp", "--recursive", str(local), f"s3://{BUCKET}/{base}")
    assert "x" in cli.run("s3", "ls", f"s3://{BUCKET}/{base}").stdout
    outside = cli.run("s3", "ls", f"s3://{BUCKET}/", check=False)
    assert outside.returncode != 0 and "AccessDenied" in outside.stderr
    cli.run("s3", "rm", "--recursive", f"s3://{BUCKET}/{base}")  # DeleteObjects, keys inside the prefix
    assert moto_s3.list_objects_v2(Bucket=BUCKET, Prefix=base)["KeyCount"] == 0


def _curl_unix(socket: str, url: str, *args: str, as_uid: int | None = None) -> subprocess.CompletedProcess:
    argv = ["curl", "-s", "--unix-socket", socket, "-w", "\n%{http_code}", *args, url]
    if as_uid is not None:
        argv = ["setpriv", f"--reuid={as_uid}", f"--regid={as_uid}", "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def _status(result: subprocess.CompletedProcess) -> int:
    return int(result.stdout.rsplit("\n", 1)[-1])


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_two_local_users_on_one_socket_get_different_answers(ops_daemon, recorder, socket_dir):
    sock = f"{socket_dir}/proxy.sock"
    before = len(recorder.snapshot())
    stranger = _curl_unix(sock, "http://localhost/rec-users/k", as_uid=NOBODY)
    assert _status(stranger) == 403 and "AccessDenied" in stranger.stdout, stranger.stdout
    assert len(recorder.snapshot()) == before, "the stranger's request reached the upstream"
    owner = _curl_unix(sock, "http://localhost/rec-users/k")
    assert _status(owner) != 403 and len(recorder.snapshot()) == before + 1, owner.stdout
    # The same user on the other bucket: no allow list, today's behaviour.
    assert _status(_curl_unix(sock, "http://localhost/rec-rw/k", as_uid=NOBODY)) != 403


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_presign_api_refuses_the_user_the_bucket_does_not_allow(ops_daemon, socket_dir):
    admin = f"{socket_dir}/admin.sock"
    request = ["-X", "POST", "-H", "Content-Type: application/json", "--data",
               '{"bucket": "rec-users", "key": "k"}']
    owner = _curl_unix(admin, "http://localhost/v1/presign", *request)
    assert _status(owner) == 200 and '"url"' in owner.stdout, owner.stdout
    stranger = _curl_unix(admin, "http://localhost/v1/presign", *request, as_uid=NOBODY)
    assert _status(stranger) == 403 and "principal" in stranger.stdout, stranger.stdout
    delete = _curl_unix(admin, "http://localhost/v1/presign", "-X", "POST", "-H", "Content-Type: application/json",
                        "--data", '{"bucket": "rec-meth", "key": "k", "method": "DELETE"}')
    assert _status(delete) == 403, delete.stdout


def test_explain_prints_operation_keys_decision_and_rule(ops_daemon, tmp_path):
    body = tmp_path / "delete.xml"
    body.write_bytes(OUTSIDE_DELETE)
    run = subprocess.run(
        [require_presignd_binary(), "explain", "--config", ops_daemon.config_path, "--as", "127.0.0.1",
         "POST", "/rec-ops?delete", "--body", str(body)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 1, run.stderr
    assert "operation: DeleteObjects (s3:DeleteObject)" in run.stdout
    assert "key:       secret/b" in run.stdout and "rule:      allowed_prefixes" in run.stdout
    allowed = subprocess.run(
        [require_presignd_binary(), "explain", "--config", ops_daemon.config_path, "--as", "uid:0", "GET",
         "http://localhost/rec-users/k"], capture_output=True, text=True, timeout=30)
    assert allowed.returncode == 0 and "decision:  allow" in allowed.stdout, allowed.stdout
