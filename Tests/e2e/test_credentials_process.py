"""`credential_process` (issue 22 §1–2): presignd runs the command for its upstream keys and refreshes them in
the background before they expire. The script below issues new temporary keys (with a session token) on every run,
each valid for a few seconds; the upstream verifies every signature with the key it was signed with, and refuses
expired keys, keys it never issued and a missing or wrong X-Amz-Security-Token. Requests keep succeeding across
refreshes; when the process fails after expiry, /readyz is not ready and requests get a 503 saying why; when it
works again, service returns by itself."""
from __future__ import annotations

import re
import signal
import stat
import sys
import time

import pytest

from conftest import require_presignd_binary
from credentials_support import KeyCheckingUpstream, RefreshingConfig, get, iso, issued, ready
from harness.net import wait_until
from harness.presignd import Presignd
from helpers_sigv4 import run_presignd
from presign_support import api as presign_api

LIFETIME_SECONDS = 4

SCRIPT = r'''#!PYTHON
"""Prints AWS CLI credential_process JSON (version 1): new keys every run, valid LIFETIME seconds."""
import json, os, sys, time
state = sys.argv[1]
if open(os.path.join(state, "mode")).read().strip() != "ok":
    print("credential source is down (test)", file=sys.stderr)
    sys.exit(1)
with open(os.path.join(state, "issued.jsonl"), "a+") as f:
    f.seek(0)
    n = sum(1 for _ in f) + 1
    expires = int(time.time()) + LIFETIME
    key = {"id": "AKIDROTATING%04d" % n, "secret": "rotating-secret-%04d" % n, "token": "rotating-token-%04d" % n,
           "expires": expires}
    f.write(json.dumps(key) + "\n")
print("issued key %d" % n, file=sys.stderr)
print(json.dumps({"Version": 1, "AccessKeyId": key["id"], "SecretAccessKey": key["secret"],
                  "SessionToken": key["token"],
                  "Expiration": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires))}))
'''.replace("PYTHON", sys.executable).replace("LIFETIME", str(LIFETIME_SECONDS))


@pytest.fixture
def setup(tmp_path):
    binary = require_presignd_binary()
    state = tmp_path / "state"
    state.mkdir()
    (state / "mode").write_text("ok")
    (state / "issued.jsonl").write_text("")
    script = tmp_path / "issue-keys"
    script.write_text(SCRIPT)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    upstream = KeyCheckingUpstream(str(state))
    daemon = Presignd(binary, RefreshingConfig("rotating", upstream.endpoint, {
        "credential_process": f"{script} {state}", "credential_process_timeout": "5s"}), str(tmp_path / "presignd"))
    daemon.start()
    yield daemon, upstream, state
    daemon.stop()
    upstream.stop()


def test_requests_keep_succeeding_across_refreshes(setup):
    daemon, upstream, state = setup
    wait_until(lambda: ready(daemon)[0] == 200, timeout=10, what="/readyz ready after the first fetch")
    first = issued(state)[0]
    # Keep requesting until three refreshes have happened after the first key (at least 3 lifetimes' halves).
    statuses, slowest, count = [], 0.0, 0
    deadline = time.monotonic() + 6 * LIFETIME_SECONDS
    while len(issued(state)) < 4 and time.monotonic() < deadline:
        status, body, seconds = get(daemon.endpoint + "/data/object.txt")
        statuses.append((status, body[:200]))
        slowest = max(slowest, seconds)
        count += 1
    # Requests past the last refresh too: they use the newest key.
    for _ in range(20):
        status, body, seconds = get(daemon.endpoint + "/data/object.txt")
        statuses.append((status, body[:200]))
        count += 1
    failures = [s for s in statuses if s[0] != 200]
    assert len(issued(state)) >= 4, f"only {len(issued(state))} keys issued in {6 * LIFETIME_SECONDS}s"
    assert not failures, f"{len(failures)} of {count} requests failed: {failures[:3]}; refusals {upstream.refusals[:3]}"
    used = set(upstream.keys_used)
    assert first["id"] in used and len(used) >= 3, f"keys used: {sorted(used)}"
    assert count >= 20 and upstream.refusals == []
    # No request waited for a refresh (a refresh runs a process; requests only read the current signer).
    assert slowest < 2.0, f"slowest request took {slowest:.2f}s"
    logs = daemon.log_text()
    assert "Credentials refreshed" in logs and "credentials.key=…" in logs
    assert "issued key 1" in logs  # the process's stderr is logged
    for key in issued(state):  # its stdout (secrets, tokens) never is
        assert key["secret"] not in logs and key["token"] not in logs


