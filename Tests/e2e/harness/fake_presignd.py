#!/usr/bin/env python3
"""A stand-in for the presignd binary, used only by test_harness_selfcheck.py to exercise the `Presignd`
wrapper (config writing, listening-line parsing, log draining, SIGTERM → exit 0) before the daemon exists.

It implements the contract's outside only: `run --config FILE`, one logfmt line per listener on stderr, every
proxy request answered `501 NotImplemented` as S3 XML, `/healthz` on the admin listener.
"""

import signal
import sys
import threading
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _split(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host.strip("[]"), int(port)


class _Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _answer(self):
        body = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NotImplemented</Code>"
                b"<Message>fake presignd</Message><RequestId>fake</RequestId></Error>")
        if self.path == "/healthz" and self.server.is_admin:
            body = b"ok\n"
            self.send_response(200)
        else:
            self.send_response(501)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _answer


def main() -> int:
    args = sys.argv[1:]
    if len(args) != 3 or args[0] != "run" or args[1] != "--config":
        print("usage: fake_presignd.py run --config FILE", file=sys.stderr)
        return 64
    with open(args[2], "rb") as f:
        config = tomllib.load(f)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # before the listening lines: a test may stop us at once
    servers = []
    for addr in config["server"]["listen"]:
        srv = ThreadingHTTPServer(_split(addr), _Proxy)
        srv.is_admin = False
        servers.append(srv)
        print(f"level=info msg=Listening listen.address={addr.rsplit(':', 1)[0]}:{srv.server_address[1]}",
              file=sys.stderr, flush=True)
    admin = config["server"].get("admin_listen", "")
    if admin:
        srv = ThreadingHTTPServer(_split(admin), _Proxy)
        srv.is_admin = True
        servers.append(srv)
        print(f'level=info msg="Admin listening" listen.address={admin.rsplit(":", 1)[0]}:{srv.server_address[1]}',
              file=sys.stderr, flush=True)
    for srv in servers:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    while not stop.wait(0.2):
        pass
    print("level=info msg=Stopping", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
