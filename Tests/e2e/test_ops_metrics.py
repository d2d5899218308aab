"""/metrics (issue 4): counters equal the requests this test made, per bucket/method/status class, bytes, upstream
pool reuse, TLS handshakes and session reuses, latency histograms; the text passes `promtool check metrics`."""

from __future__ import annotations

import http.client
import os
import shutil

import pytest

from harness import logfmt
from harness.clients import curl
from harness.net import wait_until
from harness.presignd import Bucket, Upstream

from conftest import BUCKET, READONLY_BUCKET, require_presignd_binary
from ops_helpers import StaticNginx, host_port, metric, nginx_upstream, parse_metrics, promtool_check, start_presignd


@pytest.fixture(scope="module")
def static_nginx():
    nginx = StaticNginx().start()
    yield nginx
    nginx.stop()


def _request(address: str, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes, dict]:
    host, port = host_port(address)
    conn = http.client.HTTPConnection(host, port, timeout=20)
    try:
        conn.request(method, path, body=body, headers={"Connection": "close"})
        response = conn.getresponse()
        return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def _tls_upstream(name: str, moto, nginx_front, test_ca, **extra) -> Upstream:
    return Upstream(name=name, endpoint=nginx_front.endpoint("good"), ca_file=test_ca.ca_file,
                    access_key_id=moto.access_key_id, secret_access_key=moto.secret_access_key, extra=extra)


def test_metrics_counters_match_requests_and_pass_promtool(static_nginx, moto, moto_s3, nginx_front, test_ca,
                                                          work_dir, key_prefix):
    static_nginx.put("files", "a.txt", b"a" * 1000)
    moto_s3.put_object(Bucket=READONLY_BUCKET, Key=key_prefix + "ro", Body=b"r" * 300)
    upstreams = [
        nginx_upstream(static_nginx),
        _tls_upstream("tls", moto, nginx_front, test_ca),
        # No pooling: every request opens a connection, so later handshakes resume the first one's session.
        _tls_upstream("tlsnopool", moto, nginx_front, test_ca, max_idle_connections=0),
    ]
    buckets = [Bucket("files", "static", access="read-only"), Bucket(BUCKET, "tls"),
               Bucket(READONLY_BUCKET, "tlsnopool", access="read-only")]
    daemon = start_presignd(require_presignd_binary(), os.path.join(work_dir, "d"), upstreams, buckets)
    try:
        address = daemon.listen_addresses[0]
        sent_out = 0
        expect: dict[tuple[str, str, str], int] = {}

        def call(method, path, bucket, status_class, body=None):
            nonlocal sent_out
            status, got, headers = _request(address, method, path, body)
            assert f"{status // 100}xx" == status_class, (method, path, status, got[:200])
            assert headers.get("x-presignd-request-id"), f"no x-presignd-request-id on {method} {path}"
            sent_out += len(got)
            expect[(bucket, method, status_class)] = expect.get((bucket, method, status_class), 0) + 1

        for _ in range(4):
            call("GET", "/files/a.txt", "files", "2xx")
        call("GET", "/files/missing", "files", "4xx")
        call("GET", "/files/missing?X-Amz-Signature=deadbeef", "files", "4xx")
        call("HEAD", "/files/a.txt", "files", "2xx")
        call("PUT", "/files/denied", "-", "4xx", body=b"x" * 10)  # read-only: answered by presignd
        call("GET", "/no-such-mount/x", "-", "4xx")
        upload = b"u" * 4321
        call("PUT", f"/{BUCKET}/{key_prefix}up", BUCKET, "2xx", body=upload)
        call("GET", f"/{BUCKET}/{key_prefix}up", BUCKET, "2xx")
        call("GET", f"/{BUCKET}/{key_prefix}up", BUCKET, "2xx")
        for _ in range(3):
            call("GET", f"/{READONLY_BUCKET}/{key_prefix}ro", READONLY_BUCKET, "2xx")
        total_requests = sum(expect.values())

        def scrape():
            return curl(f"{daemon.admin_endpoint}/metrics").body.decode()

        wait_until(lambda: metric(parse_metrics(scrape()), "presignd_client_connections_open") == 0, 5,
                   "client connections closed")
        text = scrape()
        samples = parse_metrics(text)

        got_requests = {
            (dict(labels)["bucket"], dict(labels)["method"], dict(labels)["status"]): int(value)
            for (name, labels), value in samples.items() if name == "presignd_requests_total"
        }
        assert got_requests == expect
        assert metric(samples, "presignd_request_duration_seconds_count") == total_requests
        assert metric(samples, "presignd_request_duration_seconds_bucket", le="+Inf") == total_requests
        assert metric(samples, "presignd_requests_in_flight") == 0
        assert metric(samples, "presignd_client_connections_total") == total_requests
        assert metric(samples, "presignd_request_body_bytes_total") == len(upload)
        assert metric(samples, "presignd_response_body_bytes_total") == sent_out
        assert metric(samples, "presignd_signing_failures_total") == 0

        def up(name, upstream):
            return metric(samples, name, upstream=upstream)

        # Plain keep-alive upstream: one connection, reused for the 6 requests after the first.
        assert up("presignd_upstream_connections_opened_total", "static") == 1
        assert up("presignd_upstream_connections_reused_total", "static") == 6
        assert up("presignd_upstream_pool_idle_connections", "static") == 1
        assert up("presignd_upstream_tls_handshakes_total", "static") == 0
        assert up("presignd_upstream_response_seconds_count", "static") == 7
        # TLS with pooling: one handshake, then reuse.
        assert up("presignd_upstream_connections_opened_total", "tls") == 1
        assert up("presignd_upstream_connections_reused_total", "tls") == 2
        assert up("presignd_upstream_tls_handshakes_total", "tls") == 1
        assert up("presignd_upstream_tls_session_reuses_total", "tls") == 0
        assert up("presignd_upstream_pool_idle_connections", "tls") == 1
        assert up("presignd_upstream_response_seconds_count", "tls") == 3
        # TLS without pooling: a handshake per request; all but the first resume the cached session.
        assert up("presignd_upstream_connections_opened_total", "tlsnopool") == 3
        assert up("presignd_upstream_connections_reused_total", "tlsnopool") == 0
        assert up("presignd_upstream_tls_handshakes_total", "tlsnopool") == 3
        assert up("presignd_upstream_tls_session_reuses_total", "tlsnopool") == 2
        assert up("presignd_upstream_pool_idle_connections", "tlsnopool") == 0

        assert metric(samples, "presignd_config_reloads_total", result="ok") == 0
        assert metric(samples, "presignd_config_load_duration_seconds") > 0
        assert metric(samples, "presignd_config_loaded_timestamp_seconds") > 1.6e9
        assert metric(samples, "presignd_ready") == 1
        heap = metric(samples, "presignd_heap_in_use_bytes")
        resident = metric(samples, "process_resident_memory_bytes")
        with open(f"/proc/{daemon.proc.pid}/statm") as statm:
            resident_now = int(statm.read().split()[1]) * os.sysconf("SC_PAGESIZE")
        assert 1 << 20 < resident <= resident_now * 1.5, (resident, resident_now)
        assert 64 << 10 < heap < 512 << 20, heap

        if shutil.which("promtool") is None:
            pytest.skip("promtool not installed (Debian package prometheus)")
        result = promtool_check(text)
        assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), (
            f"promtool check metrics:\n{result.stdout}{result.stderr}")
    finally:
        daemon.stop()


