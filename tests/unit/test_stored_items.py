"""Every kind of stored item keeps its stored shape: the JSON each writes is what earlier versions wrote, byte for
byte (items already stored read back, and a store's bytes do not change under a refactor), it reads back as the
item it was, and an item missing its keys reads as the defaults it always did. The examples were written by the
code before the items shared their boilerplate (a kind added without an example fails here)."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from typing import ClassVar

import pytest
from agent_runtime.inbound import TriggerEvent
from agent_runtime.stopping import StopRequest
from agent_runtime.stores import items as it
from hypothesis import given, settings
from hypothesis import strategies as st

CONNECTION = ("c2VhbGVk", "d3JhcHBlZA==")
EXAMPLES = [
    (it.Reply("posting"), '{"state": "posting"}'),
    (it.Reply("posted", 1200, 2), '{"state": "posted", "chars": 1200, "files": 2}'),
    (it.Reply("posting", text="the answer", rated=True), '{"state": "posting", "text": "the answer", "rated": true}'),
    (it.Progress("1700000000.000100"), '{"ts": "1700000000.000100"}'),
    (it.Streamed("1700000000.000200"), '{"ts": "1700000000.000200", "state": "open"}'),
    (it.Streamed("1.5", "gone"), '{"ts": "1.5", "state": "gone"}'),
    (it.ThreadBase(None), '{"version": null}'),
    (it.ThreadBase(7, ("f-1", "f-2")), '{"version": 7, "files": ["f-1", "f-2"]}'),
    (it.Asked(), "{}"),
    (it.Asked(ts="1.2"), '{"ts": "1.2"}'),
    (it.Asked(comment="10042", code="ab12"), '{"comment": "10042", "code": "ab12"}'),
    (it.Decided("approved", "U123", 1700000000.5), '{"decision": "approved", "by": "U123", "at": 1700000000.5}'),
    (it.Announced("C1", "1.5", "run r-1 answered ✓"), '{"channel": "C1", "ts": "1.5", "text": "run r-1 answered ✓"}'),
    (it.ActiveRun(None), '{"run_id": null}'),
    (it.ActiveRun("r-1"), '{"run_id": "r-1"}'),
    (it.LatestRun(None), '{"run_id": null}'),
    (it.LatestRun("r-2"), '{"run_id": "r-2"}'),
    (it.Deferred(), '{"messages": []}'),
    (it.Deferred(({"kind": "message", "n": 1},)), '{"messages": [{"kind": "message", "n": 1}]}'),
    (it.SpendRaise("2024-05-01", 2.5), '{"day": "2024-05-01", "dollars": 2.5, "by": "", "keys": []}'),
    (
        it.SpendRaise("2024-05-01", 2.5, "U1", ("k1", "k2")),
        '{"day": "2024-05-01", "dollars": 2.5, "by": "U1", "keys": ["k1", "k2"]}',
    ),
    (it.Pane(), '{"user": "", "viewing": null}'),
    (it.Pane("U1", "C9"), '{"user": "U1", "viewing": "C9"}'),
    (
        it.Connection(*CONNECTION, "local", "wf", "client-1"),
        '{"sealed": "c2VhbGVk", "wrapped_key": "d3JhcHBlZA==", "keyring": "local", "workflow": "wf", '
        '"client_id": "client-1", "scope": "", "expires_at": null, "connected_at": 0.0, "refreshed_at": 0.0}',
    ),
    (
        it.Connection(*CONNECTION, "kms:key-1", "wf", "client-1", "read write", 1700003600.0, 1700000000.0, 17e8),
        '{"sealed": "c2VhbGVk", "wrapped_key": "d3JhcHBlZA==", "keyring": "kms:key-1", "workflow": "wf", '
        '"client_id": "client-1", "scope": "read write", "expires_at": 1700003600.0, "connected_at": 1700000000.0, '
        '"refreshed_at": 1700000000.0}',
    ),
    (
        it.ConnectAsk("U1", "github", "wf", "r-1", "t-1", 1700000600.0),
        '{"person": "U1", "provider": "github", "workflow": "wf", "run_id": "r-1", "thread_id": "t-1", '
        '"expires_at": 1700000600.0, "status": "open"}',
    ),
    (
        it.ConnectAsk("U1", "github", "wf", "r-1", "t-1", 1700000600.0, "connected"),
        '{"person": "U1", "provider": "github", "workflow": "wf", "run_id": "r-1", "thread_id": "t-1", '
        '"expires_at": 1700000600.0, "status": "connected"}',
    ),
    (
        it.ConnectAttempt("ask-1", "U1", "github", "r-1", "verifier-xyz", 1700000600.0),
        '{"ask": "ask-1", "person": "U1", "provider": "github", "run_id": "r-1", "verifier": "verifier-xyz", '
        '"expires_at": 1700000600.0, "used": false}',
    ),
    (
        it.ConnectAttempt("ask-1", "U1", "github", "r-1", "verifier-xyz", 1700000600.0, used=True),
        '{"ask": "ask-1", "person": "U1", "provider": "github", "run_id": "r-1", "verifier": "verifier-xyz", '
        '"expires_at": 1700000600.0, "used": true}',
    ),
    (StopRequest("U1", 1.5, "slack"), '{"by": "U1", "at": 1.5, "via": "slack"}'),
    (
        TriggerEvent("slack", "mention", "Ev1", "hi", "U1", "t-1", "Ev1", {"channel": "C1"}),
        '{"source": "slack", "kind": "mention", "dedup_key": "Ev1", "text": "hi", "user": "U1", "thread_id": "t-1", '
        '"correlation_id": "Ev1", "reply_to": {"channel": "C1"}, "attributes": {}, "attachments": [], '
        '"workflow": null}',
    ),
]

# What an item stored without its keys (an older version's, a partial write) reads as.
EMPTY = {
    "active-run": it.ActiveRun(None),
    "announced": it.Announced("", "", ""),
    "approval#": it.Decided("", "", 0.0),
    "approval-asked#": it.Asked(),
    "connect-ask": it.ConnectAsk("", "", "", "", "", 0.0, "open"),
    "connect-attempt": it.ConnectAttempt("", "", "", "", "", 0.0, False),
    "connection": it.Connection("", "", "", "", "", "", None, 0.0, 0.0),
    "deferred": it.Deferred(()),
    "latest-run": it.LatestRun(None),
    "pane": it.Pane("", None),
    "progress": it.Progress(""),
    "reply": it.Reply("posting", 0, 0),
    "spend-raise": it.SpendRaise("", 0.0, "", ()),
    "stream": it.Streamed("", "open"),
    "thread-base": it.ThreadBase(None, None),
    "stop": StopRequest("someone", 0.0, ""),
}


def test_every_kind_writes_the_bytes_it_always_wrote_and_reads_them_back() -> None:
    for item, stored in EXAMPLES:
        assert json.dumps(item.to_data(), ensure_ascii=False) == stored, item
        assert it.parse(item.NAME + ("k-1" if item.NAME.endswith("#") else ""), json.loads(stored)) == item


def test_every_kind_has_an_example_and_reads_missing_keys_as_it_always_did() -> None:
    assert {kind for kind in it._KINDS} == {item.NAME for item, _ in EXAMPLES}
    for name, item in EMPTY.items():
        assert it.parse(name, {}) == item, name


# A field's values by its type: what a stored item of that type keeps as it was (an empty id reads as none).
TEXT = st.text(max_size=8)
VALUES = {
    "str": TEXT,
    "str | None": st.none() | TEXT.filter(bool),
    "float": st.floats(allow_nan=False, allow_infinity=False),
    "float | None": st.none() | st.floats(allow_nan=False, allow_infinity=False),
    "bool": st.booleans(),
    "tuple[str, ...]": st.lists(TEXT, max_size=3).map(tuple),
}
FIELDS = [
    kind
    for kind in vars(it).values()
    if isinstance(kind, type) and issubclass(kind, it.Fields) and kind is not it.Fields
]


@settings(max_examples=60)
@given(
    st.sampled_from(FIELDS).flatmap(
        lambda kind: st.builds(kind, *(VALUES[str(f.type)] for f in dataclasses.fields(kind)))
    )
)
def test_an_item_of_fields_reads_back_as_it_was_written(item: it.Fields) -> None:
    assert type(item).from_data(json.loads(json.dumps(item.to_data()))) == item


def test_a_kind_with_a_field_no_reader_knows_fails_where_it_is_declared() -> None:
    with pytest.raises(TypeError, match=r"'odd': no way to read when: datetime"):

        @it.stored
        @dataclasses.dataclass(frozen=True, slots=True)
        class Odd(it.Fields):
            NAME: ClassVar[str] = "odd"
            when: datetime

    assert it.kind_of("odd") is None
