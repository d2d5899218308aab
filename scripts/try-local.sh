#!/usr/bin/env bash
# presignd in front of a local S3 server, in one command (README: "Try it locally"; issue 24).
#
#   scripts/try-local.sh           build presignd if needed, start moto (a real S3 implementation that checks
#                                  SigV4 signatures) and presignd on 127.0.0.1, show PUT, GET, a listing, a
#                                  presigned link and a refused request, then leave both running for you to try
#                                  until Ctrl-C
#   scripts/try-local.sh --check   the same, unattended: asserts every step, stops both, exits 0 or 1 (CI)
#
# Needs: a Swift 6 toolchain with libevent-dev libssl-dev pkg-config (for the build), python3 with venv, curl.
# The aws CLI is used when it is on PATH. Everything listens on 127.0.0.1 only; nothing leaves the machine but
# the one-time `pip install` of moto into a venv.
#
# Environment:
#   PRESIGND_BIN=PATH        use this presignd binary instead of building .build/release/presignd
#   PRESIGND_TRY_VENV=DIR    the Python venv for moto (default .build/try-local-venv; created or reused)
#   KEEP_WORKDIR=1           keep the temporary directory (config, logs) after the end
set -euo pipefail

cd "$(dirname "$0")/.."
repo="$PWD"
started=$SECONDS

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
mode=demo
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    -h | --help) usage; exit 0 ;;
    *) printf 'try-local: unknown argument %s\n\n' "$1" >&2; usage >&2; exit 64 ;;
esac

# moto >= 5.2.5: older versions verify SigV4 over a re-encoded URL and reject correct signatures (.ci/run pins it).
MOTO_REQUIREMENT='moto[server]==5.2.5'
MOTO_VERSION=5.2.5
venv="${PRESIGND_TRY_VENV:-$repo/.build/try-local-venv}"

# Loopback traffic must not go to a proxy from the environment; the demo's clients must not find the user's keys.
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE INITIAL_NO_AUTH_ACTION_COUNT
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

bold=""; plain=""
if [ -t 1 ]; then bold=$'\033[1m'; plain=$'\033[0m'; fi
say() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
show() { printf '$ %s\n' "$*"; }
passed=0
pass() { passed=$((passed + 1)); printf '  ok: %s\n' "$*"; }
fail() {
    printf '\ntry-local: FAILED: %s\n' "$*" >&2
    for log in "$work/moto.log" "$work/presignd.log"; do
        if [ -s "$log" ]; then printf -- '--- last lines of %s\n' "$log" >&2; tail -n 15 "$log" >&2; fi
    done
    exit 1
}
need() { command -v "$1" >/dev/null 2>&1 || { echo "try-local: $1 not found: $2" >&2; exit 1; }; }

need curl "install curl (apt-get install curl)"
need python3 "install Python 3 (apt-get install python3 python3-venv)"

work="$(mktemp -d "${TMPDIR:-/tmp}/presignd-try.XXXXXX")"
moto_pid=""; presignd_pid=""; tail_pid=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ -n "$tail_pid" ]; then kill "$tail_pid" 2>/dev/null || true; fi
    if [ -n "$presignd_pid" ]; then kill -TERM "$presignd_pid" 2>/dev/null || true; wait "$presignd_pid" 2>/dev/null || true; fi
    if [ -n "$moto_pid" ]; then kill -TERM "$moto_pid" 2>/dev/null || true; wait "$moto_pid" 2>/dev/null || true; fi
    if [ "${KEEP_WORKDIR:-0}" = "1" ]; then echo "try-local: kept $work"; else rm -rf "$work"; fi
    exit "$rc"
}
trap cleanup EXIT
if [ "$mode" = check ]; then
    trap 'fail "interrupted"' INT TERM
else
    trap 'echo; echo "try-local: stopping presignd and moto"; exit 0' INT TERM
fi

