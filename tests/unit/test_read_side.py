"""A stored run reads back as one typed value (``views.StoredRun``): any record ``RunRecord.to_dict()`` makes, and
any two invocations ``merged_invocations`` joins, parses back — its events to their own classes, compared by type —
and every reader (transcript, page, chart, figures) renders it the same from memory as from the store. A resumed
run reads as one: each invocation's calls, events and helpers, its usage summed, its duration from the first start
to the last end. A record an earlier version wrote (any of today's keys missing) still reads; one that does not
read as a run says where."""

from __future__ import annotations

import ast
import json
import re
import tempfile
import typing
from collections import Counter
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import messages as m
from agent_runtime.events import KINDS, Custom, RunEvent, read_event
from agent_runtime.pages import RunPage, render
from agent_runtime.reading.chart import run_chart
from agent_runtime.reading.figures import Figures, figures
from agent_runtime.reading.show import transcript
from agent_runtime.record import RunRecord, RunStatus, merged_invocations
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.views import StoredRun, Unreadable, read_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.functional.stored_run import fixture

TEXT = st.text(max_size=12)
NUMBER = st.integers(0, 10**6)
FLOAT = st.floats(0, 10**4, allow_nan=False)
LEAF = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | TEXT
TIMES = st.datetimes(datetime(2026, 1, 1), datetime(2027, 1, 1), timezones=st.just(UTC)).map(
    lambda moment: moment.isoformat(timespec="milliseconds")
)
PARTS = ("system", "tools", "summary", "files inline", "history")


def of_type(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a field's type, as a component would record them."""
    origin, args = typing.get_origin(hint) or hint, typing.get_args(hint)
    if args and type(None) in args:
        return st.none() | of_type(next(a for a in args if a is not type(None)))
    simple = {str: TEXT, int: st.integers(-(10**9), 10**9), float: FLOAT, bool: st.booleans()}
    if origin in simple:
        return simple[origin]
    if origin is list:
        return st.lists(of_type(args[0]), max_size=3)
    return st.dictionaries(TEXT, LEAF, max_size=3)  # a mapping of details


def event_of(kind: type[RunEvent]) -> st.SearchStrategy[RunEvent]:
    hints = typing.get_type_hints(kind)
    own = {item.name for item in fields(kind)} | {"type", "at"}
    given_ = {item.name: of_type(hints[item.name]) for item in fields(kind) if item.name not in ("at", "extra")}
    if "extra" in own:  # a compaction's details sit beside its fields in the stored JSON
        given_["extra"] = st.dictionaries(TEXT.filter(lambda key: key not in own), LEAF, max_size=3)
    return st.builds(kind, at=TIMES, **given_)


NOT_TYPE_OR_AT = TEXT.filter(lambda key: key not in ("type", "at"))
CUSTOM = st.builds(Custom, at=TIMES, name=TEXT.filter(lambda name: name not in KINDS),
                   extra=st.dictionaries(NOT_TYPE_OR_AT, LEAF, max_size=3))  # fmt: skip
EVENTS = st.sampled_from(sorted(KINDS)).flatmap(lambda name: event_of(KINDS[name])) | CUSTOM


@st.composite
def model_call(draw: st.DrawFn, turn: int) -> dict[str, Any]:
    """A call as ``ModelResponse.to_record()`` and the context engine leave it, or a failed attempt."""
    counts = ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens")
    usage = draw(st.none() | st.fixed_dictionaries(dict.fromkeys(counts, NUMBER)))
    if draw(st.booleans()):
        return {"turn": turn, "model": "gpt-4o", "outcome": "failed", "attempts": 1, "error": draw(TEXT),
                "latency_ms": draw(FLOAT), "received_tokens": draw(NUMBER), "usage": None}  # fmt: skip
    entry = {"turn": turn, "model": draw(TEXT), "finish_reason": "stop", "tool_calls": draw(NUMBER), "attempts": 1,
             "latency_ms": draw(FLOAT), "usage": usage, "cost_usd": draw(st.none() | FLOAT)}  # fmt: skip
    if draw(st.booleans()):
        split = {part: draw(NUMBER) for part in PARTS}
        entry["context"] = {"split": split, "usable": draw(NUMBER), "compaction_at": draw(NUMBER), "drift": 3}
    optional = {"first_token_ms": FLOAT, "purpose": st.just("compaction"), "usage_estimated": TEXT}
    return entry | draw(st.fixed_dictionaries({}, optional=optional))


TOOL_CALL = st.builds(
    lambda turn, name, flags, extra: {"turn": turn, "executed": flags[0], "id": f"call_{turn}", "name": name,
                                      "is_error": flags[1], "mutating": flags[2], "duration_ms": 1.5} | extra,
    st.integers(0, 6), TEXT, st.tuples(st.booleans(), st.booleans(), st.booleans()),
    st.fixed_dictionaries({}, optional={"unknown": st.just(True), "refused": st.just("limit")}),
)  # fmt: skip
SOURCES = st.sampled_from(["attachment", "virtual", "extracted", "archive"])
FILE = st.builds(lambda n, name, source: {"id": f"file-{n}", "name": name, "mimetype": "text/plain", "size_bytes": n,
                                          "source": source}, st.integers(0, 5), TEXT, SOURCES)  # fmt: skip


@st.composite
def records(draw: st.DrawFn, run_id: str = "run-1", depth: int = 1) -> RunRecord:
    """A run's record as the loop leaves it: calls by turn, tool calls, events of every kind, files, helpers."""
    record = RunRecord(run_id, draw(TEXT), draw(TEXT), status=draw(st.sampled_from(list(RunStatus))))
    record.final_answer, record.stop_reason = draw(st.none() | TEXT), draw(st.none() | TEXT)
    record.started_at, record.ended_at = draw(TIMES), draw(st.none() | TIMES)
    turns = draw(st.lists(st.integers(1, 6), max_size=5))
    record.model_calls = [draw(model_call(turn)) for turn in turns]
    record.tool_calls = draw(st.lists(TOOL_CALL, max_size=4))
    record.events = draw(st.lists(EVENTS, max_size=6))
    record.files = draw(st.lists(FILE, max_size=3))
    for source, dollars in draw(st.lists(st.tuples(st.sampled_from(["run", "compaction"]), FLOAT), max_size=2)):
        record.ledger.charge(dollars, source=source)
    if depth:
        helpers = draw(st.lists(records(f"{run_id}.sub", depth - 1), max_size=2))
        record.children = [helper.to_dict() for helper in helpers]
    return record


def stored(data: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(json.dumps(data)))


def readings(run: StoredRun) -> tuple[str, str, str, Figures]:
    """What every reader makes of a run: the transcript, the page, the chart (or why there is none), figures."""
    try:
        chart = run_chart(run)
    except ValueError as error:
        chart = str(error)
    history = [m.user("go"), m.assistant("ok")]
    return transcript(run, history), render(RunPage(run, history)), chart, figures(run, "cli")


SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=30, deadline=None, suppress_health_check=SLOW)
@given(record=records())
def test_any_record_parses_back_and_reads_the_same_from_memory_and_from_the_store(record: RunRecord) -> None:
    with tempfile.TemporaryDirectory() as root:
        runs = RunStore(LocalStore(Path(root)))
        runs.save_record(record)
        loaded = runs.load_run(record.run_id)
    here = read_run(record.to_dict())
    assert loaded == here and loaded.events == tuple(record.events)  # each event its own class again, equal
    assert [type(event) for event in loaded.events] == [type(event) for event in record.events]
    assert [helper.run_id for helper in loaded.helpers] == [c["run_id"] for c in record.children]
    assert readings(loaded) == readings(here)


