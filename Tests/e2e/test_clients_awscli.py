"""awscli (`--no-sign-request --endpoint-url`, path style) through presignd to moto over TLS: issue 6's list.

Small and multipart (≥ 64 MiB) `s3 cp` both ways, `s3 sync` both ways, `s3 ls` with prefixes and --recursive,
`s3 rm --recursive` (DeleteObjects with a checksum header), and the s3api calls users script with.
"""

from __future__ import annotations

import json
import os

import pytest

from harness.clients_extra import count_op, random_file, read_tree, sha256_file, write_tree

from conftest import BUCKET

BIG = 64 * 1024 * 1024 + 12345  # above 64 MiB and not a multiple of awscli's 8 MiB part size


def aws(aws_cli, *args: str, **kwargs):
    count_op("awscli")
    return aws_cli.run(*args, **kwargs)


def aws_json(aws_cli, *args: str) -> dict:
    out = aws(aws_cli, *args, "--output", "json").stdout
    return json.loads(out) if out.strip() else {}


def test_cp_small_up_and_down(aws_cli, work_dir, key_prefix, moto_s3):
    src, digest = random_file(200_001)
    url = f"s3://{BUCKET}/{key_prefix}small file.bin"
    aws(aws_cli, "s3", "cp", src, url)
    down = os.path.join(work_dir, "small.bin")
    aws(aws_cli, "s3", "cp", url, down)
    assert sha256_file(down) == digest
    assert moto_s3.head_object(Bucket=BUCKET, Key=f"{key_prefix}small file.bin")["ContentLength"] == 200_001


def test_cp_multipart_64mib_up_and_down(aws_cli, work_dir, key_prefix, moto_s3):
    src, digest = random_file(BIG)
    key = f"{key_prefix}big.bin"
    aws(aws_cli, "s3", "cp", src, f"s3://{BUCKET}/{key}", timeout=300)
    head = moto_s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ContentLength"] == BIG
    assert head["ETag"].strip('"').endswith("-9"), f"expected a 9-part multipart ETag: {head['ETag']}"
    down = os.path.join(work_dir, "big.bin")
    aws(aws_cli, "s3", "cp", f"s3://{BUCKET}/{key}", down, timeout=300)  # ranged GETs in parallel
    assert sha256_file(down) == digest
    os.remove(down)
    moto_s3.delete_object(Bucket=BUCKET, Key=key)  # moto keeps objects in memory


def test_sync_up_then_down(aws_cli, work_dir, key_prefix):
    local = os.path.join(work_dir, "up")
    files = {"a.txt": b"alpha\n" * 100, "dir one/b c.bin": os.urandom(30_000), "dir one/ü/ñ.txt": b"unicode",
             "plus+eq=.txt": b"reserved"}
    write_tree(local, files)
    url = f"s3://{BUCKET}/{key_prefix}sync/"
    out = aws(aws_cli, "s3", "sync", local, url).stdout
    assert out.count("upload:") == len(files), out
    # A second sync finds nothing to do (sizes and mtimes agree).
    assert "upload:" not in aws(aws_cli, "s3", "sync", local, url).stdout
    # Change one file, delete one with --delete: only those move.
    write_tree(local, {"a.txt": b"changed\n"}, age_seconds=60)
    os.remove(os.path.join(local, "plus+eq=.txt"))
    out = aws(aws_cli, "s3", "sync", "--delete", local, url).stdout
    assert out.count("upload:") == 1 and out.count("delete:") == 1, out
    files["a.txt"] = b"changed\n"
    del files["plus+eq=.txt"]

    down = os.path.join(work_dir, "down")
    out = aws(aws_cli, "s3", "sync", url, down).stdout
    assert out.count("download:") == len(files), out
    assert read_tree(down) == files
    assert "download:" not in aws(aws_cli, "s3", "sync", url, down).stdout


