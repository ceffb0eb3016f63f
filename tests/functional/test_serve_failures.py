"""What serve's worker does when a run cannot be what the webhook queued (issue 54's newcomer): a workflow file
broken while serve runs is a failed run that says which key or line, never a mention dropped with a traceback.

Through the real path: the playground's page sends the mention, serve's webhook queues it, serve's worker takes it
and answers in the thread the Web API keeps; the run's record is what ``runs list``/``runs show`` read."""

from __future__ import annotations

from typing import Any

import pytest
from agent_runtime.errors import ConfigError
from agent_runtime.service.answer import APOLOGY
from agent_runtime.stores import RunStore
from agent_runtime.workflows import WorkflowError, load_workflow
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.playground_support import HELPER, act, page_token, playground, until


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("served")
    with playground(folder, {"helper": HELPER}) as server:
        yield server, page_token(server.url), folder / "workflows" / "helper.yaml"


def _mutated(draw: st.DrawFn) -> str:
    """The file as an editor leaves it: a key misspelt, a bracket left open, a line cut, a character typed."""
    text = HELPER
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["delete", "insert", "key"]))
        if edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 12)) :]
        elif edit == "insert":
            text = text[:at] + draw(st.sampled_from(["[", "]", "{", ":", "'", "\t", "x", "\n  y: 1", "-"])) + text[at:]
        else:
            key = draw(st.sampled_from(["model:", "triggers:", "slack:", "channels:", "prompt:", "name:"]))
            text = text.replace(key, key[:-2] + key[-1], 1)  # `max_tool_calls` → `max_tool_call`
    return text


mutated = st.composite(_mutated)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=mutated())
@example(text=HELPER)  # the file as it was: answered
def test_a_workflow_file_broken_while_serving_is_a_failed_run_that_says_why(served: Any, text: str) -> None:
    """Whatever the file says now, the mention queued for it ends in the thread: the workflow's answer if the file
    reads, else the apology with the run's id and the file's first problem (never a traceback), and a failed run
    in the store."""
    server, token, path = served
    path.write_text(text)
    try:
        load_workflow(str(path), path.parent)
        problem = None
    except ConfigError as error:
        problem = error.problems[0] if isinstance(error, WorkflowError) and error.problems else None
        readable = False
    else:
        readable = True
    before = len(server.outcomes)
    said = act(server.url, "message", {"channel": "C0HELP", "text": "@agent what changed?"}, token)
    assert said["sent"]["answer"] == {"status": "queued", "workflow": "helper"}
    outcome = until(lambda: server.outcomes[before:], what="the worker")[0]
    assert outcome != "error"  # the worker's loop caught nothing: the handler made it an outcome
    assert server.playground is not None
    thread = server.playground.workspace.thread
    answer = until(lambda: [m for m in thread("C0HELP", said["ts"]) if m.get("bot_id")], what="the reply")[-1]
    runs = RunStore(server.store)
    row = next(r for r in runs.list_runs(limit=100) if r.run_id in answer["text"] or readable)
    if readable:
        assert outcome == "answered"
        return
    assert outcome == "failed" and row.status == "failed"
    assert answer["text"].startswith(APOLOGY.format(run_id=row.run_id))
    assert "cannot be read" in answer["text"] and "Traceback" not in answer["text"]
    if problem is not None:
        assert f"helper.yaml cannot be read: {problem.key}:" in answer["text"]
    record = runs.load_record(row.run_id)
    assert record is not None and "WorkflowError" in str(record["stop_reason"])
    assert [r.status for r in runs.list_runs(status="failed", limit=100) if r.run_id == row.run_id] == ["failed"]