# Polls until "$@" succeeds or the deadline passes (no fixed sleeps); the process named by $2 must stay alive.
wait_for() {
    local what=$1 pid=$2 seconds=$3
    shift 3
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then return 1; fi
        if [ "$SECONDS" -ge "$deadline" ]; then echo "try-local: $what: not ready after ${seconds}s" >&2; return 1; fi
        sleep 0.1
    done
}

# --- presignd ---------------------------------------------------------------------------------------------------
if [ -n "${PRESIGND_BIN:-}" ]; then
    presignd="$PRESIGND_BIN"
    [ -x "$presignd" ] || { echo "try-local: PRESIGND_BIN=$presignd is not an executable" >&2; exit 1; }
    say "presignd: $presignd"
else
    need swift "install a Swift 6 toolchain (https://www.swift.org/install/linux/) and libevent-dev libssl-dev pkg-config"
    say "swift build -c release --product presignd  (incremental after the first time)"
    swift build -c release --product presignd
    presignd="$(swift build -c release --show-bin-path)/presignd"
fi
"$presignd" version
build_done=$SECONDS

# --- moto in a venv -----------------------------------------------------------------------------------------------
if "$venv/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$MOTO_VERSION')" 2>/dev/null; then
    say "moto $MOTO_VERSION: reusing the venv $venv"
else
    say "python3 -m venv $venv && pip install '$MOTO_REQUIREMENT'"
    python3 -m venv "$venv" \
        || { echo "try-local: python3 -m venv failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$MOTO_REQUIREMENT"
fi
python="$venv/bin/python"

free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

say "moto_server on 127.0.0.1 (S3 with SigV4 authentication enforced)"
for _ in 1 2 3; do
    moto_port="$(free_port)"
    "$venv/bin/moto_server" -H 127.0.0.1 -p "$moto_port" >"$work/moto.log" 2>&1 &
    moto_pid=$!
    if wait_for "moto" "$moto_pid" 60 curl -fsS -o /dev/null "http://127.0.0.1:${moto_port}/moto-api/"; then break; fi
    kill "$moto_pid" 2>/dev/null || true; wait "$moto_pid" 2>/dev/null || true; moto_pid=""
done
[ -n "$moto_pid" ] || fail "moto_server did not start"
moto="http://127.0.0.1:${moto_port}"
echo "moto: $moto (log: $work/moto.log)"

# An IAM user allowed s3:*, its access key, then POST /moto-api/reset-auth: from here on moto checks every
# request's signature against that key (Tests/e2e/harness/moto.py). The key goes to two files, mode 0600.
cat >"$work/moto_setup.py" <<'PY'
import json, os, sys, urllib.request
import boto3, botocore.config

endpoint, work = sys.argv[1], sys.argv[2]
config = botocore.config.Config(retries={"max_attempts": 1}, proxies={}, s3={"addressing_style": "path"})
iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="AKIDBOOTSTRAP",
                   aws_secret_access_key="bootstrap", config=config)
iam.create_user(UserName="presignd-try")
policy = iam.create_policy(PolicyName="presignd-try-s3", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
iam.attach_user_policy(UserName="presignd-try", PolicyArn=policy["Policy"]["Arn"])
key = iam.create_access_key(UserName="presignd-try")["AccessKey"]
for name, value in (("access_key_id", key["AccessKeyId"]), ("secret_access_key", key["SecretAccessKey"])):
    fd = os.open(os.path.join(work, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, value.encode() + b"\n")
    os.close(fd)
request = urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=b"0", method="POST",
                                 headers={"Content-Type": "text/plain"})
urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10).read()
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=key["AccessKeyId"],
                  aws_secret_access_key=key["SecretAccessKey"], config=config)
for bucket in ("demo", "demo-readonly"):
    s3.create_bucket(Bucket=bucket)
s3.put_object(Bucket="demo-readonly", Key="readme.txt", Body=b"this bucket is read-only through presignd\n")
PY
"$python" "$work/moto_setup.py" "$moto" "$work" >"$work/moto_setup.log" 2>&1 \
    || { cat "$work/moto_setup.log" >&2; fail "creating moto's IAM user, key and buckets"; }