@settings(max_examples=25, deadline=None, suppress_health_check=SLOW)
@given(first=records(), second=records())
def test_two_invocations_read_as_one_run_everywhere(first: RunRecord, second: RunRecord) -> None:
    second.started_at = first.started_at + "1"  # a later invocation of the same run (another start)
    with tempfile.TemporaryDirectory() as root:
        runs = RunStore(LocalStore(Path(root)))
        runs.save_record(first)
        runs.save_record(second)
        whole = runs.load_run(first.run_id)
    one, two = read_run(stored(first.to_dict())), read_run(stored(second.to_dict()))
    assert whole is not None and whole == read_run(stored(merged_invocations(first.to_dict(), second.to_dict())))
    assert whole.invocations == 2 and (whole.started_at, whole.ended_at) == (first.started_at, second.ended_at)
    assert (whole.status, whole.final_answer, whole.cost_usd) == (two.status, two.final_answer, two.cost_usd)
    for part in ("model_calls", "tool_calls", "events", "children"):
        assert getattr(whole, part) == getattr(one, part) + getattr(two, part), part
    assert whole.usage.total_tokens == one.usage.total_tokens + two.usage.total_tokens
    assert whole.duration_s == read_run({"started_at": first.started_at, "ended_at": second.ended_at}).duration_s
    shown = figures(whole, "cli")
    assert shown.model_calls == len(one.model_calls) + len(two.model_calls)
    assert shown.tools == figures(one, "cli").tools + figures(two, "cli").tools
    assert shown.approvals == figures(one, "cli").approvals + figures(two, "cli").approvals
    drawn = {call.turn for call in (*one.model_calls, *two.model_calls) if call.context is not None}
    if drawn:  # one panel for the run: each invocation's turns in it
        svg = run_chart(whole).split('<g class="panel"')[1]
        assert {int(turn) for turn in _turns(svg)} == drawn


def _turns(svg: str) -> list[str]:
    return [part.split('"', 1)[0] for part in svg.split('<g class="turn" data-turn="')[1:]]


