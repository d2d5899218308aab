"""Subprocesses that are always cleaned up.

Every process is started in its own session (process group), registered in a module-level registry, and killed
(SIGTERM to the group, then SIGKILL) by `stop()`, by the fixtures' finalizers, or at interpreter exit, so a
failing or interrupted test run never leaves moto, nginx or presignd behind.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading
from typing import Sequence

_registry_lock = threading.Lock()
_registry: set["ManagedProcess"] = set()


class ManagedProcess:
    """A subprocess in its own process group, with its output written to a log file."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: str | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stdin=subprocess.DEVNULL,
        stdout=None,
        stderr=None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self._log_file = open(log_path, "ab") if log_path else None
        out = stdout if stdout is not None else (self._log_file or subprocess.DEVNULL)
        err = stderr if stderr is not None else (self._log_file or subprocess.DEVNULL)
        self.popen = subprocess.Popen(
            self.argv,
            stdin=stdin,
            stdout=out,
            stderr=err,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        with _registry_lock:
            _registry.add(self)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def poll(self) -> int | None:
        return self.popen.poll()

    def is_running(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, max_bytes: int = 4000) -> str:
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            return f.read().decode("utf-8", "replace")

    def send_signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            try:
                os.kill(self.popen.pid, sig)
            except ProcessLookupError:
                pass

    def wait(self, timeout: float) -> int:
        return self.popen.wait(timeout=timeout)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int | None:
        """Signal the process, wait, SIGKILL the whole group if it does not exit. Returns the exit code."""
        code: int | None = None
        try:
            if self.popen.poll() is None:
                self.send_signal(sig)
                try:
                    code = self.popen.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    code = None
            else:
                code = self.popen.returncode
        finally:
            self._kill_group()
            if code is None:
                try:
                    self.popen.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            with _registry_lock:
                _registry.discard(self)
            if self._log_file:
                self._log_file.close()
                self._log_file = None
        return code

    def _kill_group(self) -> None:
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def kill_all() -> None:
    """Kill every process still registered (used at interpreter exit)."""
    with _registry_lock:
        procs = list(_registry)
    for proc in procs:
        proc.stop(sig=signal.SIGKILL, timeout=2)


atexit.register(kill_all)
