"""FaultyUpstream: a plain-HTTP upstream whose misbehaviour a test chooses (`mode`), recording what it saw.

Modes (set `upstream.mode` before a request; it applies to each request head as it is read, so a pooled
keep-alive connection follows it too):
- ok:                 read the request (and body), answer 200 with `ok_body`, keep the connection alive
- close_on_accept:    close right after accept, before reading anything (on a pooled connection: close
                      after reading the head, without answering)
- garbage:            read the head, answer bytes that are not HTTP, close
- reset_mid_body:     answer a head with Content-Length 1 MB, 64 KiB of body, then a TCP reset
- reset_until_close:  answer a close-delimited head (no length), 64 KiB of body, then a TCP reset
- eof_until_close:    answer a close-delimited head (no length), 64 KiB of body, then an orderly close
- connection_named:   answer 200 whose Connection header names an end-to-end field (`X-Hop-Secret`)
- stall_head:         read the head, then never answer (until `release()` or stop)
- stall_body:         answer a head with Content-Length 1 MB and 1000 bytes, then stall
- stream:             answer a head with Content-Length 1 GiB and stream until the peer goes away
- sink:               read the body until the peer goes away (for client disconnects mid-upload)
- drop_second:        answer the first request on a connection (keep-alive), close on the second without answering

`requests` lists (method, target) per head read; `opened` / `ended` count connections, and `live(mode)` counts
the connections still open whose last request was in `mode`, so a test can see that presignd closed its
upstream side (pooled idle connections stay open by design). A stalled connection notices its peer closing.
"""

from __future__ import annotations

import socket
import threading
import time


class FaultyUpstream:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.mode = "ok"
        self.ok_body = b"ok"
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []
        self.opened = 0
        self.ended = 0
        self._live: dict[int, str] = {}  # id(conn) → mode of its last request
        self._release = threading.Event()
        self._stopping = False
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(512)
        self.host = host
        self.port = self.sock.getsockname()[1]
        self._thread = threading.Thread(target=self._accept_loop, name="faulty-upstream", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def live(self, mode: str | None = None) -> int:
        with self.lock:
            if mode is None:
                return self.opened - self.ended
            return sum(1 for m in self._live.values() if m == mode)

    def release(self) -> None:
        """Let stalled connections go (they close)."""
        self._release.set()
        self._release = threading.Event()

    def reset(self, mode: str = "ok") -> None:
        self.release()
        with self.lock:
            self.mode = mode
            self.requests.clear()

    def stop(self) -> None:
        self._stopping = True
        self.release()
        try:
            self.sock.close()
        except OSError:
            pass

    # -- server ---------------------------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        while not self._stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.opened += 1
                mode = self.mode
            if mode == "close_on_accept":
                conn.close()
                with self.lock:
                    self.ended += 1
                continue
            threading.Thread(target=self._serve, args=(conn, self._release), daemon=True).start()

    @staticmethod
    def _stall(conn: socket.socket, release: threading.Event) -> None:
        """Hold the connection until released or until the peer closes it."""
        conn.settimeout(0.05)
        while not release.is_set():
            try:
                if not conn.recv(65536):
                    return
            except socket.timeout:
                continue

    def _serve(self, conn: socket.socket, release: threading.Event) -> None:
        conn.settimeout(30)
        buffer = b""
        try:
            served = 0
            while True:
                head, buffer = self._read_head(conn, buffer)
                if head is None:
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target = lines[0].split(" ")[:2]
                headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
                with self.lock:
                    self.requests.append((method, target))
                    mode = self.mode
                    self._live[id(conn)] = mode
                if mode == "close_on_accept":
                    return
                if mode == "garbage":
                    conn.sendall(b"SSH-2.0-OpenSSH_9.2 not http at all\r\n\r\n")
                    return
                if mode == "stall_head":
                    self._stall(conn, release)
                    return
                if mode == "drop_second" and served == 1:
                    return
                if mode == "sink":
                    while conn.recv(65536):
                        pass
                    return
                buffer = self._read_body(conn, buffer, headers)
                if mode in ("ok", "drop_second"):
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n"
                                 % len(self.ok_body) + (b"" if method == "HEAD" else self.ok_body))
                    served += 1
                    continue
                if mode == "reset_mid_body":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n" + b"r" * 65536)
                    time.sleep(0.05)
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    return
                if mode in ("reset_until_close", "eof_until_close"):
                    conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"u" * 65536)
                    time.sleep(0.05)
                    if mode == "reset_until_close":
                        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    return
                if mode == "connection_named":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop-Secret\r\nX-Hop-Secret: s3cr3t\r\n"
                                 b"X-Kept: yes\r\nContent-Length: 2\r\n\r\nok")
                    served += 1
                    continue
                if mode == "stall_body":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n" + b"s" * 1000)
                    self._stall(conn, release)
                    return
                if mode == "stream":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n")
                    block = b"d" * 65536
                    while True:
                        conn.sendall(block)
                return
        except OSError:
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass
            with self.lock:
                self.ended += 1
                self._live.pop(id(conn), None)

    @staticmethod
    def _read_head(conn: socket.socket, buffer: bytes) -> tuple[bytes | None, bytes]:
        while b"\r\n\r\n" not in buffer:
            chunk = conn.recv(65536)
            if not chunk:
                return None, buffer
            buffer += chunk
        head, _, rest = buffer.partition(b"\r\n\r\n")
        return head, rest

    @staticmethod
    def _read_body(conn: socket.socket, buffer: bytes, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while not buffer.endswith(b"0\r\n\r\n"):  # good enough for presignd's own chunking
                chunk = conn.recv(65536)
                if not chunk:
                    break
                buffer += chunk
            return b""
        want = int(headers.get("content-length", "0"))
        while len(buffer) < want:
            chunk = conn.recv(65536)
            if not chunk:
                break
            buffer += chunk
        return buffer[want:]
