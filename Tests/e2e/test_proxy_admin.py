"""The admin listener (DESIGN §5): health and readiness."""

from harness.clients import curl


def test_healthz(presignd):
    assert curl(f"{presignd.admin_endpoint}/healthz").status == 200


def test_readyz(presignd):
    assert curl(f"{presignd.admin_endpoint}/readyz").status == 200


def test_metrics_is_prometheus_text(presignd):
    got = curl(f"{presignd.admin_endpoint}/metrics")
    assert got.status == 200
    assert (got.header("content-type") or "").startswith("text/plain")
