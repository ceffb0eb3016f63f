"""Masking and folding rewrite the history only in batches that pay for the prompt-cache break they cause
(issue 34, point 2), through the real loop and a server that caches prefixes like OpenAI's.

The promise, over random trajectories (outputs of 40-5,000 tokens, parallel calls, kept and mutating tools,
notes of any length, three windows, two price ratios, three mask thresholds):
* between breaks the history is byte-stable: every request extends the previous one, but at a turn where the
  engine recorded a masking, a fold or a compaction;
* every break pays by the rule, with the tokens it lost measured from the two requests themselves, and a break
  followed by at least as many requests as the engine expected is repaid by them;
* nothing planted in an output is lost: it is in the last request, or in a file that request names.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent_runtime import build_agent
from agent_runtime.files import InMemoryFileStore
from agent_runtime.messages import find_orphans
from agent_runtime.models import OpenAIChatModel
from agent_runtime.record import RunRecord, RunStatus
from agent_runtime.testing import Reply, ScriptedRequest, ScriptedServer, reply
from agent_runtime.testing.steps import ScriptedCall
from agent_runtime.workflows import parse_workflow
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cache_support import COUNTER, act, compute, exact, read


def workflow(window: int, model: str, threshold: int, cap: int) -> Any:
    data = {"name": "w", "description": "d", "prompt": "You read and keep notes.",
            "model": {"name": model, "context_window": window, "max_output_tokens": 2_048},
            "limits": {"max_tool_calls": cap}, "context": {"mask_threshold_tokens": threshold}}  # fmt: skip
    return parse_workflow(data, file="w.yaml")


def script(steps: list[tuple[int, list[tuple[str, int]]]]) -> list[Reply]:
    replies, n = [], 0
    for note_words, batch in steps:
        made = []
        for kind, size in batch:
            n += 1
            made.append(ScriptedCall(kind, {"n": n} if kind == "act" else {"n": n, "size": size}))
        note = " ".join(f"noted{n}x{i}" for i in range(note_words)) or None
        replies.append(Reply(text=note, calls=tuple(made)))
    return [*replies, reply("done")]


def summaries(request: ScriptedRequest) -> Reply | None:
    return reply("## Current work\nReading sections.") if request.is_compaction() else None


def run(steps, window: int, model: str, threshold: int) -> tuple[RunRecord, list[ScriptedRequest], Any]:
    files = InMemoryFileStore()
    cap = sum(len(batch) for _, batch in steps) + 5
    with ScriptedServer(script(steps), token_counter=exact, intercept=summaries) as server:
        agent = build_agent(workflow(window, model, threshold, cap), OpenAIChatModel(model, client=server.client()),
                            tools=[read, compute, act], files=files)  # fmt: skip
        record = agent.run("Read every section.")
    return record, [r for r in server.requests if not r.is_compaction()], files


def history(request: ScriptedRequest) -> list[str]:
    return [json.dumps(m, sort_keys=True) for m in request.messages[:-1]]  # the status is the last message


def breaks(record: RunRecord) -> dict[int, list[dict[str, Any]]]:
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for event in record.to_dict()["events"]:
        if event["type"] in ("masking", "folding", "compaction"):
            by_turn.setdefault(event["turn"], []).append(event)
    return by_turn


def check_breaks(record: RunRecord, requests: list[ScriptedRequest]) -> int:
    """Returns how many breaks were checked against the turns that followed them."""
    turns = [call["turn"] for call in record.model_calls if not call.get("purpose") and call.get("usage")]
    assert len(turns) == len(requests)
    events, repaid = breaks(record), 0
    compactions = sorted(turn for turn, found in events.items() if any(e["type"] == "compaction" for e in found))
    for k in range(1, len(requests)):
        before, after = history(requests[k - 1]), history(requests[k])
        first = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), len(before))
        if first >= len(before):
            continue  # an extension: the whole previous history is served from the cache
        made = events.get(turns[k], [])
        assert made, f"request {k} rewrote message {first} with no masking, fold or compaction recorded"
        if any(e["type"] == "compaction" for e in made):
            continue  # forced by the window, not a choice
        lost = sum(COUNTER.message(json.loads(m)) for m in before[first:])
        estimates = [e["cache"] for e in made]
        assert sum(e["lost_tokens"] for e in estimates) == lost  # measured from the requests themselves
        for estimate in estimates:
            r, h = estimate["cached_ratio"], estimate["horizon"]
            assert (1 - r) * estimate["lost_tokens"] <= estimate["saved_tokens"] * (1 + r * h)  # it paid
            later = [t for t in turns[k + 1 :] if not any(c <= t for c in compactions if c > turns[k])]
            if len(later) >= h:  # the run went on as long as expected: the later requests repaid it
                assert (1 - r) * estimate["lost_tokens"] - estimate["saved_tokens"] <= (
                    r * estimate["saved_tokens"] * len(later)
                )
                repaid += 1
    return repaid


def check_cache_record(record: RunRecord) -> None:
    """Each call's record says what the engine kept byte-stable for the cache and what the server served from it:
    with the same tokenizer, the server's cache (from 1,024 tokens, in 128-token steps) serves exactly that."""
    for call in record.model_calls:
        if call.get("purpose") or not call.get("usage"):
            continue
        cache = call["context"]["cache"]
        prefix = cache["prefix_tokens"]
        assert cache["cached_tokens"] == ((prefix // 128) * 128 if prefix >= 1024 else 0), cache
        assert cache["cached_share"] == round(cache["cached_tokens"] / call["usage"]["prompt_tokens"], 4)


def findable(ident: str, request: ScriptedRequest, files: InMemoryFileStore) -> bool:
    final = json.dumps(request.messages)
    if re.search(rf"\b{ident}\b", final):
        return True
    named = set(re.findall(r"file-[0-9a-f]{6,}", final))
    stored = {meta.id for meta in files.list()}
    return any(ident in files.read(fid).decode("utf-8", "replace") for fid in named & stored)


SIZES = [40, 300, 1_500, 5_000]
STEP = st.tuples(
    st.integers(0, 60),  # words of the note
    st.lists(
        st.tuples(
            st.sampled_from(["read", "read", "read", "compute", "act"]), st.sampled_from([40, 300, 1_500, 5_000])
        ),
        min_size=1,
        max_size=3,
    ),
)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(
    steps=st.lists(STEP, min_size=3, max_size=36),
    window=st.sampled_from([16_000, 32_000, 128_000]),
    model=st.sampled_from(["gpt-4.1", "gpt-4o"]),  # cached input at a quarter and at half the price
    threshold=st.sampled_from([500, 2_000, 6_000]),
)
def test_every_cache_break_pays_and_the_prefix_is_stable_between_them(steps, window, model, threshold) -> None:
    record, requests, files = run(steps, window, model, threshold)
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    check_breaks(record, requests)
    check_cache_record(record)
    assert record.state is not None and find_orphans(record.state.messages) == []
    n = 0
    for _, batch in steps:
        for kind, _ in batch:
            n += 1
            tag = {"read": f"SEC-{n}", "compute": f"JOB-{n}", "act": f"ACT-{n}"}[kind]
            assert findable(tag, requests[-1], files), tag
