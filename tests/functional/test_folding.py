"""Old turns of masked outputs fold into rows, through the real loop (issue 34, point 2): a fold keeps each note
verbatim, each call and where its result is now, frees what the turns' structure cost, never parts a call from
its result, and never folds an action, a kept result or the newest turn. Masking an old output waits while the
cache break it would cause costs more than the run can still save."""

from __future__ import annotations

import json
import re
from typing import Any

from agent_runtime import build_agent
from agent_runtime.context import TokenCounter
from agent_runtime.context.cache import Break, horizon
from agent_runtime.context.history import FOLD_MARK, MASK_MARK
from agent_runtime.files import InMemoryFileStore
from agent_runtime.messages import find_orphans, text_of
from agent_runtime.models import OpenAIChatModel
from agent_runtime.record import RunStatus
from agent_runtime.testing import Reply, ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.testing.steps import ScriptedCall
from agent_runtime.workflows import parse_workflow

from tests.cache_support import act, compute, exact, prose, read

COUNTER = TokenCounter("gpt-4.1")


def workflow(cap: int = 80, threshold: int = 2_000) -> Any:
    data = {"name": "w", "description": "d", "prompt": "You read and keep notes.",
            "model": {"name": "gpt-4.1", "context_window": 128_000, "max_output_tokens": 2_048},
            "limits": {"max_tool_calls": cap}, "context": {"mask_threshold_tokens": threshold}}  # fmt: skip
    return parse_workflow(data, file="w.yaml")


def run(steps: list[Any], files: InMemoryFileStore, **kwargs: Any) -> tuple[Any, list[ScriptedRequest]]:
    with ScriptedServer(steps, token_counter=exact) as server:
        model = OpenAIChatModel("gpt-4.1", client=server.client())
        record = build_agent(workflow(**kwargs), model, tools=[read, compute, act], files=files).run("Read them all.")
    return record, server.requests


def folds(request: ScriptedRequest) -> list[str]:
    return [text_of(m) for m in request.messages if text_of(m).startswith(FOLD_MARK)]


def test_old_turns_fold_into_rows_that_keep_each_note_call_and_result(scripted: Any) -> None:
    files = InMemoryFileStore()
    notes = {n: f"Section {n - 1} names SEC-{n - 1}; the clause about retries is in it." for n in range(2, 26)}
    seen: dict[str, str] = {}

    def read_back(request: ScriptedRequest) -> Reply:  # the model wants section 3 again: the fold says where
        [fold, *_] = folds(request)
        seen["row"] = next(line for line in fold.splitlines() if line.startswith('- read {"n": 3,'))
        return call("file_read", {"id": re.search(r"→ (file-[0-9a-f]+)", seen["row"]).group(1)})

    steps = [Reply(text=notes.get(n), calls=(ScriptedCall("read", {"n": n, "size": 2_500}),)) for n in range(1, 26)]
    record, requests = run([*steps, read_back, reply("done")], files)
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    events = [e for e in record.to_dict()["events"] if e["type"] == "folding"]
    assert events and all(e["tokens_after"] < e["tokens_before"] for e in events)
    for request in requests:
        assert find_orphans(request.messages[:-1]) == []
    text = "\n".join(folds(requests[-1]))
    folded = [n for n in range(1, 26) if f'- read {{"n": {n}, "size": 2500}} → file-' in text]
    assert len(folded) == sum(e["turns"] for e in events) >= 10
    for n in folded:
        assert f"SEC-{n}" in text  # what the output named
        if n in notes:
            assert notes[n] in text.splitlines()  # the note, verbatim, on its own line
    calls = [c["function"]["arguments"] for m in requests[-1].messages for c in m.get("tool_calls") or []]
    assert not any(json.loads(a).get("n") in folded for a in calls if "n" in json.loads(a))  # gone from the turns
    [back] = requests[-1].tool_results().values()
    assert "SEC-3" in back and prose(2_500, 3, "SEC-3").splitlines()[0] in back  # exactly what read returned
    newest = requests[-2].messages[-3:-1]  # the newest turn (file_read and its result) stays as it was
    assert newest[0].get("tool_calls") and newest[1]["role"] == "tool"


def test_actions_kept_results_and_unmasked_outputs_never_fold(scripted: Any) -> None:
    files = InMemoryFileStore()
    steps: list[Any] = []
    for n in range(1, 41):
        batch = [ScriptedCall("read", {"n": n, "size": 1_500})]
        if n % 10 == 0:
            batch.append(ScriptedCall("act", {"n": n}))
        if n % 13 == 0:
            batch.append(ScriptedCall("compute", {"n": n, "size": 800}))
        steps.append(Reply(text=f"step {n}", calls=tuple(batch)))
    record, requests = run([*steps, reply("done")], files)
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert any(e["type"] == "folding" for e in record.to_dict()["events"])
    last = requests[-1].messages
    whole = {json.loads(c["function"]["arguments"])["n"] for m in last for c in m.get("tool_calls") or []
             if c["function"]["name"] in ("act", "compute")}  # fmt: skip
    assert whole == {10, 20, 30, 40, 13, 26, 39}  # their turns stayed turns, with their calls
    results = {m["tool_call_id"]: text_of(m) for m in last if m["role"] == "tool"}
    kept = [c["id"] for m in last for c in m.get("tool_calls") or [] if c["function"]["name"] != "read"]
    assert all(not results[i].startswith(MASK_MARK) for i in kept)  # actions and conclusions stay verbatim
    assert "done ACT-10" in json.dumps(last) and "JOB-13" in json.dumps(last)


def test_masking_an_old_output_waits_until_the_break_pays(scripted: Any) -> None:
    """A used output behind a large kept result: masking it would re-bill the kept result (cached until then) in
    full, so it waits until the run is long enough for the saving to repay that; then it is masked."""
    files = InMemoryFileStore()
    pair = (ScriptedCall("read", {"n": 1, "size": 2_000}), ScriptedCall("compute", {"n": 2, "size": 5_000}))
    first = Reply(calls=pair)
    small = [Reply(text=f"step {n}", calls=(ScriptedCall("read", {"n": n, "size": 100}),)) for n in range(3, 40)]
    record, requests = run([first, *small, reply("done")], files, cap=60)
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    [masking] = [e for e in record.to_dict()["events"] if e["type"] == "masking"]
    turns = [c["turn"] for c in record.model_calls]
    k = turns.index(masking["turn"])
    assert k > 1  # not at the first turn after the output was read, as a size threshold alone would
    estimate = masking["cache"]
    assert Break(estimate["lost_tokens"], estimate["saved_tokens"], estimate["horizon"], 0.25).pays

    def lost(at: int) -> int:  # the previous request's history from the output on, measured from the requests
        history = requests[at - 1].messages[:-1]
        index = next(i for i, m in enumerate(history) if m["role"] == "tool" and "SEC-1" in text_of(m))
        return sum(COUNTER.message(m) for m in history[index:])

    assert lost(k) == estimate["lost_tokens"]
    earlier = Break(lost(k - 1), estimate["saved_tokens"], horizon(turns[k - 1], 60 - (k - 1) - 1), 0.25)
    assert not earlier.pays  # one turn earlier it would not have paid
