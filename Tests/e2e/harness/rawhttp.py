"""Raw-socket HTTP/1.1 for security and fault tests: send exact bytes, read exactly one response, see closes.

`RawConnection` keeps one TCP connection and a receive buffer, so a test can send a malformed request, read the
answer, then send the next request on the same connection and check it is parsed correctly (or that the daemon
closed).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field


@dataclass
class RawResponse:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    complete: bool = True  # False: the connection ended before the framed body did
    raw_head: bytes = b""
    interim: list[int] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    @property
    def closes(self) -> bool:
        return (self.header("connection") or "").lower() == "close"


class ConnectionClosed(Exception):
    pass


class RawConnection:
    def __init__(self, host: str, port: int, timeout: float = 10.0, source: str | None = None) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.buffer = b""
        self.eof = False

    def __enter__(self) -> "RawConnection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def abort(self) -> None:
        """Close with a TCP reset (SO_LINGER 0), like a client process that crashed."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        except OSError:
            pass
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self, deadline: float) -> bool:
        if self.eof:
            return False
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        except socket.timeout:
            raise TimeoutError("no bytes from the peer in time") from None
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True

    def _line(self, deadline: float) -> bytes:
        while b"\r\n" not in self.buffer:
            if not self._fill(deadline):
                raise ConnectionClosed(f"closed before a full line (have {self.buffer[:200]!r})")
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def read_response(self, method: str = "GET", timeout: float = 10.0) -> RawResponse:
        """One response (skipping 1xx interim heads). Raises ConnectionClosed if none starts."""
        deadline = time.monotonic() + timeout
        interim: list[int] = []
        while True:
            status_line = self._line(deadline)
            parts = status_line.decode("latin-1").split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/"):
                raise AssertionError(f"not a status line: {status_line!r}")
            status = int(parts[1])
            headers: list[tuple[str, str]] = []
            raw_head = status_line + b"\r\n"
            while True:
                line = self._line(deadline)
                raw_head += line + b"\r\n"
                if not line:
                    break
                name, _, value = line.decode("latin-1").partition(":")
                headers.append((name.strip(), value.strip()))
            if 100 <= status < 200:
                interim.append(status)
                continue
            break
        response = RawResponse(status, parts[2] if len(parts) > 2 else "", headers, b"", raw_head=raw_head,
                               interim=interim)
        te = (response.header("transfer-encoding") or "").lower()
        length = response.header("content-length")
        if method == "HEAD" or status in (204, 304):
            return response
        if "chunked" in te:
            body = b""
            try:
                while True:
                    size = int(self._line(deadline).split(b";", 1)[0], 16)
                    if size == 0:
                        while self._line(deadline):
                            pass
                        break
                    while len(self.buffer) < size + 2:
                        if not self._fill(deadline):
                            raise ConnectionClosed("closed inside a chunk")
                    body += self.buffer[:size]
                    self.buffer = self.buffer[size + 2:]
            except ConnectionClosed:
                response.complete = False
            response.body = body
        elif length is not None:
            want = int(length)
            while len(self.buffer) < want:
                if not self._fill(deadline):
                    response.complete = False
                    break
            response.body, self.buffer = self.buffer[:want], self.buffer[want:]
        else:  # until close
            while self._fill(deadline):
                pass
            response.body, self.buffer = self.buffer, b""
        return response

    def closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True when the peer closes (EOF or reset) within `timeout` without sending anything more."""
        deadline = time.monotonic() + timeout
        try:
            while self._fill(deadline):
                pass
        except TimeoutError:
            return False
        return True

    def request(self, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b"",
                timeout: float = 10.0) -> RawResponse:
        head = f"{method} {target} HTTP/1.1\r\nHost: presignd\r\n"
        for k, v in (headers or {}).items():
            head += f"{k}: {v}\r\n"
        if body or method in ("PUT", "POST"):
            head += f"Content-Length: {len(body)}\r\n"
        self.send(head.encode() + b"\r\n" + body)
        return self.read_response(method, timeout=timeout)
