"""awscli (`--no-sign-request --endpoint-url`) through presignd, with no credentials in its environment."""

from __future__ import annotations

import filecmp
import os
import time

from conftest import BUCKET


def _file(directory: str, name: str, size: int) -> str:
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(os.urandom(size))
    old = time.time() - 3600  # sync tools compare second-resolution mtimes (docs/TESTING.md)
    os.utime(path, (old, old))
    return path


def test_cp_up_and_down(aws_cli, work_dir, key_prefix, moto_s3):
    src = _file(work_dir, "upload.bin", 300_000)
    url = f"s3://{BUCKET}/{key_prefix}upload file.bin"
    aws_cli.run("s3", "cp", src, url)
    down = os.path.join(work_dir, "download.bin")
    aws_cli.run("s3", "cp", url, down)
    assert filecmp.cmp(src, down, shallow=False)
    assert moto_s3.head_object(Bucket=BUCKET, Key=f"{key_prefix}upload file.bin")["ContentLength"] == 300_000


def test_cp_multipart_upload(aws_cli, work_dir, key_prefix):
    src = _file(work_dir, "big.bin", 9 * 1024 * 1024)  # above awscli's 8 MiB multipart threshold
    url = f"s3://{BUCKET}/{key_prefix}big.bin"
    aws_cli.run("s3", "cp", src, url)
    down = os.path.join(work_dir, "big-down.bin")
    aws_cli.run("s3", "cp", url, down)
    assert filecmp.cmp(src, down, shallow=False)


def test_ls_and_rm(aws_cli, work_dir, key_prefix):
    src = _file(work_dir, "listed.txt", 1234)
    aws_cli.run("s3", "cp", src, f"s3://{BUCKET}/{key_prefix}listed ü.txt")
    listing = aws_cli.run("s3", "ls", f"s3://{BUCKET}/{key_prefix}").stdout
    assert "listed ü.txt" in listing and "1234" in listing
    aws_cli.run("s3", "rm", f"s3://{BUCKET}/{key_prefix}listed ü.txt")
    after = aws_cli.run("s3", "ls", f"s3://{BUCKET}/{key_prefix}", check=False)
    assert "listed ü.txt" not in after.stdout


def test_recursive_cp_and_ls(aws_cli, work_dir, key_prefix):
    tree = os.path.join(work_dir, "tree")
    os.makedirs(os.path.join(tree, "sub dir"))
    names = ["a.txt", "sub dir/b+c.txt", "sub dir/ü.txt"]
    for n in names:
        _file(tree, n, 100)
    aws_cli.run("s3", "cp", "--recursive", tree, f"s3://{BUCKET}/{key_prefix}tree/")
    listing = aws_cli.run("s3", "ls", "--recursive", f"s3://{BUCKET}/{key_prefix}tree/").stdout
    for n in names:
        assert f"{key_prefix}tree/{n}" in listing


def test_ls_buckets_root_is_not_an_open_proxy(aws_cli):
    # `aws s3 ls` with no bucket lists buckets; presignd only knows its mounts. It may answer or refuse,
    # but it must answer (no hang, no crash).
    proc = aws_cli.run("s3", "ls", check=False, timeout=60)
    assert proc.returncode in (0, 1, 254, 255), proc.stderr
