"""A stop closes the run's open approval requests (issue 50): stop x approvals. Through the webhook, SQS (moto),
the worker and the fake Slack API: a run waits for a decision, someone presses Stop, and the request's message
loses its buttons and says it was closed; a click on it afterwards decides nothing and its clicker is told why,
privately, as for an expired request (was: the buttons stayed live, and a later click was dropped silently); and a
click on an expired request after its run answered is told too."""

from __future__ import annotations

from typing import Any

from agent_runtime.testing import call, reply

from tests.approvals_support import approval_value, asked_ts, click, mention
from tests.slack_support import stop_value
from tests.triggers_support import slack_request


def told(s: Any, user: str) -> list[str]:
    return [m["text"] for m in s.apis.named("chat.postEphemeral") if m.get("user") == user]


def test_a_stop_closes_the_runs_open_requests_and_a_late_click_is_told_why(system, scripted, ops) -> None:
    log = ops()
    server = scripted(call("restart_service", {"service": "payments"}))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev1", "restart payments", "1763800001.0")))
    assert s.deliver() == ["awaiting_approval"]
    value, _ = approval_value(s)
    assert click(s, stop_value(s), "U0DANA", action="run_stop")["statusCode"] == 200
    assert s.deliver() == ["stopped", "stopped"]  # the stop written; the run's continuation ends it
    closed = [u for u in s.apis.named("chat.update") if "closed: its run ended" in str(u.get("text"))]
    assert [u["ts"] for u in closed] == [asked_ts(s)]  # the request's message, its buttons gone
    assert closed[0]["text"].startswith(":octagonal_sign: `restart_service`: closed")
    assert click(s, value, "U0LEE")["statusCode"] == 200  # a click on the closed request, later
    assert s.deliver() == ["duplicate"]
    assert any("closed when its run ended" in text for text in told(s, "U0LEE"))
    assert not log.exists() and len(server.requests) == 1  # nothing ran, the model was not asked again


def test_a_click_on_an_expired_request_after_the_run_answered_is_told_why(system, scripted, ops) -> None:
    """Expiry x an answered run: the request expired, the run went on and answered; a click then is told, as a
    click before the answer is (was: dropped silently once the run had answered)."""
    import time

    log = ops()
    server = scripted(call("restart_service", {"service": "cache"}), reply("The restart was not approved in time."))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev2", "restart cache", "1763800002.0")))
    assert s.deliver() == ["awaiting_approval"]
    value, _ = approval_value(s)
    s.worker.process.clock = lambda: time.time() + 2 * 3600  # past approval_timeout_hours: 1
    click(s, value, "U0DANA")
    assert s.deliver() == ["answered"]
    click(s, value, "U0LEE")  # after the answer
    assert s.deliver() == ["duplicate"]
    assert any("expired before your answer" in text for text in told(s, "U0LEE")) and not log.exists()