def test_access_log_fields_and_request_id_header(static_nginx, work_dir):
    static_nginx.put("files", "b.txt", b"bbbb")
    daemon = start_presignd(require_presignd_binary(), os.path.join(work_dir, "d"), [nginx_upstream(static_nginx)],
                            [Bucket("files", "static", access="read-only")])
    try:
        address = daemon.listen_addresses[0]
        status, body, headers = _request(address, "GET", "/files/b.txt?response-cache-control=0123456789abcdef")
        assert (status, body) == (200, b"bbbb")
        proxied_id = headers["x-presignd-request-id"]
        status, _, headers = _request(address, "DELETE", "/files/b.txt")
        assert status == 403
        local_id = headers["x-presignd-request-id"]
        assert headers["x-amz-request-id"] == local_id

        line = daemon.wait_for_log(lambda l: f"request.id={proxied_id}" in l)
        fields = logfmt.parse(line)
        assert fields["msg"] == "Request"
        assert fields["client.address"] == "127.0.0.1"
        assert fields["bucket"] == "files"
        assert fields["http.method"] == "GET"
        assert fields["http.path"] == "/files/b.txt"  # never the query string
        assert fields["http.status"] == "200" and fields["upstream.status"] == "200"
        assert fields["bytes.in"] == "0" and fields["bytes.out"] == "4"
        assert float(fields["duration.ms"]) >= float(fields["upstream.ms"]) >= 0
        assert fields["upstream.reused"] == "false"
        assert fields["error.code"] == "-"
        local = logfmt.parse(daemon.wait_for_log(lambda l: f"request.id={local_id}" in l))
        assert local["http.status"] == "403" and local["error.code"] == "AccessDenied"
        assert local["upstream.status"] == "-" and local["client.address"] == "127.0.0.1"
        logs = daemon.log_text()
        assert "0123456789abcdef" not in logs and "response-cache-control" not in logs
        assert nginx_upstream(static_nginx).secret_access_key not in logs
    finally:
        daemon.stop()

    quiet = start_presignd(require_presignd_binary(), os.path.join(work_dir, "q"), [nginx_upstream(static_nginx)],
                           [Bucket("files", "static")], server_extra={"access_log": False})
    try:
        status, _, headers = _request(quiet.listen_addresses[0], "GET", "/files/b.txt")
        assert status == 200 and headers.get("x-presignd-request-id")
    finally:
        quiet.stop()
    assert not [l for l in quiet.logs if "msg=Request" in l], "access_log = false still logged requests"