def test_ls_prefixes_and_recursive(aws_cli, work_dir, key_prefix):
    local = os.path.join(work_dir, "tree")
    files = {"top.txt": b"1", "logs/2026/jan.log": b"22", "logs/2026/feb.log": b"333", "logs/readme": b"4444",
             "media/ü space.txt": b"55555"}
    write_tree(local, files)
    aws(aws_cli, "s3", "cp", "--recursive", local, f"s3://{BUCKET}/{key_prefix}")
    base = f"s3://{BUCKET}/{key_prefix}"

    top = aws(aws_cli, "s3", "ls", base).stdout
    assert "PRE logs/" in top and "PRE media/" in top and "top.txt" in top, top
    assert "jan.log" not in top

    logs = aws(aws_cli, "s3", "ls", base + "logs/").stdout
    assert "PRE 2026/" in logs and "readme" in logs and "jan.log" not in logs, logs

    partial = aws(aws_cli, "s3", "ls", base + "logs/2026/f").stdout  # a prefix that is not a "directory"
    assert "feb.log" in partial and "jan.log" not in partial, partial

    rec = aws(aws_cli, "s3", "ls", "--recursive", base).stdout
    listed = sorted(line.split(None, 3)[3] for line in rec.splitlines() if line.strip())
    assert listed == sorted(key_prefix + k for k in files), rec

    summary = aws(aws_cli, "s3", "ls", "--recursive", "--summarize", base + "logs/").stdout
    assert "Total Objects: 3" in summary and "Total Size: 9" in summary, summary


def test_rm_recursive_and_delete_objects(aws_cli, work_dir, key_prefix, moto_s3, nginx_front):
    local = os.path.join(work_dir, "rm")
    files = {f"d/{i:03d} ü.txt": b"x" * i for i in range(25)}
    files["keep-me/other.txt"] = b"k"
    files["batch/one+1"] = b"1"
    files["batch/two 2"] = b"2"
    write_tree(local, files)
    aws(aws_cli, "s3", "cp", "--recursive", local, f"s3://{BUCKET}/{key_prefix}")
    out = aws(aws_cli, "s3", "rm", "--recursive", f"s3://{BUCKET}/{key_prefix}d/").stdout
    assert out.count("delete:") == 25, out
    left = moto_s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)
    assert [o["Key"] for o in left.get("Contents", [])] == [
        key_prefix + "batch/one+1", key_prefix + "batch/two 2", key_prefix + "keep-me/other.txt"]

    # Batch DeleteObjects (awscli 1.x `s3 rm` deletes one by one; `s3api delete-objects` is the batch call, and
    # its body carries Content-MD5 or x-amz-checksum-*, which presignd must sign and moto/S3 verify).
    delete = {"Objects": [{"Key": key_prefix + "batch/one+1"}, {"Key": key_prefix + "batch/two 2"}], "Quiet": False}
    res = aws_json(aws_cli, "s3api", "delete-objects", "--bucket", BUCKET, "--delete", json.dumps(delete))
    assert sorted(d["Key"] for d in res["Deleted"]) == [key_prefix + "batch/one+1", key_prefix + "batch/two 2"]
    assert not res.get("Errors")
    left = moto_s3.list_objects_v2(Bucket=BUCKET, Prefix=key_prefix)
    assert [o["Key"] for o in left.get("Contents", [])] == [key_prefix + "keep-me/other.txt"]
    posts = [line for line in nginx_front.access_log("good") if line.startswith('POST "/e2e-bucket?delete')]
    assert posts and " 200 " in posts[-1], posts


def test_s3api_head_object_and_ranged_get(aws_cli, work_dir, key_prefix, moto_s3):
    key = key_prefix + "api object.bin"
    data = os.urandom(10_000)
    moto_s3.put_object(Bucket=BUCKET, Key=key, Body=data, ContentType="application/x-e2e",
                       Metadata={"owner": "clients"})
    head = aws_json(aws_cli, "s3api", "head-object", "--bucket", BUCKET, "--key", key)
    assert head["ContentLength"] == 10_000
    assert head["ContentType"] == "application/x-e2e"
    assert head["Metadata"] == {"owner": "clients"}

    out = os.path.join(work_dir, "range.bin")
    got = aws_json(aws_cli, "s3api", "get-object", "--bucket", BUCKET, "--key", key, "--range", "bytes=100-1099", out)
    assert got["ContentLength"] == 1000 and got["ContentRange"] == "bytes 100-1099/10000"
    assert open(out, "rb").read() == data[100:1100]

    missing = aws(aws_cli, "s3api", "head-object", "--bucket", BUCKET, "--key", key + "-missing", check=False)
    assert missing.returncode != 0 and "404" in missing.stderr, missing.stderr