def test_failing_process_keeps_valid_keys_then_503_then_recovers(setup):
    daemon, upstream, state = setup
    wait_until(lambda: ready(daemon)[0] == 200, timeout=10, what="/readyz ready after the first fetch")
    (state / "mode").write_text("down")
    last = issued(state)[-1]
    # The still-valid keys keep working while refreshes fail.
    if time.time() < last["expires"] - 1:
        status, body, _ = get(daemon.endpoint + "/data/object.txt")
        assert status == 200, body
    # After their expiry: not ready, and a clear 503.
    wait_until(lambda: ready(daemon)[0] == 503, timeout=3 * LIFETIME_SECONDS, what="/readyz not ready after expiry")
    status, text = ready(daemon)
    assert "no valid credentials for upstream 'rotating'" in text and "exited with status 1" in text, text
    status, body, _ = get(daemon.endpoint + "/data/object.txt")
    assert status == 503, body
    xml = body.decode()
    assert "<Code>ServiceUnavailable</Code>" in xml
    assert "no valid credentials for upstream &apos;rotating&apos;" in xml and "exited with status 1" in xml, xml
    assert "credential source is down (test)" in daemon.log_text()  # its stderr, logged
    metrics = get(daemon.admin_endpoint + "/metrics")[1].decode()
    labels = '{upstream="rotating",provider="credential_process"}'
    assert f"presignd_credentials_valid{labels} 0" in metrics
    failures = re.search(r"presignd_credentials_refresh_failures_total" + re.escape(labels) + r" (\d+)", metrics)
    assert failures and int(failures.group(1)) >= 1, metrics
    refusals_before = len(upstream.refusals)
    # Service returns by itself when the process works again.
    (state / "mode").write_text("ok")
    wait_until(lambda: ready(daemon)[0] == 200, timeout=40, what="/readyz ready again after the process recovers")
    status, body, _ = get(daemon.endpoint + "/data/object.txt")
    assert status == 200, body
    assert f"presignd_credentials_valid{labels} 1" in get(daemon.admin_endpoint + "/metrics")[1].decode()
    assert len(upstream.refusals) == refusals_before == 0  # nothing was ever sent with expired keys


def test_credentials_command_fetches_once_and_prints_no_secret(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "mode").write_text("ok")
    (state / "issued.jsonl").write_text("")
    script = tmp_path / "issue-keys"
    script.write_text(SCRIPT)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    config = tmp_path / "presignd.toml"
    config.write_text(RefreshingConfig("rotating", "http://127.0.0.1:9", {"credential_process": f"{script} {state}"})
                      .render())
    code, out, err = run_presignd(["credentials", "--config", str(config)], check=False)
    assert code == 0, err
    key = issued(state)[0]
    assert out.strip() == (f"upstream rotating: provider credential_process (credential_process {script}), "
                           f"key …{key['id'][-4:]}, expires {iso(key['expires'])}")
    assert key["secret"] not in out + err and key["token"] not in out + err
    (state / "mode").write_text("down")
    code, out, err = run_presignd(["credentials", "--config", str(config), "--upstream", "rotating"], check=False)
    assert code == 1 and out.strip() == "upstream rotating: FAILED: credential_process exited with status 1"


def test_reload_keeps_the_fetched_keys_and_the_presign_api_signs_with_them(setup):
    daemon, upstream, state = setup
    wait_until(lambda: ready(daemon)[0] == 200, timeout=10, what="/readyz ready after the first fetch")
    daemon.proc.send_signal(signal.SIGHUP)  # same credential_process: the refresher and its keys stay
    daemon.wait_for_log(lambda line: "msg=Reloaded" in line, timeout=10)
    status, body, _ = get(daemon.endpoint + "/data/object.txt")
    assert status == 200, body  # no gap: workers kept the keys across the reload
    assert ready(daemon)[0] == 200
    status, _, link = presign_api(daemon, {"bucket": "data", "key": "object.txt", "expires": 60}, token=None)
    assert status == 200, link
    current = issued(state)[-1]
    assert f"X-Amz-Credential={current['id']}%2F" in link["url"]
    assert "X-Amz-Security-Token=" + current["token"] in link["url"]
