"""Small helpers shared by the SigV4 end-to-end tests (presignd binary, frozen botocore clock)."""
import contextlib
import datetime
import json
import os
import pathlib
import subprocess
from unittest import mock

import botocore.auth

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def presignd_bin() -> str:
    """Path of the presignd binary: $PRESIGND_BIN, else .build/debug/presignd under the repo root."""
    path = os.environ.get("PRESIGND_BIN") or str(REPO_ROOT / ".build" / "debug" / "presignd")
    if not os.path.isabs(path):
        path = str(REPO_ROOT / path)
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"presignd binary not found at {path}; build it or set PRESIGND_BIN")
    return path


def run_presignd(args, env_extra=None, check=True):
    """Runs presignd with a clean AWS_* environment; returns (returncode, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(env_extra or {})
    proc = subprocess.run([presignd_bin(), *args], capture_output=True, text=True, env=env, timeout=30)
    if check and proc.returncode != 0:
        raise AssertionError(f"presignd {args!r} exited {proc.returncode}: {proc.stderr}")
    return proc.returncode, proc.stdout, proc.stderr


def run_json(args, env_extra=None):
    _, out, _ = run_presignd([*args, "--json"], env_extra)
    return json.loads(out)


def amz_to_datetime(amz_date: str) -> datetime.datetime:
    return datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")


@contextlib.contextmanager
def frozen_botocore_clock(amz_date: str):
    """botocore's SigV4 signers read the time from botocore.auth.get_current_datetime (botocore 1.3x-1.4x)."""
    frozen = amz_to_datetime(amz_date)
    with mock.patch.object(botocore.auth, "get_current_datetime", lambda *a, **k: frozen):
        yield
