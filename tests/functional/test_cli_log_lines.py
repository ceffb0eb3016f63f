"""The runtime's logged lines on the CLI's terminal read as the CLI's other lines (``agent-runtime: warning: …``,
one plain sentence), not in the structured form meant for Lambda's logs, which ``serve`` keeps."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from agent_runtime.cli import logs
from agent_runtime.testing import ScriptedServer, reply, server_error
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.newcomer_support import bare_env, cli

KEYS = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True)
VALUES = st.text(st.characters(codec="utf-8", exclude_characters="<>\n", exclude_categories=["Cs", "Cc"]), max_size=20)
TEXTS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=40)


def test_a_retried_model_call_is_one_plain_sentence_on_the_terminal(
    scripted: Callable[..., ScriptedServer], tmp_path: Path
) -> None:
    server = scripted(server_error(503), reply("Fine."))
    env = bare_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="k", AGENT_STATE_DIR=str(tmp_path / "state"))
    ran = cli("run", "document-feedback", "-m", "hello", cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    retried = [line for line in ran.stderr.splitlines() if "retrying" in line]
    assert len(retried) == 1, ran.stderr
    assert retried[0].startswith("agent-runtime: warning: model call failed, retrying (attempt 1, delay "), retried
    assert retried[0].endswith(", HTTP 503)"), retried
    assert "=<" not in ran.stderr and "WARNING" not in ran.stderr, ran.stderr


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), min_size=1, max_size=4), TEXTS)
def test_every_structured_line_becomes_its_sentence_with_every_value(fields: list[tuple[str, str]], text: str) -> None:
    message = ", ".join(f"{key}=<{value}>" for key, value in fields) + f" | {text}"
    said = logs.plain(message)
    assert said.startswith(text) and "=<" not in said.removeprefix(text)
    for key, value in fields:
        assert value in said and (key in logs.SELF_NAMED or f"{key} {value}" in said)


@settings(max_examples=60, deadline=None)
@given(TEXTS)
def test_a_line_that_is_not_structured_is_said_as_it_is(text: str) -> None:
    assert logs.plain(text) == text or " | " in text


def test_serve_keeps_the_structured_form_of_lambdas_logs() -> None:
    record = logging.LogRecord("m", logging.WARNING, "f", 1, "attempt=<%d> | model call failed", (1,), None)
    root = logging.getLogger()
    kept = root.handlers[:]
    try:
        root.handlers = []
        logs.configure(logging.WARNING, structured=True)
        assert root.handlers[0].format(record) == "WARNING attempt=<1> | model call failed"
        root.handlers = []
        logs.configure(logging.WARNING, structured=False)
        assert root.handlers[0].format(record) == "agent-runtime: warning: model call failed (attempt 1)"
    finally:
        root.handlers = kept