echo "created an IAM user and its key (kept in $work, never printed), buckets 'demo' and 'demo-readonly'"

say "moto without presignd: an unsigned request is refused"
show "curl $moto/demo-readonly/readme.txt"
direct_status="$(curl -sS -o "$work/direct.xml" -w '%{http_code}' "$moto/demo-readonly/readme.txt")"
echo "HTTP $direct_status"
[ "$direct_status" = 403 ] || fail "moto answered an unsigned GET with $direct_status, expected 403 (authentication not enforced)"
pass "moto enforces signatures (unsigned GET: 403)"

# --- presignd's configuration -------------------------------------------------------------------------------------
config="$work/presignd.toml"
cat >"$config" <<TOML
# Written by scripts/try-local.sh: presignd in front of moto on loopback.
[server]
listen = ["127.0.0.1:0"]          # port 0: any free port (the log line "Listening" names it)
admin_listen = "127.0.0.1:0"      # /healthz /readyz /metrics and the presign API
presign_api = "open"              # no token: loopback clients only (set admin_token_file on shared machines)
workers = 1

[upstream.moto]
provider = "custom"               # any S3-compatible endpoint (r2 and s3 derive theirs)
endpoint = "${moto}"              # http:// is accepted with a warning: test servers only
region = "us-east-1"
access_key_id_file = "${work}/access_key_id"
secret_access_key_file = "${work}/secret_access_key"

[[bucket]]
name = "demo"                     # path-style at /demo (the default mount)
upstream = "moto"
access = "read-write"

[[bucket]]
name = "demo-readonly"
upstream = "moto"
access = "read-only"              # GET and HEAD only: presignd refuses writes itself
TOML

say "presignd check-config --config $config"
"$presignd" check-config --config "$config" || fail "check-config refused the generated configuration"
pass "check-config accepts the configuration"

say "presignd run --config $config"
"$presignd" run --config "$config" 2>"$work/presignd.log" &
presignd_pid=$!
listening() { grep -q 'msg="Admin listening"' "$work/presignd.log" && grep -q 'msg=Listening' "$work/presignd.log"; }
wait_for "presignd" "$presignd_pid" 20 listening || fail "presignd did not start listening"
address_of() { grep "$1" "$work/presignd.log" | head -n 1 | sed -n 's/.*listen\.address=\([^ ]*\).*/\1/p'; }
proxy="http://$(address_of 'msg=Listening')"
admin="http://$(address_of 'msg="Admin listening"')"
wait_for "presignd /readyz" "$presignd_pid" 10 curl -fsS -o /dev/null "$admin/readyz" || fail "presignd is not ready"
echo "presignd: $proxy  (admin: $admin; log: $work/presignd.log)"
pass "presignd is listening and ready"

# --- operations through presignd ----------------------------------------------------------------------------------
printf 'Hello from presignd %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$work/hello.txt"

say "PUT: upload a file, unsigned; presignd signs it"
show "curl -T hello.txt -H 'Content-Type: text/plain' $proxy/demo/hello.txt"
put_status="$(curl -sS -o "$work/put.out" -w '%{http_code}' -T "$work/hello.txt" -H 'Content-Type: text/plain' \
    "$proxy/demo/hello.txt")"
echo "HTTP $put_status"
[ "$put_status" = 200 ] || { cat "$work/put.out"; fail "PUT answered $put_status, expected 200"; }
pass "PUT /demo/hello.txt: 200"

say "GET: read it back"
show "curl $proxy/demo/hello.txt"
curl -sS -fo "$work/get.out" "$proxy/demo/hello.txt" || fail "GET failed"
cat "$work/get.out"
cmp -s "$work/hello.txt" "$work/get.out" || fail "GET returned other bytes than were PUT"
pass "GET returns the uploaded bytes"

