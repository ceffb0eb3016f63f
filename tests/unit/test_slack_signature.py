"""Slack's v0 signature: the webhook's check (the strict parser of its headers, the 5-minute window, then slack_sdk's
verifier, imported with the first Slack request) accepts exactly what slack_sdk's own verifier accepts, for any body,
secret and signature, signed right or by the wrong secret, over another body or another timestamp."""

from __future__ import annotations

import pytest
from agent_runtime.triggers.exceptions import RejectedRequest
from agent_runtime.triggers.slack import verify
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk.signature import Clock, SignatureVerifier

NOW = 1_767_000_000


class _At(Clock):
    def now(self) -> float:
        return NOW


def accepted(body: bytes, timestamp: str, signature: str, secret: str) -> bool:
    headers = {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature}
    try:
        verify(headers, body, secret, now=NOW)
    except RejectedRequest as refused:
        assert refused.status == 401
        return False
    return True


secrets = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=40).filter(str.strip)


@settings(max_examples=150, deadline=None)
@given(
    body=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300).map(str.encode),
    secret=secrets,
    signer=secrets,
    age=st.integers(-299, 299),
    tamper=st.sampled_from(["none", "secret", "body", "timestamp"]),
)
def test_the_check_accepts_what_slack_sdk_accepts(body: bytes, secret: str, signer: str, age: int, tamper: str) -> None:
    timestamp = str(NOW - age)
    signed_body = body + b" " if tamper == "body" else body
    signed_at = str(NOW - age + 1) if tamper == "timestamp" else timestamp
    key = signer if tamper == "secret" else secret
    signature = SignatureVerifier(key).generate_signature(timestamp=signed_at, body=signed_body)
    assert signature is not None
    reference = SignatureVerifier(secret, clock=_At()).is_valid(body, timestamp, signature)
    assert accepted(body, timestamp, signature, secret) is reference
    assert reference is (tamper == "none" or (tamper == "secret" and signer == secret))


def test_a_stale_request_is_refused_even_when_signed() -> None:
    timestamp = str(NOW - 301)
    signature = SignatureVerifier("s3cret").generate_signature(timestamp=timestamp, body=b"{}")
    assert signature is not None
    with pytest.raises(RejectedRequest, match="stale"):
        verify({"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature}, b"{}", "s3cret", now=NOW)
