"""`presignd presign` and `presignd sign` with --config/--upstream (issues 2 and 7): credentials, region and
endpoint from the file, the presign API's bucket policy, exit 64 naming the field, exit 78 on config errors.
Links are fetched from the independent botocore-based verifier (presign_verifier.py)."""
from __future__ import annotations

import json
import os
import re
import uuid

import pytest

from harness.presignd import Upstream
from helpers_sigv4 import ACCESS_KEY, SECRET_KEY, run_presignd
from presign_support import REGION, Verifier, http, links_config


@pytest.fixture(scope="module")
def verifier():
    server = Verifier()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def config_path(verifier, tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("presign-cli"))
    path = os.path.join(directory, "presignd.toml")
    with open(path, "w") as f:
        f.write(links_config(verifier, directory).render())
    return path


def presign(config_path, *args):
    code, out, err = run_presignd(["presign", "--config", config_path, *args, "--json"], check=False)
    return code, (json.loads(out) if code == 0 else None), err


def test_put_and_get_links_from_config(config_path):
    key, data = f"cli/{uuid.uuid4().hex}.txt", b"from the cli"
    code, put, err = presign(config_path, f"s3://links/{key}", "--method", "PUT", "--content-type", "text/plain",
                             "--expires", "5m")
    assert code == 0, err
    assert put["headers"] == {"Content-Type": "text/plain"} and put["expires_in"] == 300
    assert http(put["url"], "PUT", data, {"Content-Type": "text/csv"})[0] == 403
    assert http(put["url"], "PUT", data, {"Content-Type": "text/plain"})[0] == 200
    code, get, err = presign(config_path, f"s3://links/{key}", "--response-content-disposition", "attachment")
    assert code == 0, err
    status, headers, body = http(get["url"])
    assert (status, body) == (200, data) and headers["Content-Disposition"] == "attachment"
    code, delete, _ = presign(config_path, f"s3://links/{key}", "--method", "DELETE")
    assert http(delete["url"], "DELETE")[0] == 204


def test_url_form_with_config(config_path, verifier):
    code, link, err = presign(config_path, "--url", f"{verifier.endpoint}/links/some%20key?response-content-type=a%2Fb")
    assert code == 0, err
    assert link["url"].startswith(f"{verifier.endpoint}/links/some%20key?") and "response-content-type=a%2Fb" in link["url"]


@pytest.mark.parametrize("args, named", [
    (["s3://nope/k"], "bucket"),
    (["s3://limited/private/k"], "key"),
    (["s3://limited/public/k", "--expires", "2h"], "--expires"),
    (["s3://links/k", "--expires", "8d"], "--expires"),
    (["s3://ro/k", "--method", "PUT"], "--method"),
    (["s3://limited/public/k", "--method", "DELETE"], "--method"),
    (["s3://links/k", "--content-type", "text/plain"], "--content-type"),
    (["s3://limited/public/k", "--method", "PUT"], "--content-length"),
    (["s3://limited/public/k", "--method", "PUT", "--content-length", "2048"], "--content-length"),
    (["s3://links/k", "--method", "PUT", "--response-content-type", "x"], "--response-content-type"),
    (["s3://links/k", "--access-key-id", "AK"], "--access-key-id"),
])
def test_policy_refusals_exit_64_naming_the_field(config_path, args, named):
    code, _, err = presign(config_path, *args)
    assert code == 64, err
    assert named in err.splitlines()[0], err


def test_config_errors_exit_78_with_position(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[server]\nlisten = "127.0.0.1:0"\nworkerz = 2\n\n[[bucket]]\nname = "b"\n')
    code, _, err = run_presignd(["presign", "s3://b/k", "--config", str(path)], check=False)
    assert code == 78
    assert re.search(rf"{re.escape(str(path))}:3:1: error: .*workerz", err), err
    code, _, err = run_presignd(["sign", "--url", "/b/k", "--config", str(path)], check=False)
    assert code == 78 and f"{path}:3:1" in err


def test_sign_with_config_matches_flags(config_path, verifier):
    common = ["--method", "PUT", "--header", "Content-Type: text/plain", "--date", "20260301T000000Z", "--json"]
    _, from_config, _ = run_presignd(["sign", "--config", config_path, "--url", "/links/a b.txt", *common])
    _, from_flags, _ = run_presignd([
        "sign", "--url", f"{verifier.endpoint}/links/a b.txt", "--region", REGION, "--access-key-id", ACCESS_KEY,
        "--secret-access-key", SECRET_KEY, *common])
    config_json, flags_json = json.loads(from_config), json.loads(from_flags)
    assert config_json == flags_json
    assert config_json["wire_url"] == f"{verifier.endpoint}/links/a%20b.txt"


def test_upstream_chooses_between_several(verifier, tmp_path):
    config = links_config(verifier, str(tmp_path))
    config.upstreams.append(Upstream(name="other", endpoint="http://127.0.0.2:9", region="eu-west-1",
                                     access_key_id="OTHERKEY", secret_access_key="other-secret"))
    path = tmp_path / "two.toml"
    path.write_text(config.render())
    code, _, err = run_presignd(["sign", "--config", str(path), "--url", "/x/y"], check=False)
    assert code == 64 and "--upstream" in err
    _, out, _ = run_presignd(["sign", "--config", str(path), "--upstream", "other", "--url", "/x/y", "--json"])
    assert "Credential=OTHERKEY/" in json.loads(out)["authorization"] and "/eu-west-1/s3/" in out
    # The URL's host picks the upstream when it matches one endpoint.
    _, out, _ = run_presignd(["sign", "--config", str(path), "--url", f"{verifier.endpoint}/x/y", "--json"])
    assert f"Credential={ACCESS_KEY}/" in json.loads(out)["authorization"]
    # presign finds the bucket's upstream by itself, and refuses a contradicting --upstream.
    code, link, err = presign(str(path), "s3://links/k")
    assert code == 0 and link["url"].startswith(verifier.endpoint), err
    code, _, err = presign(str(path), "s3://links/k", "--upstream", "other")
    assert code == 64 and "--upstream" in err
    code, _, err = run_presignd(["sign", "--config", str(path), "--upstream", "nope", "--url", "/x"], check=False)
    assert code == 64 and "nope" in err