say "List the bucket (ListObjectsV2)"
show "curl '$proxy/demo?list-type=2'"
curl -sS -fo "$work/list.xml" "$proxy/demo?list-type=2" || fail "listing failed"
grep -o '<Key>[^<]*</Key>' "$work/list.xml" || true
grep -q '<Key>hello.txt</Key>' "$work/list.xml" || { cat "$work/list.xml"; fail "the listing does not show hello.txt"; }
pass "the listing shows hello.txt"

say "A presigned link from the admin API (POST /v1/presign; presign_api = 'open': loopback clients, no token)"
show "curl -H 'Content-Type: application/json' -d '{\"bucket\":\"demo\",\"key\":\"hello.txt\",\"expires\":600}' $admin/v1/presign"
curl -sS -fo "$work/presign.json" -H 'Content-Type: application/json' \
    -d '{"bucket":"demo","key":"hello.txt","expires":600}' "$admin/v1/presign" || fail "the presign API failed"
cat "$work/presign.json"
say "The same with the command line"
show "presignd presign s3://demo/hello.txt --config $config --expires 10m"
"$presignd" presign s3://demo/hello.txt --config "$config" --expires 10m >"$work/presign-cli.txt" \
    || fail "presignd presign failed"
cat "$work/presign-cli.txt"
# moto cannot check presigned URLs (it answers 500 to every one, right or wrong), so botocore's own query signer
# recomputes each link's signature from the URL, the key and the link's own X-Amz-Date.
cat >"$work/verify_link.py" <<'PY'
import json, sys, urllib.parse
from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

work, endpoint = sys.argv[1], sys.argv[2]
akid, secret = (open(f"{work}/{name}").read().strip() for name in ("access_key_id", "secret_access_key"))
links = [json.load(open(f"{work}/presign.json"))["url"], open(f"{work}/presign-cli.txt").readline().strip()]
for url in links:
    parts = urllib.parse.urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == endpoint, f"{url} does not point at {endpoint}"
    params = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    auth = dict(params)
    assert auth["X-Amz-Credential"].startswith(akid + "/"), "the link is not signed with the configured key"
    # botocore's stages over what S3 would rebuild: the path as sent, every query parameter but the signature.
    query = urllib.parse.urlencode([(k, v) for k, v in params if k != "X-Amz-Signature"], quote_via=urllib.parse.quote)
    request = AWSRequest(method="GET", url=f"{endpoint}{parts.path}?{query}")
    request.headers["host"] = parts.netloc
    request.context["timestamp"] = auth["X-Amz-Date"]
    signer = S3SigV4QueryAuth(Credentials(akid, secret), "s3", "us-east-1", expires=int(auth["X-Amz-Expires"]))
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    assert auth["X-Amz-Signature"] == expected, f"signature {auth['X-Amz-Signature']} != botocore's {expected}"
    print(f"  botocore's signer agrees: X-Amz-Signature={expected[:16]}..., valid for {auth['X-Amz-Expires']}s")
PY
"$python" "$work/verify_link.py" "$work" "$moto" || fail "a presigned link does not verify with botocore"
pass "both presigned links point at the upstream and verify with botocore's SigV4 query signer"
echo "  (moto cannot serve presigned URLs; against R2 or S3 such a link works in a browser until it expires)"

say "A refused request: writing to the read-only bucket"
show "curl -T hello.txt $proxy/demo-readonly/hello.txt"
denied_status="$(curl -sS -o "$work/denied.xml" -w '%{http_code}' -T "$work/hello.txt" "$proxy/demo-readonly/hello.txt")"
echo "HTTP $denied_status"
cat "$work/denied.xml"
[ "$denied_status" = 403 ] || fail "PUT to a read-only bucket answered $denied_status, expected 403"
grep -q '<Code>AccessDenied</Code>' "$work/denied.xml" || fail "the refusal is not an S3 AccessDenied error"
grep -q '<Message>[^<]*read-only[^<]*</Message>' "$work/denied.xml" || fail "the refusal does not say the bucket is read-only"
pass "PUT to a read-only bucket: 403 AccessDenied, answered by presignd"

