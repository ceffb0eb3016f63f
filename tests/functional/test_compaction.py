"""Compaction in a real loop, observed from the scripted server's side (what would be sent)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agent_runtime import RunStatus
from agent_runtime.files import InMemoryFileStore
from agent_runtime.messages import find_orphans, text_of
from agent_runtime.testing import Reply, ScriptedRequest, ScriptedServer, call, context_overflow, reply, server_error

from tests.compaction_support import agent, paragraph, talkative
from tests.conftest import make_workflow, model_for

Start = Callable[..., ScriptedServer]
CONSTRAINT = 'Answer in French and never email "ops@example.com" directly.'


def compactions(record) -> list[dict[str, Any]]:
    return [e for e in record.events if e["type"] == "compaction"]


def test_masking_replaces_old_tool_outputs_with_pointers_to_their_files(scripted: Start) -> None:
    files = InMemoryFileStore()
    server = scripted(*[call("fetch", {"n": n}) for n in range(1, 6)], reply("done"))
    record = agent(server, files=files).run(CONSTRAINT)
    assert record.status is RunStatus.COMPLETED
    [event] = compactions(record)
    assert event["tactic"] == "masking" and event["trigger"] == "threshold"
    assert event["tokens_after"] < event["tokens_before"]
    last = server.requests[-1].messages
    pointers = [text_of(m) for m in last if text_of(m).startswith("[masked: ")]
    assert pointers and find_orphans(last[:-1]) == []
    moved_to = re.search(r'file_read\(id="(file-\w+)"\)', pointers[0]).group(1)
    assert files.read(moved_to).decode() == paragraph(1)  # nothing is lost: the output has its own file
    assert paragraph(1) in files.read(event["archive_file"]).decode()  # and the archive has the whole window


def summaries(request: ScriptedRequest) -> Reply | None:
    """Answer the engine's summary calls; leave conversation turns to the script."""
    if not request.is_compaction():
        return None
    assert not request.body.get("tools")  # the summary call offers no tools
    transcript = text_of(request.messages[-1])
    archive_id = re.search(r"archive file (file-[0-9a-f]+)", transcript).group(1)
    # A plausible summary that forgets the user's constraint and the ticket key, on purpose.
    return Reply(text=f"## Requests and intent\nRead the manual. (archive lines 1-40 of {archive_id})")


def test_summary_is_verified_and_missing_facts_are_pinned(scripted: Start) -> None:
    server = scripted(talkative(1), talkative(2), talkative(3), reply("Merci, c'est fait."), intercept=summaries)
    record = agent(server).run(f"Read the manual for PROJ-42. {CONSTRAINT}")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    [event] = compactions(record)
    assert event["tactic"] == "summary"
    assert event["identifiers_added"] >= 2 and event["identifiers_checked"] >= event["identifiers_added"]
    assert event["summary_usage"]["prompt_tokens"] > 0
    assert [c.get("purpose") for c in record.model_calls].count("compaction") == 1
    assert len(server.intercepted) == 1
    final = server.requests[-1].messages
    summary = next(text_of(m) for m in final if text_of(m).startswith("[compacted context #1"))
    assert "## Pinned facts (verbatim, checked by the runtime)" in summary
    assert "PROJ-42" in summary and "ops@example.com" in summary and "Answer in French" in summary
    assert f"archive {event['archive_file']}" in summary
    assert "## Archive index (what left the window, by archive line)" in summary
    assert re.search(r"- lines \d+-\d+: result of fetch\(\{\"n\": 1\}\): ", summary)
    assert find_orphans(final[:-1]) == []


