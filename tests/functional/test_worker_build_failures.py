"""A run the worker cannot even build still ends in an apology (issue 31, point 9): its record says why, the
thread is free for its next message, and the queue message is not redelivered to the dead-letter queue."""

from __future__ import annotations

import json
from pathlib import Path

from tests.triggers_support import slack_mention, slack_request

BROKEN = """\
name: billing-answers
description: Answers from the billing API.
prompt: You answer billing questions.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
tools:
  openapi:
    - name: billing
      spec: http://127.0.0.1:9/openapi.json
triggers:
  slack: {channels: [C0BILL]}
"""


def test_a_document_that_cannot_be_fetched_ends_in_an_apology(system, scripted, tmp_path: Path) -> None:
    """Was: the build's ConfigError escaped the handler: no apology, "Working on it…" forever, the message
    redelivered until the dead-letter queue took it."""
    (tmp_path / "billing-answers.yaml").write_text(BROKEN)
    s = system(scripted())
    event = slack_mention("Ev1", channel="C0BILL", ts="1763800001.0", thread_ts="1763800000.000100",
                          text="<@U0BOT> what do we owe ACME?")  # fmt: skip
    assert json.loads(s.post("/slack/events", *slack_request(event))["body"])["status"] == "queued"
    assert s.deliver() == ["failed"]  # an outcome, not an exception: the batch reports no failure
    answers = [u["text"] for u in s.apis.named("chat.update")]
    assert any(text.startswith("Sorry — I could not finish this one.") for text in answers)
    assert not any("Working on it" in text for text in answers[-1:])
    thread = "slack-T0TEAM-C0BILL-1763800000.000100"
    assert s.worker.process.threads.active(thread) is None
    [summary] = [r for r in s.worker.process.runs.list_runs() if r.workflow == "billing-answers"]
    stored = s.worker.process.runs.load_record(summary.run_id)
    assert stored is not None and stored["status"] == "failed"
    assert "could not start" in stored["stop_reason"] and "could not be fetched" in stored["stop_reason"]
    assert set(s.redeliver()) == {"duplicate"}  # answered: SQS delivering it again changes nothing