say "A bucket that is not in the configuration"
show "curl $proxy/other-bucket/x"
missing_status="$(curl -sS -o "$work/missing.xml" -w '%{http_code}' "$proxy/other-bucket/x")"
echo "HTTP $missing_status"
cat "$work/missing.xml"
if [ "$missing_status" != 404 ] || ! grep -q '<Code>NoSuchBucket</Code>' "$work/missing.xml"; then
    fail "an unconfigured bucket answered $missing_status, expected 404 NoSuchBucket"
fi
pass "unconfigured bucket: 404 NoSuchBucket"

if command -v aws >/dev/null 2>&1; then
    # An isolated aws configuration: path-style addressing, a region, and none of the user's profiles or keys.
    export AWS_CONFIG_FILE="$work/aws-config" AWS_SHARED_CREDENTIALS_FILE="$work/aws-credentials"
    printf '[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n' >"$AWS_CONFIG_FILE"
    : >"$AWS_SHARED_CREDENTIALS_FILE"
    say "The aws CLI, unsigned (--no-sign-request): presignd signs"
    show "aws s3 cp --no-progress --no-sign-request --endpoint-url $proxy hello.txt s3://demo/from-aws-cli.txt"
    aws s3 cp --no-progress --no-sign-request --endpoint-url "$proxy" "$work/hello.txt" s3://demo/from-aws-cli.txt \
        || fail "aws s3 cp failed"
    show "aws s3 ls --no-sign-request --endpoint-url $proxy s3://demo/"
    aws s3 ls --no-sign-request --endpoint-url "$proxy" s3://demo/ | tee "$work/aws-ls.txt" || fail "aws s3 ls failed"
    grep -q 'from-aws-cli.txt' "$work/aws-ls.txt" || fail "aws s3 ls does not show the uploaded object"
    pass "aws s3 cp and aws s3 ls through presignd"
else
    say "aws CLI: not installed, skipped (pip install awscli)"
fi

if grep -qF -e "$(cat "$work/secret_access_key")" "$work/presignd.log"; then fail "the secret key is in presignd's log"; fi
pass "the secret key is not in presignd's log"

elapsed=$((SECONDS - build_done))
if [ "$mode" = check ]; then
    say "SIGTERM presignd: drains and exits 0"
    kill -TERM "$presignd_pid"
    rc=0; wait "$presignd_pid" || rc=$?
    presignd_pid=""
    [ "$rc" -eq 0 ] || fail "presignd exited with $rc after SIGTERM"
    pass "presignd exited 0"
    # Issue 24: the try-out shows its operations within two minutes of the build (the venv's pip install included).
    [ "$elapsed" -le 120 ] || fail "the try-out took ${elapsed}s after the build (budget: 120s)"
    echo
    echo "try-local --check: OK: ${passed} checks in ${elapsed}s after the build ($((SECONDS - started))s in all)"
    exit 0
fi

cat <<EOF

${bold}presignd is running in front of moto. Try it yourself:${plain}

  curl $proxy/demo/hello.txt
  curl -T ./some-file $proxy/demo/some-file
  curl '$proxy/demo?list-type=2'
  curl -X DELETE $proxy/demo/some-file
  curl -T ./some-file $proxy/demo-readonly/x        # refused: read-only bucket
  curl $admin/metrics | grep presignd_requests_total
EOF
if command -v aws >/dev/null 2>&1; then
    cat <<EOF
  AWS_CONFIG_FILE=$AWS_CONFIG_FILE aws s3 ls --no-sign-request --endpoint-url $proxy s3://demo/
EOF
fi
cat <<EOF

  configuration: $config
  moto (signed requests only): $moto
  (demo took ${elapsed}s after the build) presignd's log follows; Ctrl-C stops presignd and moto and removes $work
EOF
tail -n 0 -f "$work/presignd.log" &
tail_pid=$!
# Until Ctrl-C (the INT trap stops both); should presignd end by itself, its exit status ends the script (set -e).
wait "$presignd_pid"
presignd_pid=""
echo "try-local: presignd stopped by itself" >&2
