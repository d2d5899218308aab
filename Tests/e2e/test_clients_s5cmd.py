"""s5cmd (`--no-sign-request --endpoint-url`, default concurrency) through presignd to moto over TLS.

Copy up and down (single objects, wildcards, a multipart-sized file), list, sync both ways, delete.
"""

from __future__ import annotations

import os

import pytest

from harness.clients_extra import S5cmd, random_file, read_tree, sha256_file, write_tree

from conftest import BUCKET


@pytest.fixture(scope="module")
def s5(presignd) -> S5cmd:
    return S5cmd(presignd.endpoint)


def _keys(moto_s3, prefix: str) -> list[str]:
    pages = moto_s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for p in pages for o in p.get("Contents", []))


def test_cp_up_and_down(s5, work_dir, key_prefix, moto_s3):
    src, digest = random_file(300_007)
    url = f"s3://{BUCKET}/{key_prefix}s5 file ü.bin"
    s5.run("cp", src, url)
    assert moto_s3.head_object(Bucket=BUCKET, Key=key_prefix + "s5 file ü.bin")["ContentLength"] == 300_007
    down = os.path.join(work_dir, "down.bin")
    s5.run("cp", url, down)
    assert sha256_file(down) == digest


def test_cp_multipart_up_and_down(s5, work_dir, key_prefix, moto_s3):
    # s5cmd's default part size is 50 MiB with 5 parts in flight: 64 MiB + a bit is two parts.
    src, digest = random_file(64 * 1024 * 1024 + 12345)
    key = key_prefix + "big.bin"
    s5.run("cp", src, f"s3://{BUCKET}/{key}", timeout=300)
    head = moto_s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ContentLength"] == 64 * 1024 * 1024 + 12345 and head["ETag"].endswith('-2"'), head["ETag"]
    down = os.path.join(work_dir, "big.bin")
    s5.run("cp", f"s3://{BUCKET}/{key}", down, timeout=300)
    assert sha256_file(down) == digest
    os.remove(down)
    moto_s3.delete_object(Bucket=BUCKET, Key=key)


def test_wildcard_cp_ls_and_rm(s5, work_dir, key_prefix, moto_s3):
    local = os.path.join(work_dir, "tree")
    files = {f"f{i:02d}.txt": os.urandom(100 + i) for i in range(20)}
    files.update({"sub/a b.txt": b"space", "sub/ü+=.txt": b"reserved"})
    write_tree(local, files)
    base = f"s3://{BUCKET}/{key_prefix}"
    s5.run("cp", local + "/", base)  # a directory: every file, in parallel
    assert _keys(moto_s3, key_prefix) == sorted(key_prefix + k for k in files)

    listing = s5.run("ls", base).stdout
    assert "DIR  sub/" in listing and "f00.txt" in listing, listing
    sub = s5.run("ls", base + "sub/*").stdout
    assert "a b.txt" in sub and "ü+=.txt" in sub and "f00.txt" not in sub, sub
    wild = s5.run("ls", base + "f1*").stdout
    assert sorted(line.split()[-1] for line in wild.splitlines()) == [f"f{i}.txt" for i in range(10, 20)], wild
    du = s5.run("du", base + "*").stdout
    assert str(sum(len(v) for v in files.values())) in du, du

    down = os.path.join(work_dir, "down")
    s5.run("cp", base + "*", down + "/")
    assert read_tree(down) == files

    s5.run("rm", base + "f*")  # batch delete (DeleteObjects with a Content-MD5)
    assert _keys(moto_s3, key_prefix) == sorted(key_prefix + k for k in ("sub/a b.txt", "sub/ü+=.txt"))
    s5.run("rm", base + "sub/a b.txt")
    assert _keys(moto_s3, key_prefix) == [key_prefix + "sub/ü+=.txt"]


def test_sync_both_ways(s5, work_dir, key_prefix, moto_s3):
    local = os.path.join(work_dir, "up")
    files = {"one.txt": b"1" * 10, "d/two.bin": os.urandom(5000), "d/e/three ü.txt": b"333"}
    write_tree(local, files)
    base = f"s3://{BUCKET}/{key_prefix}sync/"
    s5.run("sync", local + "/", base)
    assert _keys(moto_s3, key_prefix) == sorted(key_prefix + "sync/" + k for k in files)
    # Nothing to do the second time.
    again = s5.run("sync", local + "/", base).stdout
    assert "cp " not in again, again
    # Local change and removal, with --delete.
    write_tree(local, {"one.txt": b"changed and longer"}, age_seconds=10)
    os.remove(os.path.join(local, "d/two.bin"))
    s5.run("sync", "--delete", local + "/", base)
    assert _keys(moto_s3, key_prefix) == sorted(key_prefix + "sync/" + k for k in ("one.txt", "d/e/three ü.txt"))
    assert moto_s3.get_object(Bucket=BUCKET, Key=key_prefix + "sync/one.txt")["Body"].read() == b"changed and longer"

    down = os.path.join(work_dir, "down")
    s5.run("sync", base + "*", down + "/")
    assert read_tree(down) == {"one.txt": b"changed and longer", "d/e/three ü.txt": b"333"}


def test_copy_between_keys(s5, key_prefix, moto_s3):
    moto_s3.put_object(Bucket=BUCKET, Key=key_prefix + "src.txt", Body=b"server-side copy")
    s5.run("cp", f"s3://{BUCKET}/{key_prefix}src.txt", f"s3://{BUCKET}/{key_prefix}dst.txt")
    assert moto_s3.get_object(Bucket=BUCKET, Key=key_prefix + "dst.txt")["Body"].read() == b"server-side copy"
    s5.run("mv", f"s3://{BUCKET}/{key_prefix}dst.txt", f"s3://{BUCKET}/{key_prefix}moved.txt")
    assert _keys(moto_s3, key_prefix) == [key_prefix + "moved.txt", key_prefix + "src.txt"]
    assert s5.run("cat", f"s3://{BUCKET}/{key_prefix}moved.txt").stdout == "server-side copy"
