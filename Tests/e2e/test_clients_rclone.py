"""rclone (anonymous S3 remote: provider Other, no keys, path style; default --transfers 4 / --checkers 8)
through presignd to moto over TLS: copy up and down, list, sync both ways, delete.
"""

from __future__ import annotations

import json
import os

import pytest

from harness.clients_extra import Rclone, random_file, read_tree, sha256_file, write_tree

from conftest import BUCKET


@pytest.fixture(scope="module")
def rc(presignd, e2e_dir) -> Rclone:
    return Rclone(os.path.join(e2e_dir, "rclone"), presignd.endpoint)


def _keys(moto_s3, prefix: str) -> list[str]:
    pages = moto_s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for p in pages for o in p.get("Contents", []))


def test_copyto_up_and_down(rc, work_dir, key_prefix, moto_s3):
    src, digest = random_file(300_007)
    remote = f"presignd:{BUCKET}/{key_prefix}rclone file ü+.bin"
    rc.run("copyto", src, remote)
    assert moto_s3.head_object(Bucket=BUCKET, Key=key_prefix + "rclone file ü+.bin")["ContentLength"] == 300_007
    down = os.path.join(work_dir, "down.bin")
    rc.run("copyto", remote, down)
    assert sha256_file(down) == digest
    text = f"presignd:{BUCKET}/{key_prefix}text.txt"
    rc.run("rcat", text, input_text="0123456789abcdefghij")  # from stdin: rclone buffers, then a plain PUT
    assert rc.run("cat", text, "--offset", "5", "--count", "10").stdout == "56789abcde"  # ranged GET


def test_multipart_upload_with_default_concurrency(rc, work_dir, key_prefix, moto_s3):
    # rclone's upload cutoff is 200 MiB; lower it so a 21 MiB file goes up as 5 MiB parts, 4 at a time.
    # --s3-no-head: after a multipart upload rclone 1.60 sends `HEAD ?versionId=null`, which moto answers 400 on
    # an unversioned bucket (docs/TESTING.md; S3 answers 200). That HEAD passes through presignd unchanged.
    src, digest = random_file(21 * 1024 * 1024 + 1)
    remote = f"presignd:{BUCKET}/{key_prefix}multi.bin"
    rc.run("copyto", "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", "--s3-no-head", src, remote, timeout=300)
    head = moto_s3.head_object(Bucket=BUCKET, Key=key_prefix + "multi.bin")
    assert head["ContentLength"] == 21 * 1024 * 1024 + 1 and head["ETag"].endswith('-5"'), head
    down = os.path.join(work_dir, "multi.bin")
    rc.run("copyto", remote, down, timeout=300)
    assert sha256_file(down) == digest
    moto_s3.delete_object(Bucket=BUCKET, Key=key_prefix + "multi.bin")


def test_copy_dir_list_and_delete(rc, work_dir, key_prefix, moto_s3):
    local = os.path.join(work_dir, "tree")
    files = {f"f{i:02d}.txt": os.urandom(50 + i) for i in range(20)}
    files.update({"sub dir/a b.txt": b"space", "sub dir/ü=&.txt": b"reserved", "deep/x/y/z.bin": os.urandom(4096)})
    write_tree(local, files)
    base = f"presignd:{BUCKET}/{key_prefix}tree"
    rc.run("copy", local, base)
    assert _keys(moto_s3, key_prefix) == sorted(f"{key_prefix}tree/{k}" for k in files)

    ls = rc.run("ls", base).stdout
    assert sorted(line.split(None, 1)[1] for line in ls.splitlines()) == sorted(files), ls
    lsd = rc.run("lsd", base).stdout
    assert sorted(line.split(None, 4)[4] for line in lsd.splitlines()) == ["deep", "sub dir"], lsd
    lsjson = json.loads(rc.run("lsjson", "-R", "--files-only", base).stdout)
    assert {e["Path"]: e["Size"] for e in lsjson} == {k: len(v) for k, v in files.items()}
    size = rc.run("size", "--json", base).stdout
    assert (json.loads(size)["count"], json.loads(size)["bytes"]) == (len(files), sum(map(len, files.values())))

    down = os.path.join(work_dir, "down")
    rc.run("copy", base, down)
    assert read_tree(down) == files
    rc.run("check", local, base)  # sizes and MD5 (ETag) agree

    rc.run("deletefile", f"{base}/sub dir/a b.txt")
    rc.run("delete", base, "--include", "f*.txt")
    assert _keys(moto_s3, key_prefix) == sorted(f"{key_prefix}tree/{k}" for k in ("sub dir/ü=&.txt", "deep/x/y/z.bin"))
    rc.run("purge", base)
    assert _keys(moto_s3, key_prefix) == []


def test_sync_both_ways(rc, work_dir, key_prefix, moto_s3):
    local = os.path.join(work_dir, "up")
    files = {"one.txt": b"1" * 10, "d/two.bin": os.urandom(5000), "d/e/three ü.txt": b"333"}
    write_tree(local, files)
    base = f"presignd:{BUCKET}/{key_prefix}sync"
    rc.run("sync", local, base)
    assert _keys(moto_s3, key_prefix) == sorted(f"{key_prefix}sync/{k}" for k in files)
    again = rc.run("sync", "-v", local, base).stderr
    assert "Copied" not in again, again
    write_tree(local, {"one.txt": b"changed and longer"}, age_seconds=10)
    os.remove(os.path.join(local, "d/two.bin"))
    out = rc.run("sync", "-v", local, base).stderr
    assert "Copied" in out and "Deleted" in out, out
    assert _keys(moto_s3, key_prefix) == sorted(f"{key_prefix}sync/{k}" for k in ("one.txt", "d/e/three ü.txt"))

    down = os.path.join(work_dir, "down")
    write_tree(down, {"stale.txt": b"goes away"})
    rc.run("sync", base, down)
    assert read_tree(down) == {"one.txt": b"changed and longer", "d/e/three ü.txt": b"333"}


def test_server_side_copy_and_move(rc, key_prefix, moto_s3):
    moto_s3.put_object(Bucket=BUCKET, Key=key_prefix + "src.txt", Body=b"server side")
    rc.run("copyto", f"presignd:{BUCKET}/{key_prefix}src.txt", f"presignd:{BUCKET}/{key_prefix}dst.txt")
    rc.run("moveto", f"presignd:{BUCKET}/{key_prefix}dst.txt", f"presignd:{BUCKET}/{key_prefix}moved.txt")
    assert _keys(moto_s3, key_prefix) == [key_prefix + "moved.txt", key_prefix + "src.txt"]
    assert moto_s3.get_object(Bucket=BUCKET, Key=key_prefix + "moved.txt")["Body"].read() == b"server side"


def test_inline_remote_without_config(rc, presignd, work_dir, key_prefix, moto_s3):
    """The one-liner the README shows: an on-the-fly remote, no config file."""
    remote = f":s3,provider=Other,endpoint='{presignd.endpoint}',force_path_style=true,no_check_bucket=true:{BUCKET}/{key_prefix}"
    write_tree(os.path.join(work_dir, "inline"), {"a.txt": b"inline"})
    rc.run("copy", os.path.join(work_dir, "inline"), remote)
    assert rc.run("lsf", remote).stdout.split() == ["a.txt"]
    assert moto_s3.get_object(Bucket=BUCKET, Key=key_prefix + "a.txt")["Body"].read() == b"inline"
