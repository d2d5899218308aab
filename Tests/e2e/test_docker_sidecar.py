"""The Docker sidecar example (examples/docker-sidecar) agrees with the Dockerfile and with presignd (issue 24).

No Docker engine here: the compose file, its presignd.toml and the Dockerfile are read as files and held against
each other (user, config path, ports, health check, stop signal, secrets), the configuration is checked by the
real `presignd check-config`, and docker-compose (Debian's, which validates without an engine) must accept the
compose file and refuse a broken copy of it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib

import pytest
import yaml

from conftest import REPO, require_presignd_binary

EXAMPLE = os.path.join(REPO, "examples", "docker-sidecar")
COMPOSE_PATH = os.path.join(EXAMPLE, "docker-compose.yml")
CONFIG_PATH = os.path.join(EXAMPLE, "presignd.toml")


def dockerfile_runtime_stage() -> dict[str, list[str]]:
    """The last stage's instructions, continuation lines joined: {"USER": ["10001:10001"], ...}."""
    with open(os.path.join(REPO, "Dockerfile")) as f:
        text = re.sub(r"\\\n", " ", f.read())
    stages: list[dict[str, list[str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            stages.append({})
        if stages:
            stages[-1].setdefault(instruction, []).append(rest.strip())
    return stages[-1]


def healthcheck_of(stage) -> tuple[dict[str, str], list[str]]:
    """HEALTHCHECK's options ({"interval": "10s", ...}) and its exec-form CMD."""
    (line,) = stage["HEALTHCHECK"]
    options = dict(re.findall(r"--([a-z-]+)=(\S+)", line))
    command = json.loads(line[line.index("CMD") + len("CMD"):].strip())
    return options, command


def seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    total = 0.0
    for number, unit in re.findall(r"(\d+)(ms|s|m|h)", duration):
        total += int(number) * units[unit]
    assert total > 0, f"cannot read the duration {duration!r}"
    return total


def host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


@pytest.fixture(scope="module")
def compose():
    with open(COMPOSE_PATH) as f:
        return yaml.safe_load(f)


@pytest.fixture(scope="module")
def presignd_service(compose):
    return compose["services"]["presignd"]


@pytest.fixture(scope="module")
def config():
    with open(CONFIG_PATH, "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def stage():
    return dockerfile_runtime_stage()


def test_runs_as_the_images_user(presignd_service, stage):
    assert presignd_service["user"] == stage["USER"][-1] == "10001:10001"


def test_mounts_the_config_where_the_image_reads_it(presignd_service, stage):
    env = dict(re.findall(r"(\w+)=(\S+)", " ".join(stage["ENV"])))
    mounts = [volume.split(":") for volume in presignd_service["volumes"]]
    (source, target, mode) = next(m for m in mounts if m[1] == env["PRESIGND_CONFIG"])
    assert target == "/etc/presignd/presignd.toml"
    assert mode == "ro"
    assert os.path.realpath(os.path.join(EXAMPLE, source)) == CONFIG_PATH


def test_healthcheck_is_the_images(presignd_service, stage, config):
    options, command = healthcheck_of(stage)
    check = presignd_service["healthcheck"]
    assert check["test"] == ["CMD", *command]
    for name in ("interval", "timeout", "start_period", "retries"):
        assert str(check[name]) == options[name.replace("_", "-")], name
    # It asks the admin listener the configuration opens, on the loopback it shares with presignd.
    admin = command[command.index("--admin") + 1]
    assert admin == config["server"]["admin_listen"]
    assert command[0] == stage["ENTRYPOINT"][-1].strip('[]"').split('"')[0] == "/usr/local/bin/presignd"


def test_listeners_are_the_exposed_ports_on_the_shared_loopback(compose, presignd_service, stage, config):
    exposed = {int(port) for line in stage["EXPOSE"] for port in line.split()}
    listen = config["server"]["listen"]
    admin = config["server"]["admin_listen"]
    for address in [*listen, admin]:
        host, port = host_port(address)
        assert host == "127.0.0.1", f"{address}: in the app's network namespace presignd listens on loopback only"
        assert port in exposed, f"{address}: port not in the Dockerfile's EXPOSE {sorted(exposed)}"
    assert presignd_service["network_mode"] == "service:app"
    assert "app" in compose["services"]
    # network_mode service: cannot publish ports, and the app must not publish presignd's (keys would be reachable).
    assert "ports" not in presignd_service
    published = [str(p) for p in compose["services"]["app"].get("ports", [])]
    assert not [p for p in published if re.search(r"(^|:)(8080|9180)(/tcp)?$", p)], published
    endpoint = compose["services"]["app"]["environment"]["S3_ENDPOINT"]
    assert endpoint == f"http://{listen[0]}"


def test_credentials_come_from_docker_secrets(compose, presignd_service, config):
    files = {key: value for upstream in config["upstream"].values() for key, value in upstream.items()
             if key.endswith("_file")}
    assert {"access_key_id_file", "secret_access_key_file"} <= files.keys()
    assert not {"access_key_id", "secret_access_key"} & {k for u in config["upstream"].values() for k in u}
    for path in files.values():
        assert path.startswith("/run/secrets/"), path
        name = path.removeprefix("/run/secrets/")
        assert name in presignd_service["secrets"], f"{name} is not given to the presignd service"
        source = compose["secrets"][name]["file"]
        assert source.startswith("./secrets/"), source
    # The app gets no secret at all.
    assert "secrets" not in compose["services"]["app"]
    # The example's secrets/ keeps real keys out of git.
    with open(os.path.join(EXAMPLE, "secrets", ".gitignore")) as f:
        assert f.read().split() == ["*", "!.gitignore"]


def test_stops_with_a_drain_that_docker_waits_for(presignd_service, stage, config):
    assert presignd_service["stop_signal"] == stage["STOPSIGNAL"][-1] == "SIGTERM"
    drain = seconds(config["server"].get("shutdown_timeout", "30s"))
    assert seconds(presignd_service["stop_grace_period"]) > drain


def test_read_only_root_keeps_the_spool_directory_writable(presignd_service, config):
    assert presignd_service["read_only"] is True
    spool = config["server"].get("spool_directory", "/var/tmp")
    assert spool in presignd_service["tmpfs"]


def test_builds_from_the_repository_dockerfile(presignd_service):
    context = os.path.realpath(os.path.join(EXAMPLE, presignd_service["build"]["context"]))
    assert context == os.path.realpath(REPO)
    assert os.path.isfile(os.path.join(context, presignd_service["build"].get("dockerfile", "Dockerfile")))


def test_presignd_accepts_the_example_config(tmp_path):
    """check-config on the example, with its Docker secret paths pointed at files of this test."""
    binary = require_presignd_binary()
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "r2_access_key_id").write_text("AKIDSIDECAREXAMPLE")
    (secrets / "r2_secret_access_key").write_text("sidecar-example-secret")
    with open(CONFIG_PATH) as f:
        text = f.read().replace("/run/secrets/", f"{secrets}/")
    path = tmp_path / "presignd.toml"
    path.write_text(text)
    result = subprocess.run([binary, "check-config", "--config", str(path)], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0, result.stderr
    assert "credentials from file" in result.stdout
    assert "sidecar-example-secret" not in result.stdout + result.stderr


def docker_compose_config(path: str) -> subprocess.CompletedProcess:
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose not installed (apt-get install docker-compose; .ci/run installs it)")
    return subprocess.run([exe, "--file", path, "config", "--quiet"], capture_output=True, text=True, timeout=60,
                          cwd=os.path.dirname(path))


def test_docker_compose_accepts_the_file():
    result = docker_compose_config(COMPOSE_PATH)
    assert result.returncode == 0, result.stderr


def test_docker_compose_refuses_a_misspelt_key(tmp_path):
    """The lint above is real: the same file with one key misspelt is refused."""
    with open(COMPOSE_PATH) as f:
        text = f.read()
    assert "network_mode:" in text
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(text.replace("network_mode:", "netwrok_mode:", 1))
    result = docker_compose_config(str(broken))
    assert result.returncode != 0
    assert "netwrok_mode" in result.stderr
