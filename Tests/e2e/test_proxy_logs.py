"""Over the whole session: presignd never logs a secret key or a signature (DESIGN §5, §6)."""

import pytest

from conftest import assert_no_secrets, signatures_sent


@pytest.mark.last
def test_no_secret_or_signature_in_logs(presignd, nginx_front, recorder):
    logs = presignd.log_text()
    assert logs.strip(), "presignd logged nothing at all (expected at least the listening lines)"
    sigs = signatures_sent(nginx_front, recorder)
    assert sigs, "no signed upstream request was observed; run the whole suite for this check to mean anything"
    assert_no_secrets(logs, presignd.config.secrets(), sigs)
