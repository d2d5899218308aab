"""Loopback ports and readiness waits."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from typing import Callable


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago on `host` (the kernel's pick for port 0)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_until(predicate: Callable[[], bool], timeout: float, what: str, interval: float = 0.05,
               alive: Callable[[], bool] | None = None, details: Callable[[], str] | None = None) -> None:
    """Poll `predicate` until true; fail after `timeout` or as soon as `alive()` turns false."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if alive is not None and not alive():
            extra = details() if details else ""
            raise RuntimeError(f"{what}: process exited before it was ready\n{extra}")
        if time.monotonic() > deadline:
            extra = details() if details else ""
            raise TimeoutError(f"{what}: not ready after {timeout:.0f}s\n{extra}")
        time.sleep(interval)


def port_accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


# Never route test traffic through a proxy from the environment.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_answers(url: str) -> bool:
    """True if the URL answers HTTP at all (any status)."""
    try:
        with DIRECT.open(url, timeout=2) as resp:
            resp.read()
        return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
