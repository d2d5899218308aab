#!/usr/bin/env python3
"""aws-chunked uploads streamed through presignd (issue 21): big uploads in both forms, never spooled.

1. Signed chunks (STREAMING-AWS4-HMAC-SHA256-PAYLOAD): minio-go, a real signed-chunk client (Tests/e2e/signedchunks,
   built in GOPATH mode against Debian's golang-github-minio-minio-go-v7-dev).
2. Unsigned with a CRC32 trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER): framed by botocore's own aws-chunked writer
   (`botocore.httpchecksum.AwsChunkedWrapper`), inside HTTP chunked framing as botocore sends it.

Each goes through presignd (`aws_chunked = "unwrap"`, as for R2) to a recording upstream that keeps only the
stored object's SHA-256 and length. While an upload runs, the spool directory and the files presignd holds open
are watched every 20 ms. Printed per form: MiB/s, presignd's peak RSS (VmHWM), spool files and spool descriptors
seen, and whether the stored bytes match. Exits 1 when a check fails (peak RSS over --max-rss-mib, the spool
touched, bytes differ). Everything runs on 127.0.0.1.

Usage: scripts/bench_chunked.py [--presignd PATH] [--size-mib 2048] [--max-rss-mib 48]
"""
import argparse
import hashlib
import os
import socket
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "e2e"))

from botocore.httpchecksum import AwsChunkedWrapper, Crc32Checksum  # noqa: E402

import chunked_support as cs  # noqa: E402
from harness.presignd import Bucket, Presignd, PresigndConfig, Upstream  # noqa: E402
from harness.procfs import status_kib  # noqa: E402
from harness.recorder import VerifyingUpstreamRecorder  # noqa: E402


class SpoolWatch:
    """Polls the spool directory and presignd's open files under it until stopped."""

    def __init__(self, pid, spool):
        self.pid, self.spool = pid, spool
        self.files = 0
        self.descriptors = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        fd_dir = f"/proc/{self.pid}/fd"
        while not self._stop.is_set():
            self.files = max(self.files, len(os.listdir(self.spool)))
            held = 0
            for fd in os.listdir(fd_dir):
                try:
                    held += os.readlink(os.path.join(fd_dir, fd)).startswith(self.spool)
                except OSError:
                    pass
            self.descriptors = max(self.descriptors, held)
            self.samples += 1
            self._stop.wait(0.02)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class Pattern:
    """A deterministic body, a MiB at a time (a random MiB with the block number in front), and its SHA-256."""

    def __init__(self, size):
        self.size, self.left, self.block = size, size, 0
        self.base = os.urandom(1 << 20)
        self.sha = hashlib.sha256()

    def read(self, n=-1):
        if self.left == 0:
            return b""
        piece = (self.block.to_bytes(8, "big") + self.base[8:])[: min(self.left, 1 << 20)]
        if 0 <= n < len(piece):
            raise ValueError("Pattern reads whole MiBs")
        self.block += 1
        self.left -= len(piece)
        self.sha.update(piece)
        return piece


def put_botocore_crc32(endpoint, path, size):
    """PUT an aws-chunked body with a CRC32 trailer, written by botocore's AwsChunkedWrapper, as HTTP chunked."""
    source = Pattern(size)
    body = AwsChunkedWrapper(source, checksum_cls=Crc32Checksum, checksum_name="x-amz-checksum-crc32",
                             chunk_size=1 << 20)
    hostport = endpoint.split("://", 1)[1]
    host, port = hostport.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=120) as sock:
        sock.sendall((f"PUT {path} HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/octet-stream\r\n"
                      "Content-Encoding: aws-chunked\r\nTransfer-Encoding: chunked\r\n"
                      "x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER\r\n"
                      f"x-amz-decoded-content-length: {size}\r\nx-amz-trailer: x-amz-checksum-crc32\r\n"
                      "x-amz-sdk-checksum-algorithm: CRC32\r\n\r\n").encode())
        while True:
            piece = body.read(1 << 20)
            if not piece:
                break
            sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
        sock.sendall(b"0\r\n\r\n")
        status = sock.makefile("rb").readline()
    assert status.startswith(b"HTTP/1.1 200"), status
    return source.sha.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--presignd", default=os.path.join(ROOT, ".build", "release", "presignd"))
    parser.add_argument("--size-mib", type=int, default=2048)
    parser.add_argument("--max-rss-mib", type=int, default=48)
    args = parser.parse_args()
    size = args.size_mib << 20
    failures = []
    with tempfile.TemporaryDirectory(prefix="bench-chunked-") as work:
        go = cs.go_client(work)
        recorder = VerifyingUpstreamRecorder(digest_only=True).start()
        spool = os.path.join(work, "spool")
        os.mkdir(spool)
        config = PresigndConfig(
            upstreams=[Upstream(name="rec", endpoint=recorder.endpoint, access_key_id=recorder.access_key_id,
                                secret_access_key=recorder.secret_access_key, extra={"aws_chunked": "unwrap"})],
            buckets=[Bucket("bench", "rec")],
            server_extra={"spool_directory": spool},
        )
        daemon = Presignd(args.presignd, config, os.path.join(work, "presignd"), name="presignd-bench").start()
        pid = daemon.proc.pid
        rows = []
        try:
            forms = [
                ("signed chunks (minio-go)", lambda key: cs.run_go_client(
                    go, daemon.endpoint, "bench", key, size, skip_read=True, timeout=1800)["sha256"]),
                ("unsigned + CRC32 trailer (botocore)",
                 lambda key: put_botocore_crc32(daemon.endpoint, f"/bench/{key}", size)),
            ]
            for index, (name, upload) in enumerate(forms):
                key = f"object-{index}"
                with SpoolWatch(pid, spool) as watch:
                    started = time.monotonic()
                    sent_sha = upload(key)
                    seconds = time.monotonic() - started
                stored = recorder.digests.get(f"/bench/{key}")
                matches = stored == (sent_sha, size)
                rss = status_kib(pid, "VmHWM") / 1024
                rows.append((name, size / seconds / 2**20, rss, watch.files, watch.descriptors, watch.samples,
                             matches))
                if not matches:
                    failures.append(f"{name}: stored {stored}, sent {(sent_sha, size)}")
                if watch.files or watch.descriptors:
                    failures.append(f"{name}: the spool was used")
                if rss > args.max_rss_mib:
                    failures.append(f"{name}: peak RSS {rss:.1f} MiB > {args.max_rss_mib} MiB")
        finally:
            daemon.stop()
            recorder.stop()
    print(f"aws-chunked uploads of {args.size_mib} MiB through presignd (unwrap), one at a time:")
    print(f"{'form':<38} {'MiB/s':>8} {'peak RSS MiB':>13} {'spool files':>12} {'spool fds':>10} "
          f"{'samples':>8} {'bytes match':>12}")
    for name, rate, rss, files, fds, samples, matches in rows:
        print(f"{name:<38} {rate:>8.1f} {rss:>13.1f} {files:>12} {fds:>10} {samples:>8} {str(matches):>12}")
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
