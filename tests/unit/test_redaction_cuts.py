"""A declared secret never reaches anything a run puts out, wherever it sits against a cut (issue 51, point 2): the
page, the transcript, the stored record, log lines (their extra fields too), the metrics lines and the runs
channel's line. Was: texts were cut (2,000 / 300 / 80 characters) before they were redacted, so a secret across
the cut kept its first characters; a log call's extra fields were not redacted at all. The invariant: no 6
characters from the secret's start or end appear in any output, for a secret at any offset against every cut."""

from __future__ import annotations

import io
import logging
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_runtime import messages as m
from agent_runtime.events import Failed
from agent_runtime.inbound import TriggerEvent
from agent_runtime.pages import RunPage, render
from agent_runtime.reading.figures import figures
from agent_runtime.reading.show import transcript
from agent_runtime.record import RunRecord, RunStatus
from agent_runtime.redaction import Redactor
from agent_runtime.service.metrics import RunMetrics
from agent_runtime.service.reports import line
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.views import read_run
from aws_lambda_powertools import Logger
from hypothesis import given, settings
from hypothesis import strategies as st

# Every cut a run's text meets on its way out: names (80, 100, 200), the transcript's (300, 400), the page's (600,
# 2,000, 2,100, 8,000), a stop reason's (1,000), a Slack line's name (80).
CUTS = (20, 80, 100, 200, 300, 400, 600, 1_000, 2_000, 2_100, 8_000)
SECRETS = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=10, max_size=30)
STREAM = io.StringIO()
LOG = Logger(service="redaction-cuts", logger_handler=logging.StreamHandler(STREAM))


@st.composite
def placed(draw: st.DrawFn) -> tuple[str, str]:
    """A secret (``Zq`` first, ``Qz`` last: nothing a run puts out has either) and a text that holds it across one
    of the cuts."""
    secret = "Zq" + draw(SECRETS) + "Qz"
    offset = max(0, draw(st.sampled_from(CUTS)) - draw(st.integers(0, len(secret) + 1)))
    pad = draw(st.sampled_from(['"', "x", " ", "\n", "<", "\u202e", "中"]))
    return secret, pad * offset + secret + pad * 40


def leaks(secret: str, *outputs: str) -> list[str]:
    return [
        out[max(0, out.find(part) - 20) :][:80] for out in outputs for part in (secret[:6], secret[-6:]) if part in out
    ]


def run_of(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    call = {"id": "c1", "type": "function", "function": {"name": text, "arguments": text}}
    history = [m.system("s"), m.user(text), m.assistant(text, [call]), m.tool_result("c1", text)]
    record = {"run_id": "run-1", "workflow": text, "status": "failed", "model": text, "final_answer": text,
              "stop_reason": text, "events": [{"type": "failed", "error": text, "turn": 1}],
              "files": [{"id": "f1", "name": text, "source": text}], "feedback": [{"by": text, "verdict": text}],
              "model_calls": [{"turn": 1, "model": text, "usage": {"prompt_tokens": 1}}],
              "children": [{"run_id": text, "workflow": text, "final_answer": text, "tool_calls": [{"name": text}]}],
              "tool_calls": [{"name": text}]}  # fmt: skip
    return record, history


@settings(max_examples=60, deadline=None)
@given(case=placed())
def test_the_page_and_the_transcript_never_show_a_secrets_start_or_end(case: tuple[str, str]) -> None:
    secret, text = case
    record, history = run_of(text)
    redact = Redactor([secret])
    page = render(RunPage(read_run(record), history, f"{text}/{text}", redact=redact))
    shown = transcript(read_run(record), history, redact)
    assert not leaks(secret, page, shown)
    assert "***" in shown  # the transcript shows the final answer whole: the redaction ran
    assert "***" in page or "more characters" in page  # the page shows it, or was cut before it (its byte bound)


@settings(max_examples=40, deadline=None)
@given(case=placed())
def test_the_stored_record_its_metrics_and_its_line_never_carry_it(case: tuple[str, str]) -> None:
    """A secret this process used (a declared tool's: its source made a Redactor) in a script's error, the answer
    and an event: the record as stored, the metrics made from it, and the runs channel's line."""
    secret, text = case
    Redactor([secret])
    record = RunRecord("run-1", "w", "gpt-4o", status=RunStatus.FAILED, final_answer=text, stop_reason=text)
    record.event(Failed(error=text))
    record.tool_calls.append({"name": "tool " + text[-200:], "is_error": True})  # the whole secret, and short
    with tempfile.TemporaryDirectory() as root:
        runs = RunStore(LocalStore(Path(root)))
        runs.save_record(record)
        stored = runs.load_run("run-1")
        files = [p.read_text("utf-8") for p in Path(root).rglob("*") if p.is_file()]
    printed: list[str] = []
    assert stored is not None
    RunMetrics(out=printed.append).ended(figures(stored, "webhook"))
    event = TriggerEvent("webhook", text, "k", text, "u", "t", "c", attributes={"event": text})
    said = line(event, replace(stored, workflow=text), None, private=False)
    assert not leaks(secret, *files, *printed, said)


@settings(max_examples=60, deadline=None)
@given(case=placed())
def test_a_log_line_never_carries_it_in_its_message_its_extra_fields_or_its_exception(case: tuple[str, str]) -> None:
    """Was: the worker logged a failed run's reason as an extra field (``extra={"reason": ...}``), which the
    redacting record factory never saw (logging sets extra fields after the factory made the record)."""
    secret, text = case
    Redactor([secret])
    STREAM.seek(0)
    STREAM.truncate()
    LOG.warning("run did not complete", extra={"status": "failed", "reason": text, "nested": {"said": [text, 3]}})
    LOG.info("said %s", text[:1_500])
    try:
        raise ValueError(text)
    except ValueError:
        LOG.exception("it failed")
    logging.getLogger("some.library").warning("with %s", text, extra={"body": text.encode()})
    assert "run did not complete" in STREAM.getvalue() and "***" in STREAM.getvalue()
    assert not leaks(secret, STREAM.getvalue())
