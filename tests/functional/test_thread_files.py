"""A thread's next turn tells the model of the files that are new to it — the person's new attachments — and not
of files the previous run made itself (a tool's output, a long message the engine kept as a file): the model met
those where they were made, and announcing them again reads as "the person attached this"."""

from __future__ import annotations

from agent_runtime import Agent, ToolRegistry, tool
from agent_runtime.context import ContextEngine
from agent_runtime.files import InMemoryFileStore
from agent_runtime.testing import ScriptedServer, call, reply
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make_workflow, model_for

NAMES = st.lists(st.from_regex(r"[a-z]{1,8}\.(txt|csv|log)", fullmatch=True), max_size=3, unique=True)


@settings(max_examples=15, deadline=None)
@given(made=NAMES, attached=NAMES)
def test_a_threads_next_turn_announces_the_new_attachments_only(made: list[str], attached: list[str]) -> None:
    files = InMemoryFileStore()

    @tool
    def save(name: str) -> str:
        """Save a note as a file.

        Args:
            name: The file's name.
        """
        return files.put(f"made during the run: {name}".encode(), name=f"made-{name}", source="tool").id

    workflow, tools = make_workflow(), ToolRegistry([save])
    first_turn = [*(call("save", {"name": name}) for name in made), reply("saved")]
    with ScriptedServer([*first_turn, reply("and the next")]) as server:
        agent = Agent(workflow, model_for(server), tools=tools, hooks=[ContextEngine(workflow, tools)], files=files)
        first = agent.run("save my notes")
        new = [files.put(f"attached: {name}".encode(), name=name) for name in attached]
        agent.run("now this", state=first.state)
        sent = server.requests[-1].body["messages"]
    turn = next(m["content"] for m in reversed(sent) if m["role"] == "user")
    assert all(f"made-{name}" not in turn for name in made), turn
    assert all(f.id in turn for f in new), turn
    assert ("## Files" in turn) == bool(new), turn
