"""Run events: typed in the process, flat JSON in the stored record, the same keys as before they were typed."""

from __future__ import annotations

import json

from agent_runtime import RunRecord
from agent_runtime.events import Calibrated, Compaction, FileRead, RunEvent


def test_an_event_is_stored_flat_with_its_type_and_time() -> None:
    read = FileRead(file="file-1", tool="file_read", turn=2, lines=[1, 40])
    assert read.to_dict() == {"type": "file_read", "at": read.at, "file": "file-1", "tool": "file_read", "turn": 2,
                              "lines": [1, 40]}  # fmt: skip
    assert read["type"] == "file_read" and dict(read) == read.to_dict()  # a mapping of its JSON, as stored


def test_optional_fields_and_details_are_left_out_or_flattened() -> None:
    assert set(Calibrated(trigger="usage", scale=1.3).to_dict()) == {"type", "at", "trigger", "scale"}
    event = Compaction(turn=3, number=1, trigger="threshold", tactic="summary", tokens_before=9_000,
                       tokens_after=2_000, archive_file="file-a", extra={"messages_before": 40})  # fmt: skip
    assert event.to_dict()["messages_before"] == 40 and "extra" not in event.to_dict()


def test_a_record_keeps_typed_events_and_a_hook_s_own_and_stores_both_as_json() -> None:
    record = RunRecord("run-1", "flow", "gpt-4o")
    record.event(FileRead(file="file-1", tool="file_regex", turn=1, bytes=[0, 99]))
    record.event("my_hook_saw", count=3)  # a user's hook: a name and its data
    assert [type(e).__name__ for e in record.events_of(FileRead)] == ["FileRead"]
    assert all(isinstance(e, RunEvent) for e in record.events)
    stored = json.loads(json.dumps(record.to_dict()))["events"]
    assert [e["type"] for e in stored] == ["file_read", "my_hook_saw"]
    assert stored[0]["bytes"] == [0, 99] and "lines" not in stored[0] and stored[1]["count"] == 3