def test_s3api_copy_object(aws_cli, key_prefix, moto_s3):
    src = key_prefix + "copy source ü+.txt"
    dst = key_prefix + "copy dest.txt"
    moto_s3.put_object(Bucket=BUCKET, Key=src, Body=b"copy me")
    res = aws_json(aws_cli, "s3api", "copy-object", "--bucket", BUCKET, "--key", dst,
                   "--copy-source", f"{BUCKET}/{src}")
    assert "CopyObjectResult" in res
    assert moto_s3.get_object(Bucket=BUCKET, Key=dst)["Body"].read() == b"copy me"
    # `s3 cp` between two S3 URLs is a CopyObject too.
    aws(aws_cli, "s3", "cp", f"s3://{BUCKET}/{dst}", f"s3://{BUCKET}/{key_prefix}copy again.txt")
    assert moto_s3.get_object(Bucket=BUCKET, Key=key_prefix + "copy again.txt")["Body"].read() == b"copy me"


def test_s3api_list_objects_v2_pagination(aws_cli, key_prefix, moto_s3):
    keys = [f"{key_prefix}page/{i:02d}+ü" for i in range(23)]
    for k in keys:
        moto_s3.put_object(Bucket=BUCKET, Key=k, Body=b"p")
    # awscli follows continuation tokens itself with --page-size: 5 requests of ≤ 5 keys.
    res = aws_json(aws_cli, "s3api", "list-objects-v2", "--bucket", BUCKET, "--prefix", key_prefix + "page/",
                   "--page-size", "5")
    assert [o["Key"] for o in res["Contents"]] == keys
    # Manual paging with --max-items / --starting-token.
    seen, token = [], None
    for _ in range(10):
        args = ["s3api", "list-objects-v2", "--bucket", BUCKET, "--prefix", key_prefix + "page/",
                "--max-items", "10", "--page-size", "4"]
        if token:
            args += ["--starting-token", token]
        page = aws_json(aws_cli, *args)
        seen += [o["Key"] for o in page.get("Contents", [])]
        token = page.get("NextToken")
        if not token:
            break
    assert seen == keys
    # Raw continuation token through the API (one page).
    first = aws_json(aws_cli, "s3api", "list-objects-v2", "--bucket", BUCKET, "--prefix", key_prefix + "page/",
                     "--max-keys", "7", "--no-paginate")
    assert first["IsTruncated"] is True and first["KeyCount"] == 7
    second = aws_json(aws_cli, "s3api", "list-objects-v2", "--bucket", BUCKET, "--prefix", key_prefix + "page/",
                      "--max-keys", "7", "--no-paginate", "--continuation-token", first["NextContinuationToken"])
    assert [o["Key"] for o in second["Contents"]] == keys[7:14]


@pytest.mark.parametrize("kind", ["put-object", "upload-part"])
def test_s3api_checksum_headers_reach_moto(aws_cli, work_dir, key_prefix, moto_s3, kind):
    """awscli sends x-amz-checksum-crc32 (+ x-amz-sdk-checksum-algorithm) on uploads; the signed header reaches
    moto, which stores and returns the checksum."""
    path, _ = random_file(50_000)
    key = key_prefix + kind
    if kind == "put-object":
        aws(aws_cli, "s3api", "put-object", "--bucket", BUCKET, "--key", key, "--body", path,
            "--checksum-algorithm", "CRC32")
    else:
        up = aws_json(aws_cli, "s3api", "create-multipart-upload", "--bucket", BUCKET, "--key", key,
                      "--checksum-algorithm", "CRC32")
        part = aws_json(aws_cli, "s3api", "upload-part", "--bucket", BUCKET, "--key", key, "--upload-id",
                        up["UploadId"], "--part-number", "1", "--body", path, "--checksum-algorithm", "CRC32")
        parts = {"Parts": [{"PartNumber": 1, "ETag": part["ETag"], "ChecksumCRC32": part["ChecksumCRC32"]}]}
        aws(aws_cli, "s3api", "complete-multipart-upload", "--bucket", BUCKET, "--key", key, "--upload-id",
            up["UploadId"], "--multipart-upload", json.dumps(parts))
    assert moto_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == open(path, "rb").read()
