"""A newcomer's "what went wrong?" with a log pasted and metrics.csv attached was answered "*Review of metrics.csv*:
Close to ready — 0 point(s)": the demo model reviewed the first file it saw. The promise, over the question's kind
(what went wrong, feedback on a doc, anything else) and any combination and order of a pasted log (short enough to
stay in the message, or kept as a file), an attached log, an attached document and an attached CSV, through
build_agent and the demo model over HTTP (and the CLI for the newcomer's own case): the answer is about what was
asked (the log's first error when asked what went wrong and a log is there; the document's review when asked for
feedback and a document is there), a CSV is never reviewed as prose, and no internals are shown."""

from __future__ import annotations

from pathlib import Path

from agent_runtime.files import InMemoryFileStore
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.demo import demo_script
from agent_runtime.workflows import load_workflow
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tests.conftest import REPO, model_for
from tests.demo_support import leaks

ASKED = {
    "failure": ["what went wrong?", "Why did it fail?", "what happened here?", "why did checkout break?"],
    "review": ["can you review this doc?", "feedback on this design please", "Review this, please"],
    "other": ["hello", "thanks!", "can you summarise these?"],
}
DOC = b"# Retry design\n\n## Owner\nTODO: budget\n\n## Open questions\n- Who owns the retry budget?\n"
CSV = b"minute,requests,errors,p95_latency_ms\n14:00,957,1,137\n14:02,1007,430,2165\n14:03,981,403,2539\n"
MATERIAL = ["pasted", "log", "doc", "csv"]


def log(service: str, ok: int, errors: int, failure: str) -> list[str]:
    rows = [f"2026-11-20T14:00:{i % 60:02}Z INFO  {service} request ok order=ord-{i:05} latency_ms=5{i % 10}"
            for i in range(ok)]  # fmt: skip
    return rows + [f"2026-11-20T14:02:{i % 60:02}Z ERROR {service} {failure} order=ord-9{i:04}" for i in range(errors)]


@settings(max_examples=14, deadline=None)
@given(
    kind=st.sampled_from(sorted(ASKED)),
    pick=st.integers(0, 3),
    material=st.permutations(MATERIAL).flatmap(lambda order: st.sets(st.sampled_from(order)).map(
        lambda chosen: [m for m in order if m in chosen])),
    long=st.booleans(),
    ok=st.integers(1, 40),
    errors=st.integers(1, 30),
)  # fmt: skip
def test_the_answer_is_about_what_was_asked_and_never_reviews_a_csv(
    kind: str, pick: int, material: list[str], long: bool, ok: int, errors: int
) -> None:
    question = ASKED[kind][pick % len(ASKED[kind])]
    pasted = log("payments", ok + (900 if long else 0), errors, "POST /charge failed: pool exhausted")
    attached = log("ledger", ok, errors, "write failed: disk full")
    files, message = InMemoryFileStore(), question
    for item in material:
        if item == "pasted":
            message = question + "\n" + "\n".join(pasted)  # a long paste is kept as a file, a short one stays
        elif item == "log":
            files.put("\n".join(attached).encode(), name="ledger.log", mimetype="text/plain")
        elif item == "doc":
            files.put(DOC, name="design.md", mimetype="text/markdown")
        else:
            files.put(CSV, name="metrics.csv", mimetype="text/csv")
    with ScriptedServer(demo_script(), model="demo") as server:
        agent = build_agent(load_workflow("slack-helper", REPO / "workflows"), model_for(server), files=files)
        answer = agent.run(message).final_answer or ""
    said = (kind, material, answer)
    assert answer.strip() and not leaks(answer, files), said
    assert "Review of metrics.csv" not in answer, said  # data, never prose with "points"
    if kind == "failure" and "pasted" in material:
        assert answer.startswith("From the log you pasted:") and f"`{pasted[ok + (900 if long else 0)]}`" in answer
        assert f"{errors} error line(s)" in answer, said
    elif kind == "failure" and "log" in material:
        assert answer.startswith("From ledger.log:") and f"at line {ok + 1}: `{attached[ok]}`" in answer, said
    if kind == "failure" and "csv" in material and {"pasted", "log"} & {*material}:
        assert "errors: 1 at 14:00, peak 430 at 14:02" in answer, said  # the numbers beside the log
    if kind == "review" and "doc" in material:
        assert answer.startswith("*Review of design.md*"), said


def test_the_newcomers_first_turn_reads_the_pasted_log_not_the_csv(tmp_path: Path) -> None:
    pasted = (REPO / "examples" / "incidents" / "pasted-log.txt").read_text()
    metrics = str(REPO / "examples" / "incidents" / "metrics.csv")
    env = {"AGENT_STATE_DIR": str(tmp_path / "state")}
    ran = run_cli("run", "slack-helper", "-q", "-m", f"what went wrong?\n{pasted}", "-f", metrics, env=env)
    assert ran.returncode == 0, ran.stderr
    lines = pasted.splitlines()
    first = next(n for n, line in enumerate(lines, 2) if " ERROR " in line)  # the message's line 1 is the question
    errors = sum(" ERROR " in line for line in lines)
    assert ran.stdout.startswith("From the log you pasted:"), ran.stdout
    assert f"The first error is at line {first}: `{lines[first - 2]}`" in ran.stdout, ran.stdout
    assert f"{errors} error line(s)" in ran.stdout and "Review of" not in ran.stdout, ran.stdout
    assert "errors: 1 at 14:00, peak 512 at 14:07" in ran.stdout, ran.stdout
