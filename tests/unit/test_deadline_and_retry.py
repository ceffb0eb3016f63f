from __future__ import annotations

import httpx2
import openai
import pytest
from agent_runtime import Deadline
from agent_runtime.models.retry import RetryPolicy, is_retryable, retry_after_seconds


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class LambdaContext:
    def __init__(self, millis: int) -> None:
        self.millis = millis

    def get_remaining_time_in_millis(self) -> int:
        return self.millis


def test_deadline_after_counts_down_and_expires() -> None:
    clock = FakeClock()
    deadline = Deadline.after(10, clock=clock)
    assert deadline.remaining() == 10
    clock.now += 10
    assert deadline.expired()


def test_deadline_from_lambda_context_keeps_a_margin() -> None:
    deadline = Deadline.from_lambda_context(LambdaContext(60_000), margin_seconds=45)
    assert 14 < deadline.remaining() <= 15
    assert Deadline.from_lambda_context(LambdaContext(10_000), margin_seconds=45).expired()


def test_no_deadline_never_expires() -> None:
    assert not Deadline.none().expired()
    assert Deadline.none().remaining() == float("inf")


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=1, max_delay=4)
    delays = [policy.delay(n, None) for n in (1, 2, 3, 4, 5)]
    assert 0.75 <= delays[0] <= 1
    assert 1.5 <= delays[1] <= 2
    assert all(d <= 4 for d in delays)


def test_retry_after_is_honoured_unless_unreasonable() -> None:
    policy = RetryPolicy(max_retry_after=30)
    assert policy.delay(1, 7.0) == 7.0
    assert policy.delay(1, 3600.0) <= policy.max_delay


def _status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(status, headers=headers or {}, request=request)
    return openai.APIStatusError("boom", response=response, body=None)


@pytest.mark.parametrize(
    ("status", "retry"),
    [
        (429, True),
        (500, True),
        (503, True),
        (408, True),
        (400, False),
        (401, False),
        (404, False),
        (501, False),
        (505, False),
        (502, True),
        (504, True),
    ],
)
def test_which_statuses_are_retried(status: int, retry: bool) -> None:
    assert is_retryable(_status_error(status)) is retry


def test_retry_after_headers_are_parsed() -> None:
    assert retry_after_seconds(_status_error(429, {"retry-after-ms": "250"})) == 0.25
    assert retry_after_seconds(_status_error(429, {"retry-after": "3"})) == 3.0
    assert retry_after_seconds(_status_error(429, {"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"})) is None
    assert retry_after_seconds(_status_error(429)) is None