@settings(max_examples=60, deadline=None)
@given(event=EVENTS)
def test_a_stored_event_comes_back_to_its_class(event: RunEvent) -> None:
    back = read_event(stored(event.to_dict()))
    assert type(back) is type(event) and back == event and back.to_dict() == stored(event.to_dict())


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(sorted(KINDS)),
    data=st.dictionaries(TEXT.filter(lambda key: key != "type"), LEAF | st.lists(LEAF, max_size=2), max_size=5),
)
def test_an_event_of_another_version_or_damaged_is_kept_never_dropped(name: str, data: dict[str, Any]) -> None:
    """Missing fields read as empty; a field of another type keeps the event whole, as a generic one."""
    event = read_event({**data, "type": name})
    if isinstance(event, Custom):
        assert event.name == name and event.to_dict() == {"type": name, "at": "", **data}
    else:
        assert type(event) is KINDS[name]


def test_todays_record_fixture_reads_as_one_run_in_every_reader() -> None:
    run = read_run(fixture())
    assert run.invocations == 2 and run.status == "completed" and len(run.helpers) == 1
    assert [type(event).__name__ for event in run.events].count("RunStarted") == 2
    transcript_text, page, chart, numbers = readings(run)
    assert "approval: restart_service approved by U0LEAD" in transcript_text and "U0DANA: good" in page
    assert chart.count('<g class="panel"') == 2 and numbers.approvals == 1 and len(numbers.approval_waits) == 1
    assert numbers.tools == Counter({"load_skill": 1, "subagent": 1, "restart_service": 1, "file_read": 2})


def keys(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path of a JSON value (events' ``type`` left: it names what the rest is)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() if k != "type" for p in [(*path, k), *keys(v, (*path, k))]]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in keys(v, (*path, i))]
    return []


def without(value: Any, paths: list[tuple[Any, ...]]) -> Any:
    found = json.loads(json.dumps(value))
    for path in sorted(paths, key=len, reverse=True):
        parent = found
        try:
            for step in path[:-1]:
                parent = parent[step]
            del parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            pass  # its parent went first
    return found


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_record_an_earlier_version_wrote_still_reads(data: st.DataObject) -> None:
    """Any of today's keys missing (a field added since, a part never written) reads as its default."""
    record = fixture()
    paths = [p for p in keys(record) if not isinstance(p[-1], int)]
    older = without(record, data.draw(st.lists(st.sampled_from(paths), max_size=12, unique=True)))
    readings(read_run(older))


@pytest.mark.parametrize(
    ("damage", "where"),
    [({"usage": [1, 2]}, "usage"), ({"model_calls": [{"turn": "two"}]}, "model_calls[0].turn"),
     ({"events": ["not an event"]}, "events[0]"), ({"children": [{"cost_usd": "a lot"}]}, "children[0].cost_usd")],
)  # fmt: skip
def test_a_record_that_does_not_read_as_a_run_says_where(damage: dict[str, Any], where: str) -> None:
    with pytest.raises(Unreadable, match=r"the run's record cannot be read \(" + re.escape(where)):
        read_run(fixture() | damage)


PACKAGE = Path(__file__).parents[2] / "layers" / "runtime" / "agent_runtime"
# Where a reader still calls .get: on the checkpoint's history (typed messages), on the case it builds, or reading
# the trigger event (typed on the trigger path: each read kept in one small function).
ALLOWED: dict[str, dict[str, set[str]]] = {
    "reading/chart.py": {}, "reading/figures.py": {}, "pages/html.py": {}, "service/answer.py": {}, "runtime.py": {},
    "reading/show.py": {"receivers": {"message"}}, "evals/from_run.py": {"receivers": {"m", "message", "case"}},
    "reading/stats.py": {"functions": {"_source"}}, "pages/build.py": {"functions": {"_started"}},
    "cli/runs.py": {"functions": {"_wake"}}, "cli/running.py": {"functions": {"from_dict"}},
    "service/reports.py": {"functions": {"_count_rating", "_private", "_where"}},
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_no_reader_reads_a_stored_record_with_get(module: str) -> None:
    """Every reader reads the typed value: a ``.get("key")`` over a stored record is the parse-back's alone
    (``views``); a reader keeps a lookup in a table of its own (a mark by status, a cost by turn)."""
    tree = ast.parse((PACKAGE / module).read_text())
    within = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        keyed = isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
        if keyed and isinstance(node.func, ast.Attribute) and node.func.attr == "get":  # .get("key"): JSON's way
            function = within.get(node)
            while function is not None and not isinstance(function, ast.FunctionDef):
                function = within.get(function)
            name, receiver = getattr(function, "name", "<module>"), ast.unparse(node.func.value)
            allowed = ALLOWED[module]
            if name not in allowed.get("functions", ()) and receiver not in allowed.get("receivers", ()):
                found.append(f"{module}:{node.lineno} {name}: {ast.unparse(node)}")
    assert found == []
