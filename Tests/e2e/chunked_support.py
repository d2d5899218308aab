"""Building aws-chunked uploads in every form presignd receives (issue 21), by the spec (SIGV4-S3-RULES §5.1,
§5.2), and the signed-chunk Go client (minio-go, built in GOPATH mode against Debian's /usr/share/gocode)."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _reflected_crc(data: bytes, polynomial: int, width: int) -> int:
    """Bitwise reflected CRC, all ones in and out (test data only: slow)."""
    mask = (1 << width) - 1
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ polynomial if crc & 1 else crc >> 1
        table.append(crc)
    crc = mask
    for byte in data:
        crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
    return crc ^ mask


CHECKSUMS = {
    "crc32": lambda d: zlib.crc32(d).to_bytes(4, "big"),
    "crc32c": lambda d: _reflected_crc(d, 0x82F63B78, 32).to_bytes(4, "big"),
    "crc64nvme": lambda d: _reflected_crc(d, 0x9A6C9329AC4BC9B5, 64).to_bytes(8, "big"),
    "sha1": lambda d: hashlib.sha1(d).digest(),
    "sha256": lambda d: hashlib.sha256(d).digest(),
}


def checksum_b64(algorithm: str, data: bytes) -> str:
    return base64.b64encode(CHECKSUMS[algorithm](data)).decode()


def encode(data: bytes, signed: bool, algorithm: str | None, chunk_size: int = 64 * 1024,
           trailer_value: str | None = None) -> bytes:
    """aws-chunked: signed chunks carry `;chunk-signature=<64 hex>` (a placeholder key's signatures: presignd
    ignores them), unsigned ones none; a trailer `x-amz-checksum-<algorithm>` when one is named."""
    out = bytearray()
    signature = "0" * 64

    def frame(chunk: bytes) -> None:
        ext = f";chunk-signature={signature}" if signed else ""
        out.extend(b"%x" % len(chunk) + ext.encode() + b"\r\n" + chunk + b"\r\n")

    for i in range(0, len(data), chunk_size):
        frame(data[i:i + chunk_size])
    ext = f";chunk-signature={signature}" if signed else ""
    out.extend(b"0" + ext.encode() + b"\r\n")
    if algorithm:
        value = trailer_value if trailer_value is not None else checksum_b64(algorithm, data)
        out.extend(f"x-amz-checksum-{algorithm}:{value}\r\n".encode())
        if signed:
            out.extend(f"x-amz-trailer-signature:{signature}\r\n".encode())
    out.extend(b"\r\n")
    return bytes(out)


def headers(data_length: int, signed: bool, algorithm: str | None, encoded_length: int) -> list[tuple[str, str]]:
    if signed:
        payload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" + ("-TRAILER" if algorithm else "")
    else:
        payload = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    out = [("Content-Type", "application/octet-stream"), ("Content-Encoding", "aws-chunked"),
           ("x-amz-content-sha256", payload), ("x-amz-decoded-content-length", str(data_length)),
           ("Content-Length", str(encoded_length))]
    if algorithm:
        out += [("x-amz-trailer", f"x-amz-checksum-{algorithm}"), ("x-amz-sdk-checksum-algorithm", algorithm.upper())]
    if signed:  # what a client with a placeholder key sends
        out.append(("Authorization", "AWS4-HMAC-SHA256 Credential=PLACEHOLDER/20260101/us-east-1/s3/aws4_request, "
                    "SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" + "0" * 64))
        out.append(("x-amz-date", "20260101T000000Z"))
    return out


def go_client(build_dir: str) -> str:
    """Builds Tests/e2e/signedchunks (GOPATH mode, Debian's minio-go) once into `build_dir`; returns its path.
    `.ci/run` installs golang-go and golang-github-minio-minio-go-v7-dev."""
    binary = os.path.join(build_dir, "signedchunks")
    if os.path.exists(binary):
        return binary
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("go is not installed (apt-get install golang-go golang-github-minio-minio-go-v7-dev)")
    env = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode", GOCACHE=os.path.join(build_dir, "cache"),
               GOFLAGS="")
    subprocess.run([go, "build", "-o", binary, "."], cwd=os.path.join(HERE, "signedchunks"), env=env, check=True,
                   timeout=600)
    return binary


def run_go_client(binary: str, endpoint: str, bucket: str, key: str, size: int, part_size: int = 0,
                  skip_read: bool = False, timeout: float = 900) -> dict[str, str]:
    hostport = endpoint.split("://", 1)[1]
    args = [binary, "-endpoint", hostport, "-bucket", bucket, "-key", key, "-size", str(size),
            "-part-size", str(part_size)]
    if skip_read:
        args.append("-skip-read")
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"signedchunks failed: {done.stderr}{done.stdout}"
    return dict(field.split("=", 1) for field in done.stdout.split())


def pattern_sha256(size: int) -> str:
    """SHA-256 of the Go client's deterministic stream (SHA-256 of a big-endian counter, 32 bytes per step)."""
    digest = hashlib.sha256()
    counter = 0
    left = size
    buffer = bytearray()
    while left > 0:
        buffer.clear()
        for _ in range(min(32768, (left + 31) // 32)):
            buffer += hashlib.sha256(counter.to_bytes(8, "big")).digest()
            counter += 1
        take = min(len(buffer), left)
        digest.update(buffer[:take])
        left -= take
    return digest.hexdigest()
