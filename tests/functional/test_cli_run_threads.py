"""A CLI run without -t is the first turn of a thread of its own, named by its run id: its JSON, `runs list` and
`runs show` name that thread, a stop at its spend limit says the very command that goes on (was: "run --thread
ID", no ID anywhere), and `run -t <run id>` goes on from it. A later turn's `runs show` holds the thread's earlier
runs' words too: each run's part is marked where it begins (was: the whole thread under one header)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

import pytest
from agent_runtime.cli import main
from agent_runtime.testing import ScriptedRequest, ScriptedServer, reply
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

FLOW = "name: desk\ndescription: d\nprompt: You help.\nmodel: {name: gpt-4.1-mini, context_window: 128000}\n"


def said(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def echo(request: ScriptedRequest) -> object:
    """An answer naming every user message the model was sent, in order: what the thread carried."""
    users = [str(m.get("content")) for m in request.messages if m.get("role") == "user"]
    return reply("seen: " + " | ".join(re.findall(r"turn-\d+|hello|go on", " ".join(users))))


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "desk.yaml").write_text(FLOW)
    (tmp_path / "tight.yaml").write_text(FLOW.replace("name: desk", "name: tight") + "limits: {max_cost: 0.0001}\n")
    for key, value in {"AGENT_WORKFLOWS_DIR": tmp_path, "AGENT_STATE_DIR": tmp_path / "state", "AGENT_SANDBOX": "off",
                       "OPENAI_API_KEY": "k"}.items():  # fmt: skip
        monkeypatch.setenv(key, str(value))
    monkeypatch.delenv("AGENT_MODEL", raising=False)
    return tmp_path


def test_a_run_without_thread_is_its_own_thread_and_its_stop_says_how_to_go_on(
    desk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedServer([echo]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, out, err = said("run", "tight", "-m", "hello", "--json")
        assert code == 5, err  # the limit is below a first request: stopped before any
        run_id = json.loads(out)["run_id"]
        assert json.loads(out)["thread_id"] == run_id
        assert f"run tight --thread {run_id} --message 'go on', and --max-cost N" in err
        code, out, err = said("run", "tight", "--thread", run_id, "--message", "go on", "--max-cost", "1", "-q")
        assert code == 0 and out.strip() == "seen: hello | go on", err  # from where it stopped
    code, out, _ = said("runs", "list", "--json")
    assert [row["thread_id"] for row in json.loads(out)] == [run_id, run_id]
    code, out, _ = said("runs", "list")
    assert all(line.endswith(f"  {run_id}") for line in out.splitlines()[1:])
    code, out, _ = said("runs", "show", run_id, "--json")
    assert json.loads(out)["thread_id"] == run_id
    code, out, _ = said("runs", "show", run_id)
    assert f"thread {run_id}" in out.splitlines()[1] and "==" not in out  # a first turn: nothing to mark


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.integers(1, 4), named=st.booleans())
def test_each_runs_part_of_a_later_turn_is_marked_where_it_begins(
    turns: int, named: bool, desk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant: `runs show` of a thread's k-th turn has one mark per run, in the thread's order, each just
    before the person's words that started that run, the last one this run's; turn 1 has none."""
    thread = f"T-{turns}-{named}" if named else None
    ids: list[str] = []
    with ScriptedServer([echo] * turns) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        for n in range(1, turns + 1):
            code, out, err = said("run", "desk", "-m", f"turn-{n}", "--json", *(["-t", thread or ids[0]] if ids or
                                  thread else []))  # fmt: skip
            assert code == 0, err
            ids.append(json.loads(out)["run_id"])
    code, out, _ = said("runs", "show", ids[-1])
    lines = out.splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith("== ")]
    if turns == 1:
        assert marks == []
        return
    expected = [f"== run {run_id} ==" for run_id in ids[:-1]] + [f"== this run, {ids[-1]} =="]
    assert [lines[i] for i in marks] == expected
    assert [lines[i + 1] for i in marks] == [f"user: turn-{n}" for n in range(1, turns + 1)]
    assert "(this run's)" in lines[0] and f"thread {thread or ids[0]}" in lines[1]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(cut=27, swap=True)  # the last two swapped: drawn by a merge suite (was an IndexError)
@given(cut=st.integers(4, 27), swap=st.booleans())
def test_a_mistyped_run_id_as_thread_is_refused_with_the_id_meant(
    cut: int, swap: bool, desk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant: `-t` of a stored run's id with one character dropped (or two swapped) starts nothing: exit 2,
    the id meant named (as `runs show` says); a name of one's own starts its thread, as ever (was: the typo
    silently started a new thread)."""
    monkeypatch.setenv("AGENT_STATE_DIR", tempfile.mkdtemp(dir=desk))  # a store of this example's own
    with ScriptedServer([echo, echo]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, out, err = said("run", "desk", "-m", "hello", "--json")
        assert code == 0, err
        run_id = json.loads(out)["run_id"]
        if swap:  # two neighbours swapped: the last pair at most
            cut = min(cut, len(run_id) - 2)
        typo = (
            run_id[:cut] + run_id[cut + 1] + run_id[cut] + run_id[cut + 2 :]
            if swap
            else run_id[:cut] + run_id[cut + 1 :]
        )
        if typo != run_id:  # swapping two equal digits is no typo
            code, out, err = said("run", "desk", "-t", typo, "-m", "go on")
            assert code == 2 and out == "" and f"did you mean {run_id}?" in err and "--thread" in err, err
            assert len(server.requests) == 1  # nothing ran
        code, out, err = said("run", "desk", "-t", "my-desk", "-m", "go on", "-q")
        assert code == 0 and out.strip() == "seen: go on", err  # a name of one's own: a new thread
    code, out, _ = said("runs", "list", "--json")
    assert sorted(row["thread_id"] for row in json.loads(out)) == sorted([run_id, "my-desk"])
