"""The command line: exit codes, --help, and check-config's one-pass file:line:col report."""
import os
import subprocess

import pytest

from conftest import require_presignd_binary as presignd_binary

SUBCOMMANDS = ["run", "check-config", "sign", "presign", "explain", "healthcheck", "cache"]


def run(*args, env=None):
    return subprocess.run([presignd_binary(), *args], capture_output=True, text=True, timeout=30, env=env)


def test_version_prints_and_exits_zero():
    result = run("version")
    assert result.returncode == 0
    assert result.stdout.startswith("presignd ")


@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_every_subcommand_has_help(subcommand):
    result = run(subcommand, "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage: presignd" in result.stdout


@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_unknown_option_is_a_usage_error(subcommand):
    result = run(subcommand, "--no-such-option")
    assert result.returncode == 64, (result.stdout, result.stderr)
    assert "unknown option" in result.stderr


def test_unknown_subcommand_is_a_usage_error():
    assert run("frobnicate").returncode == 64


def test_check_config_reports_three_mistakes_in_one_pass(tmp_path):
    secret = "SECRETVALUE-never-printed"
    path = tmp_path / "bad.toml"
    path.write_text(
        "[server]\n"
        'listen = ["127.0.0.1:8080"]\n'
        'workers = "two"\n'
        "\n"
        "[upstream.r2]\n"
        'provider = "r2"\n'
        'account_id = "0123456789abcdef0123456789abcdef"\n'
        'access_key_id = "AKID"\n'
        f'secret_access_key = "{secret}"\n'
        "\n"
        "[[bucket]]\n"
        'name = "photos"\n'
        'upstream = "r2"\n'
        'acess = "read-only"\n'
        'mount = "photos"\n'
    )
    result = run("check-config", "--config", str(path))
    assert result.returncode == 78
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert errors == [
        f"{path}:3:11: error: 'workers': expected an integer, found a string",
        f"{path}:14:1: error: unknown key 'acess' in [[bucket]]; did you mean 'access'?",
        f"{path}:15:9: error: invalid mount 'photos': a mount must start with '/'",
    ]
    assert secret not in result.stdout + result.stderr


def test_check_config_accepts_the_example(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = run("check-config", "--config", os.path.join(root, "config", "presignd.example.toml"))
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stdout


def test_run_with_a_bad_config_exits_78(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[server]\nlisten = 5\n")
    result = run("run", "--config", str(path))
    assert result.returncode == 78
    assert f"{path}:2:" in result.stderr
