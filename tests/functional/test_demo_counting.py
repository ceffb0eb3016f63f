"""A follow-up in the same thread ("how many error lines in total?" after a log was read) was answered with a line
that shared a word with it (a CSV's header). The promise, over drawn logs (short enough to stay in the message, or
kept as a file), attachments and the counted word, through the demo model over HTTP and the CLI's thread: the
answer is the count of the lines that say the word in what the thread read, or says plainly it cannot answer
(no line says it); never an unrelated line."""

from __future__ import annotations

import random
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

CSV = b"minute,requests,errors,p95_latency_ms\n14:00,957,1,137\n14:02,1007,430,2165\n"
HEADER = "minute,requests,errors,p95_latency_ms"


def log(errors: int, infos: int, seed: int) -> str:
    rows = [f"2026-11-20T14:00:{i:02}Z INFO  payments request ok latency_ms=5{i % 10}" for i in range(infos)]
    rows += [f"2026-11-20T14:02:{i:02}Z ERROR payments POST /charge failed: pool exhausted" for i in range(errors)]
    random.Random(seed).shuffle(rows)
    return "\n".join(rows)


@settings(max_examples=8, deadline=None)
@given(
    errors=st.integers(min_value=0, max_value=60),
    infos=st.integers(min_value=1, max_value=400),
    seed=st.integers(0, 99),
    attached=st.booleans(),
    asked=st.sampled_from(["how many error lines in total?", "how many errors are there?", "How many ERROR lines?"]),
)
def test_a_count_asked_in_the_thread_is_the_count_of_what_it_read(
    errors: int, infos: int, seed: int, attached: bool, asked: str
) -> None:
    files = InMemoryFileStore()
    if attached:
        files.put(CSV, name="metrics.csv", mimetype="text/csv")
    with ScriptedServer(demo_script(), model="demo") as server:
        agent = build_agent(load_workflow("slack-helper", REPO / "workflows"), model_for(server), files=files)
        first = agent.run("what went wrong?\n" + log(errors, infos, seed))
        answer = agent.run(asked, state=first.state).final_answer or ""
    assert HEADER not in answer, answer
    if errors:
        assert answer.startswith(f'{errors} line(s) say "error"'), (errors, answer)
    else:
        assert answer.startswith("I cannot answer that from what this thread read"), answer


def test_the_cli_thread_answers_the_count_of_the_pasted_logs_error_lines(tmp_path: Path) -> None:
    pasted = (REPO / "examples" / "incidents" / "pasted-log.txt").read_text()
    env = {"AGENT_STATE_DIR": str(tmp_path / "state")}
    metrics = str(REPO / "examples" / "incidents" / "metrics.csv")
    first = run_cli(
        "run", "slack-helper", "-q", "-t", "T-1", "-m", f"what went wrong?\n{pasted}", "-f", metrics, env=env
    )
    assert first.returncode == 0, first.stderr
    later = run_cli("run", "slack-helper", "-q", "-t", "T-1", "-m", "how many error lines in total?", env=env)
    assert later.returncode == 0, later.stderr
    errors = sum(" ERROR " in line for line in pasted.splitlines())
    assert later.stdout.startswith(f'{errors} line(s) say "error"') and HEADER not in later.stdout, later.stdout
    unknown = run_cli("run", "slack-helper", "-q", "-t", "T-1", "-m", "how many timeouts were there?", env=env)
    assert unknown.stdout.startswith("I cannot answer that from what this thread read"), unknown.stdout