def test_actions_in_a_summarized_span_are_always_listed(scripted: Start) -> None:
    server = scripted(
        Reply(text=paragraph(60, 250), calls=(call("post_comment", {"text": "Review started"}).calls[0],)),
        talkative(1),
        talkative(2),
        talkative(3),
        reply("done"),
        intercept=lambda r: Reply(text="## Current work\nReading.") if r.is_compaction() else None,
    )
    record = agent(server).run("Review and comment on PROJ-7.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert any(e["tactic"] == "summary" for e in compactions(record))
    summary = next(text_of(m) for m in server.requests[-1].messages if text_of(m).startswith("[compacted context"))
    assert "result of post_comment" in summary and "an ACTION already taken: do not repeat it" in summary


def test_failed_summary_call_falls_back_to_the_deterministic_summary(scripted: Start) -> None:
    failures = iter([server_error(500)] * 3)
    server = scripted(
        talkative(1),
        talkative(2),
        talkative(3),
        reply("fine"),
        intercept=lambda r: next(failures) if r.is_compaction() else None,
    )
    record = agent(server).run(f"Read the manual. {CONSTRAINT}")
    assert record.status is RunStatus.COMPLETED
    [event] = compactions(record)
    assert event["tactic"] == "fallback"
    summary = next(text_of(m) for m in server.requests[-1].messages if text_of(m).startswith("[compacted context"))
    assert "## User messages" in summary and "(archive lines" in summary
    assert "ops@example.com" in summary


def empty_summarizer(span: list, transcript: str) -> str:
    return "   "


def test_custom_compactor_returning_nothing_falls_back(scripted: Start) -> None:
    server = scripted(talkative(1), talkative(2), talkative(3), reply("fine"))
    record = agent(server, compactor="tests.functional.test_compaction:empty_summarizer").run("Read it.")
    assert compactions(record)[0]["tactic"] == "fallback"


def test_mutating_calls_are_never_masked_and_are_named_in_the_summary(scripted: Start) -> None:
    server = scripted(
        call("post_comment", {"text": "Started the review"}),
        *[call("fetch", {"n": n}) for n in range(1, 4)],
        reply("done"),
    )
    record = agent(server).run("Review and comment.")
    assert record.status is RunStatus.COMPLETED
    last = server.requests[-1].messages
    assert any(text_of(m).startswith("posted comment 9001 on PROJ-7") for m in last)  # kept verbatim


def test_a_message_larger_than_the_whole_budget_is_offloaded_and_the_run_completes(scripted: Start) -> None:
    """Was: 'compaction cannot free enough: the newest messages alone …' (the run failed). The configured
    threshold (50,000) is above the window: the engine offloads at what the window allows instead."""
    message = paragraph(7, 4_000) + " Reply about TICK-4242."
    seen: dict[str, str] = {}

    def answer(request: ScriptedRequest) -> Reply:
        seen["last"] = text_of(request.messages[-2])
        return reply("second")

    server = scripted(reply("first"), answer, token_counter=lambda body: 0)
    flow = agent(server, virtual_file_threshold_tokens=50_000, virtual_file_preview_tokens=1_000)
    first = flow.run("hello")
    second = flow.run(message, state=first.state)  # one message larger than the whole budget
    assert second.status is RunStatus.COMPLETED and second.final_answer == "second"
    assert seen["last"].startswith("[virtual file ") and "TICK-4242" in seen["last"]
    [virtual] = [e for e in second.events if e["type"] == "virtual_file"]
    assert virtual["source"] == "user" and virtual["tokens"] > 7_000
    assert all(call["context"]["estimated_prompt_tokens"] <= 7_000 for call in second.model_calls)


def test_overflow_from_the_api_compacts_and_retries_once(scripted: Start) -> None:
    server = scripted(
        call("fetch", {"n": 1}),
        call("fetch", {"n": 2}),
        context_overflow(),
        reply("ok after compaction"),
        intercept=summaries,
    )
    record = agent(server, compaction_threshold=0.95).run("go")
    assert record.final_answer == "ok after compaction"
    [event] = compactions(record)
    assert event["trigger"] == "overflow"
    assert len(server.requests[3].body["messages"]) <= len(server.requests[2].body["messages"])


def test_chained_compactions_keep_early_facts_and_stay_valid(scripted: Start) -> None:
    server = scripted(
        *[talkative(n) for n in range(1, 13)],
        reply("fini"),
        intercept=lambda r: Reply(text="## Current work\nReading sections.") if r.is_compaction() else None,
    )
    record = agent(server).run(f"Read all sections of PROJ-42. {CONSTRAINT}")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert len(compactions(record)) >= 2
    turns = [r for r in server.requests if not r.is_compaction()]
    for request in turns:
        assert find_orphans(request.messages[:-1]) == []
        assert "ops@example.com" in str(request.messages) and "PROJ-42" in str(request.messages)


def test_the_archive_can_be_read_back_by_line_range(scripted: Start) -> None:
    def read_archive(request: ScriptedRequest) -> Reply:
        summary = next(text_of(m) for m in request.messages if text_of(m).startswith("[compacted context"))
        archive_id = re.search(r"full text in archive (file-\w+)", summary).group(1)
        return call("file_regex", {"id": archive_id, "pattern": "PROJ-42", "max_matches": 1})

    server = scripted(
        talkative(1),
        talkative(2),
        talkative(3),
        read_archive,
        lambda r: reply(next(iter(r.tool_results().values()))),
        intercept=summaries,
    )
    record = agent(server).run(f"Read the manual for PROJ-42. {CONSTRAINT}")
    assert "1 matching line(s)" in (record.final_answer or "") and "please" not in (record.final_answer or "")
    assert "PROJ-42" in (record.final_answer or "")


def test_rolling_masking_keeps_the_window_small(scripted: Start) -> None:
    files = InMemoryFileStore()
    server = scripted(*[call("fetch", {"n": n}) for n in range(1, 8)], reply("done"))
    record = agent(server, files=files, mask_threshold_tokens=3_000).run("read everything")
    assert record.status is RunStatus.COMPLETED
    assert compactions(record) == []  # masking alone kept the window under the threshold
    maskings = [e for e in record.events if e["type"] == "masking"]
    assert maskings and all(e["tokens_after"] < e["tokens_before"] for e in maskings)
    for request in server.requests:
        assert find_orphans(request.messages[:-1]) == []


def test_by_default_used_reads_give_way_to_pointers_that_get_them_back(scripted: Start) -> None:
    """Rolling masking is on by default: an early read becomes a pointer (or, once old, a row of a fold) that names
    what it held and says how to read it again; the model, needing the flagged invoice it saw there, reads it
    again and gets the exact lines."""
    from agent_runtime.context.history import FOLD_MARK, MASK_MARK
    from agent_runtime.runtime import build_agent

    rows = [f"INV-{n:04d} customer cust-{n % 37:02d} amount {n * 13 % 997}.00 status ok" for n in range(1, 1201)]
    rows[41] = "INV-0042 customer cust-05 amount 9999.00 status FLAGGED duplicate payment"
    files = InMemoryFileStore()
    ledger = files.put("\n".join(rows).encode(), name="invoices.csv")
    reads = [call("file_read", {"id": ledger.id, "start_line": a, "end_line": a + 149}) for a in range(1, 1200, 150)]
    seen: list[Any] = []

    def again(request: Any) -> Any:  # by now the first reads are a row of a fold: one call for the pages read
        seen.append(request)
        fold = next(text_of(m) for m in request.messages if text_of(m).startswith(FOLD_MARK))
        row = next(line for line in fold.splitlines() if line.startswith("- file_read") and "→ lines 1-" in line)
        assert "read in" in row and "named: INV-0001" in row, row  # consecutive pages merged, naming what they held
        arguments = json.loads(re.match(r"- file_read (\{.*\}) → ", row)[1])
        assert arguments["id"] == ledger.id and arguments["start_line"] == 1 and arguments["end_line"] >= 300
        return call("file_read", arguments)

    def answer(request: Any) -> Any:
        seen.append(request)
        return reply("INV-0042 is flagged: a duplicate payment of 9999.00.")

    server = scripted(*reads, again, answer)
    agent = build_agent(make_workflow(), model_for(server), files=files)  # the defaults: nothing set
    record = agent.run("Check every invoice; at the end, name the flagged one.")
    assert record.status.value == "completed"
    assert any(e["type"] == "masking" for e in record.events)
    results = [text_of(m) for r in server.requests for m in r.messages if m["role"] == "tool"]
    pointer = next(text for text in results if text.startswith(MASK_MARK) and "lines 1-150" in text)
    assert "the same file_read call" in pointer, pointer  # before the fold, the read was a pointer
    assert "INV-0001" in pointer and ledger.id in pointer  # it names what it held (the first of many ids)
    [back] = seen[1].tool_results().values()
    assert "42\tINV-0042 customer cust-05 amount 9999.00 status FLAGGED duplicate payment" in back
