"""A newcomer attached a corrupt .docx and random bytes for a review: the demo model was told each file cannot be
read, and read them again for 20 turns, until the tool-call cap. The promise, over any mix of readable and
unreadable attachments, through build_agent, the shipped document-feedback workflow and the demo model over HTTP:
the review ends without reaching the cap, no unreadable file is read twice, and the answer names each file it
could not read."""

from __future__ import annotations

import json

from agent_runtime.files import InMemoryFileStore
from agent_runtime.record import RunStatus
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.demo import demo_script
from agent_runtime.workflows import load_workflow
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, model_for

TEXT = b"# Retry design\n\n## Open questions\n- Who owns the rollback?\n\nTODO: budget\n"
UNREADABLE = st.sampled_from([b"PK\x03\x04" + bytes(range(200)), bytes(range(256)) * 4, b"\x00\xff" * 900])
ATTACHMENT = st.one_of(
    st.tuples(st.sampled_from(["notes.docx", "random.bin", "deck.pptx", "data"]), UNREADABLE),
    st.tuples(st.sampled_from(["design.md", "plan.txt"]), st.just(TEXT)),
)


@settings(max_examples=8, deadline=None)
@given(attachments=st.lists(ATTACHMENT, min_size=1, max_size=4))
def test_an_unreadable_attachment_is_read_once_and_named_in_the_review(attachments: list[tuple[str, bytes]]) -> None:
    files = InMemoryFileStore()
    stored = [files.put(data, name=f"{i}-{name}") for i, (name, data) in enumerate(attachments)]
    workflow = load_workflow("document-feedback", REPO / "workflows")
    with ScriptedServer(demo_script(), model="demo") as server:
        record = build_agent(workflow, model_for(server), files=files).run("Please review these files")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    results = {m["tool_call_id"]: m["content"] for m in record.state.messages if m["role"] == "tool"}
    reads = [
        (json.loads(c["function"]["arguments"]).get("id"), results[c["id"]])
        for m in record.state.messages
        for c in m.get("tool_calls", [])
        if c["function"]["name"] == "file_read"
    ]
    failed = [fid for fid, result in reads if str(result).startswith("ERROR")]
    assert sorted(set(failed)) == sorted(
        item.id for item, (_, data) in zip(stored, attachments, strict=True) if data != TEXT
    )
    assert len(failed) == len(set(failed)), failed  # told once that it cannot be read: never read again
    answer = record.final_answer or ""
    for item in stored:
        if item.id in failed:
            assert f"• {item.name}: " in answer and "could not read" in answer
