"""S3 XML error bodies."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass


@dataclass(frozen=True)
class S3Error:
    code: str
    message: str
    request_id: str | None
    raw: bytes


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_error(body: bytes) -> S3Error:
    """Parse `<Error><Code>…</Code><Message>…</Message><RequestId>…</RequestId></Error>` (namespace tolerant)."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise AssertionError(f"not XML ({e}): {body[:500]!r}") from None
    if _local(root.tag) != "Error":
        raise AssertionError(f"root element is <{root.tag}>, expected <Error>: {body[:500]!r}")
    fields = {_local(child.tag): (child.text or "") for child in root}
    if "Code" not in fields:
        raise AssertionError(f"S3 error without <Code>: {body[:500]!r}")
    return S3Error(fields["Code"], fields.get("Message", ""), fields.get("RequestId"), body)
