"""Presignd: the daemon under test, run as `presignd run --config FILE`.

`PresigndConfig` renders the TOML config of the contract; `Presignd.start()` launches the binary, reads stderr
until every listener has logged its logfmt line (`msg=Listening listen.address=127.0.0.1:43211`, and
`msg="Admin listening"` for the admin listener), then keeps draining stderr in a background thread into
`logs`. `stop()` sends SIGTERM and requires exit code 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from . import logfmt
from .process import ManagedProcess


def toml_str(value: str) -> str:
    # A JSON string literal is a valid TOML basic string (same escapes; \uXXXX for control characters).
    return json.dumps(value, ensure_ascii=False)


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot render {value!r} as TOML")


@dataclass
class Upstream:
    name: str
    endpoint: str
    access_key_id: str
    secret_access_key: str
    region: str = "us-east-1"
    provider: str = "custom"
    ca_file: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Bucket:
    name: str
    upstream: str
    mount: str | None = None  # default in presignd: "/" + name (path-style)
    access: str = "read-write"
    extra: dict = field(default_factory=dict)


@dataclass
class PresigndConfig:
    upstreams: list[Upstream]
    buckets: list[Bucket]
    listen: list[str] = field(default_factory=lambda: ["127.0.0.1:0"])
    admin_listen: str = "127.0.0.1:0"
    workers: int = 1
    server_extra: dict = field(default_factory=dict)

    def render(self) -> str:
        lines = [
            "# Written by the presignd end-to-end test harness.",
            "[server]",
            f"listen = {_toml_value(self.listen)}",
            f"admin_listen = {toml_str(self.admin_listen)}",
            f"workers = {self.workers}",
        ]
        lines += [f"{k} = {_toml_value(v)}" for k, v in self.server_extra.items()]
        for up in self.upstreams:
            lines += [
                "",
                f"[upstream.{up.name}]",
                f"provider = {toml_str(up.provider)}",
                f"endpoint = {toml_str(up.endpoint)}",
                f"region = {toml_str(up.region)}",
            ]
            if up.ca_file:
                lines.append(f"ca_file = {toml_str(up.ca_file)}")
            lines += [
                f"access_key_id = {toml_str(up.access_key_id)}",
                f"secret_access_key = {toml_str(up.secret_access_key)}",
            ]
            lines += [f"{k} = {_toml_value(v)}" for k, v in up.extra.items()]
        for b in self.buckets:
            lines += ["", "[[bucket]]", f"name = {toml_str(b.name)}", f"upstream = {toml_str(b.upstream)}"]
            if b.mount is not None:
                lines.append(f"mount = {toml_str(b.mount)}")
            lines.append(f"access = {toml_str(b.access)}")
            lines += [f"{k} = {_toml_value(v)}" for k, v in b.extra.items()]
        return "\n".join(lines) + "\n"

    def secrets(self) -> list[str]:
        return [u.secret_access_key for u in self.upstreams]


class Presignd:
    def __init__(self, binary: str, config: PresigndConfig, directory: str,
                 env: dict[str, str] | None = None, name: str = "presignd") -> None:
        self.binary = binary
        self.config = config
        self.dir = directory
        self.name = name
        self.env = env
        self.config_path = os.path.join(directory, f"{name}.toml")
        self.proc: ManagedProcess | None = None
        self.listen_addresses: list[str] = []
        self.admin_address: str | None = None
        self.exit_code: int | None = None
        self._lines: list[str] = []
        self._cond = threading.Condition()
        self._reader: threading.Thread | None = None
        self._stderr_path = os.path.join(directory, f"{name}.stderr.log")
        os.makedirs(directory, exist_ok=True)

    # -- lifecycle ------------------------------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> "Presignd":
        if not os.path.isfile(self.binary) or not os.access(self.binary, os.X_OK):
            raise FileNotFoundError(f"presignd binary not found or not executable: {self.binary}")
        with open(self.config_path, "w") as f:
            f.write(self.config.render())
        env = dict(self.env if self.env is not None else os.environ)
        env.setdefault("SWIFT_BACKTRACE", "enable=no")
        self.proc = ManagedProcess(
            self.name,
            [self.binary, "run", "--config", self.config_path],
            env=env,
            stdout=open(os.path.join(self.dir, f"{self.name}.stdout.log"), "ab"),
            stderr=subprocess.PIPE,
        )
        self._reader = threading.Thread(target=self._drain, name=f"{self.name}-stderr", daemon=True)
        self._reader.start()
        want_admin = bool(self.config.admin_listen)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                self._scan_listening()
                if len(self.listen_addresses) >= len(self.config.listen) and (self.admin_address or not want_admin):
                    return self
                if self.proc.poll() is not None and not self._reader_alive():
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(min(remaining, 0.2))
        code = self.proc.poll()
        logs = self.log_text()
        self.kill()
        state = f"exited with {code}" if code is not None else f"no listening line within {timeout:.0f}s"
        raise RuntimeError(f"presignd did not start ({state}); config {self.config_path}; stderr:\n{logs}")

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, wait for a graceful exit, and require exit code 0."""
        assert self.proc is not None, "presignd was not started"
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"presignd did not exit within {timeout}s of SIGTERM; stderr:\n{self.log_text()}")
        self.exit_code = code
        self._finish()
        assert code == 0, f"presignd exited with {code} after SIGTERM (want 0); stderr:\n{self.log_text()}"
        return code

    def kill(self) -> None:
        if self.proc is not None:
            self.exit_code = self.proc.stop(sig=signal.SIGKILL, timeout=5)
            self._finish()

    def is_running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _finish(self) -> None:
        if self._reader is not None:
            self._reader.join(timeout=5)
        if self.proc is not None:
            self.proc.stop(timeout=1)  # reap, close files, deregister

    def _reader_alive(self) -> bool:
        return self._reader is not None and self._reader.is_alive()

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.popen.stderr is not None
        with open(self._stderr_path, "ab") as copy:
            for raw in self.proc.popen.stderr:
                copy.write(raw)
                copy.flush()
                with self._cond:
                    self._lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def _scan_listening(self) -> None:
        for line in self._lines:
            fields = logfmt.parse(line)
            addr = fields.get("listen.address")
            if not addr:
                continue
            if fields.get("msg") == "Listening" and addr not in self.listen_addresses:
                self.listen_addresses.append(addr)
            elif fields.get("msg") == "Admin listening":
                self.admin_address = addr

    # -- what tests use -------------------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        return f"http://{self.listen_addresses[0]}"

    @property
    def endpoints(self) -> list[str]:
        return [f"http://{a}" for a in self.listen_addresses]

    @property
    def admin_endpoint(self) -> str:
        assert self.admin_address, "admin listener not configured or not reported"
        return f"http://{self.admin_address}"

    @property
    def port(self) -> int:
        return int(self.listen_addresses[0].rsplit(":", 1)[1])

    @property
    def logs(self) -> list[str]:
        with self._cond:
            return list(self._lines)

    def log_text(self) -> str:
        return "\n".join(self.logs)

    def wait_for_log(self, predicate, timeout: float = 5.0) -> str:
        """Wait until a stderr line satisfies `predicate(line)`; return it."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self._lines:
                    if predicate(line):
                        return line
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no matching presignd log line within {timeout}s:\n{self.log_text()}")
                self._cond.wait(min(remaining, 0.2))
