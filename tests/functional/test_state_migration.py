"""Stored runs keep loading: a checkpoint written before the run state had typed slots resumes on today's code,
and every key of it has an owner (a slot declared by the module that reads and writes it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import agent_runtime.runtime  # noqa: F401  (imports every component that owns a slot)
from agent_runtime import Agent, RunState, RunStatus, tool
from agent_runtime.context import ContextEngine
from agent_runtime.extract.engine import extract
from agent_runtime.files.preload import PreloadHook
from agent_runtime.loop.continuation import count_continuation
from agent_runtime.messages import text_of
from agent_runtime.runtime import default_tools
from agent_runtime.state import Slot, owned_keys
from agent_runtime.stores import LocalStore, PersistenceHook, RunStore, StoreFileStore
from agent_runtime.testing import Reply, ScriptedRequest, ScriptedServer
from agent_runtime.workflows.files import FileSettings

from tests.conftest import make_workflow, model_for

FIXTURE = Path(__file__).parents[1] / "fixtures" / "checkpoint-438b4a1.json"
POSTED: list[str] = []


@tool(mutating=True)
def post_comment(text: str) -> str:
    """Post a comment.

    Args:
        text: The comment.
    """
    POSTED.append(text)
    return f"posted comment #{len(POSTED)}"


def stored() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def test_every_key_of_a_stored_run_has_an_owner() -> None:
    keys = owned_keys()
    assert set(stored()["checkpoint"]["context"]) <= set(keys), set(stored()["checkpoint"]["context"]) - set(keys)
    assert all(owner.startswith("agent_runtime.") for owner in keys.values())


def test_a_key_cannot_be_owned_twice() -> None:
    try:
        Slot("files", dict, owner="somewhere.else")
    except ValueError as error:
        assert "agent_runtime.context.ledger" in str(error)
    else:
        raise AssertionError("a second owner of 'files' was accepted")


def _files(root: Path, data: dict[str, Any]) -> StoreFileStore:
    files = StoreFileStore(LocalStore(root), "thread#T")
    for name in ("notes.txt", "spec.html"):
        files.put(data["files"][name].encode(), name=name, source="attachment")
    text = extract(data["files"]["spec.html"].encode(), "spec.html").text
    files.put(text.encode(), name="spec.html.md", mimetype="text/markdown", source="extracted")
    assert {meta.id: meta.name for meta in files.list()} == data["ids"]
    return files


def test_an_old_checkpoint_resumes_with_every_slot_read_back(tmp_path: Path) -> None:
    data, POSTED[:] = stored(), []
    store, old = LocalStore(tmp_path), RunState.from_dict(data["checkpoint"])
    for version in range(old.context["checkpoint_version"]):  # the store holds it at the version it names
        RunStore(store).save_checkpoint(old, expected_version=version or None)
    loaded = RunStore(store).load_checkpoint(old.run_id)
    assert loaded is not None
    state = loaded[0]
    count_continuation(state.context)  # the worker counts the continuation it resumes from
    files, seen = _files(tmp_path, data), []

    def answer(request: ScriptedRequest) -> Reply:
        seen.append(request)
        return Reply(text="Reviewed and commented.")

    workflow = make_workflow()
    tools = default_tools()
    tools.register(post_comment)
    hooks = [
        ContextEngine(workflow, tools),
        PreloadHook(FileSettings()),
        PersistenceHook(RunStore(store), mutating={"post_comment"}),
    ]
    with ScriptedServer([], intercept=answer) as server:
        record = Agent(workflow, model_for(server), tools=tools, hooks=hooks, files=files).run(state=state)

    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert POSTED == []  # the journal's "done" entry was replayed, not run again
    assert [e["type"] for e in record.events if e["type"].startswith("mutation")] == ["mutation_replayed"]
    tool_results = [text_of(m) for m in record.state.messages if m["role"] == "tool"]  # type: ignore[union-attr]
    assert tool_results[-1] == "posted comment #1"
    status = seen[0].messages[-1]
    assert status["role"] == "user"  # status_role: the server's template refused a late system message
    text = text_of(status)
    assert "2 so far" in text  # compactions
    assert "x1.25" in text  # calibration
    assert "tool calls: 3 used" in text
    assert "file-a032defe7ec3" in text and "lines 1-5" in text  # the files' coverage
    context = record.state.context  # type: ignore[union-attr]
    assert context["continuations"] == 2
    assert context["skills_loaded"] == ["large-files"] and context["facts"] == ["REQ-7", "notes.txt"]
    assert set(data["checkpoint"]["context"]) <= set(context)
    saved = RunStore(store).load_checkpoint(state.run_id)
    assert saved is not None and saved[0].context["checkpoint_version"] == context["checkpoint_version"]
