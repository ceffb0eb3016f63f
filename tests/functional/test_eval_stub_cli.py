"""Evals with stubs through the real CLI, as an engineer met them: a stubbed mutating Python tool still asks (and
``approve`` decides), described as the real one; a misspelt stub is a suite error naming the tool meant, and
nothing runs; ``eval add`` keeps a run's approvals so its case replays as the run went; ``runs stats`` leaves an
eval's runs out unless asked. The CLI in a subprocess, the scripted server over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from agent_runtime.approvals import ApprovalRequest, Decision
from agent_runtime.messages import text_of
from agent_runtime.models import OpenAIChatModel
from agent_runtime.runtime import Services, build_agent
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.toolsets import ToolEnv
from agent_runtime.workflows import load_workflow

REPO = Path(__file__).resolve().parents[2]
TOOLS = '''
import os
from pathlib import Path
from agent_runtime import tool


@tool(mutating=True)
def mark_merged(pr: str) -> str:
    """Mark a pull request :merged: in the team channel.

    Args:
        pr: Its number, like #12.
    """
    Path(os.environ["PR_LOG"]).write_text(f"the real tool marked {pr}")
    return f"marked {pr}"
'''
FLOW = """\
name: pr-job
description: Marks merged pull requests.
prompt: You mark merged pull requests with mark_merged.
model: {name: gpt-4.1, context_window: 128000, max_output_tokens: 1024}
tools: {python: [pr_tools]}
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    for name in ("workflows", "evals", "tools"):
        (tmp_path / name).mkdir()
    (tmp_path / "tools" / "pr_tools.py").write_text(TOOLS)
    (tmp_path / "workflows" / "pr-job.yaml").write_text(FLOW)
    yield tmp_path


def env_of(project: Path, server: ScriptedServer, state: str = "state") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))}
    return env | {"AGENT_TOOLS_PATH": str(project / "tools"), "AGENT_WORKFLOWS_DIR": str(project / "workflows"),
                  "AGENT_EVALS_DIR": str(project / "evals"), "AGENT_STATE_DIR": str(project / state),
                  "PR_LOG": str(project / "real.log"), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "t",
                  "PYTHONPATH": str(REPO / "layers" / "runtime")}  # fmt: skip


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_runtime", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)  # fmt: skip


def marking(request: ScriptedRequest) -> Any:
    """Marks #12, then #14, then says what each call returned."""
    done = [text_of(m) for m in request.messages if m["role"] == "tool"]
    if len(done) < 2:
        return call("mark_merged", {"pr": ["#12", "#14"][len(done)]})
    return reply(" | ".join(done))


def suite(project: Path, **case: Any) -> None:
    cases = [{"name": "marks", "message": "Mark the merged pull requests.", **case}]
    (project / "evals" / "pr-job.yaml").write_text(yaml.safe_dump({"cases": cases}))


@pytest.mark.parametrize("approve", ["none", "all"])
def test_a_stubbed_mutating_python_tool_asks_and_is_described_as_itself(project: Path, approve: str) -> None:
    suite(project, stubs={"mark_merged": "marked (stub)"}, **({"approve": approve} if approve == "all" else {}))
    with ScriptedServer([marking] * 3) as server:
        done = cli(env_of(project, server), "eval", "pr-job", "--json", str(project / "out.json"))
        [offered] = [s["function"] for s in server.requests[0].body["tools"] if s["function"]["name"] == "mark_merged"]
    assert (
        offered["description"].startswith("Mark a pull request :merged:")
        and "pr" in offered["parameters"]["properties"]
    )
    answer = json.loads((project / "out.json").read_text())["cases"][0]["runs"][0]["answer"]
    if approve == "none":  # as --approve none: denied, never run
        assert answer.count("denied by the eval case (approve: none)") == 2, answer
    else:
        assert answer == "marked (stub) | marked (stub)" and done.returncode == 0, done.stderr
    assert not (project / "real.log").exists()  # the real tool never ran


def test_a_misspelt_stub_is_a_suite_error_and_nothing_runs(project: Path) -> None:
    suite(project, stubs={"mark_merge": "marked (stub)"}, approve="all")
    with ScriptedServer([marking] * 3) as server:
        done = cli(env_of(project, server), "eval", "pr-job")
        asked = len(server.requests)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert "cases[0] (marks).stubs.mark_merge: the workflow has no tool 'mark_merge'; did you mean 'mark_merged'?" in (
        done.stderr
    )
    assert asked == 0 and not (project / "real.log").exists()


class Desk:
    """A person who approves #14 and denies #12."""

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        return (Decision.APPROVED if "#14" in request.summary else Decision.DENIED), "U0LEAD"


def test_eval_add_keeps_the_runs_approvals_and_the_case_replays_as_the_run_went(project: Path) -> None:
    with ScriptedServer([marking] * 3) as server:
        env = env_of(project, server)
        runs = RunStore(LocalStore(project / "state"))
        tools = ToolEnv.from_env({"AGENT_TOOLS_PATH": env["AGENT_TOOLS_PATH"]})
        os.environ["PR_LOG"] = env["PR_LOG"]
        try:
            agent = build_agent(load_workflow("pr-job", project / "workflows"),
                                OpenAIChatModel("gpt-4.1", client=server.client()),
                                Services(runs=runs, approver=Desk(), tool_env=tools))  # fmt: skip
            record = agent.run("Mark the merged pull requests.")
        finally:
            del os.environ["PR_LOG"]
    assert record.final_answer.startswith("ERROR: not run: this mark_merged call was denied by U0LEAD")
    assert (project / "real.log").read_text() == "the real tool marked #14"
    (project / "real.log").unlink()
    added = cli(env, "eval", "add", "pr-job", "--from-run", record.run_id, "--name", "mixed")
    assert added.returncode == 0, added.stderr
    case = yaml.safe_load((project / "evals" / "pr-job" / "mixed.yaml").read_text())["cases"][0]
    assert [(rule["tool"], rule["when"], rule["decision"]) for rule in case["approve"]] == [
        ("mark_merged", {"pr": "^\\#12$"}, "denied"), ("mark_merged", {"pr": "^\\#14$"}, "approved")]  # fmt: skip
    assert case["stubs"] == {"mark_merged": {"rules": [{"when": {"pr": "^\\#14$"}, "returns": "marked #14"}]}}
    with ScriptedServer([marking] * 3) as server:
        replay = cli(env_of(project, server, "elsewhere"), "eval", "pr-job", "mixed", "--json", str(project / "r.json"))
    assert replay.returncode == 0, replay.stdout + replay.stderr
    answer = json.loads((project / "r.json").read_text())["cases"][0]["runs"][0]["answer"]
    assert answer.startswith("ERROR: not run: this mark_merged call was denied by the eval case (approve[0])")
    assert answer.endswith(" | marked #14") and not (project / "real.log").exists()


def test_runs_stats_leaves_an_evals_runs_out_unless_asked(project: Path) -> None:
    suite(project, stubs={"mark_merged": "marked (stub)"}, approve="all")
    with ScriptedServer([marking] * 3) as server:
        env = env_of(project, server)
        assert cli(env, "eval", "pr-job", "-q").returncode == 0
    listed = json.loads(cli(env, "runs", "list", "--json").stdout)
    assert [row["run_id"][:5] for row in listed] == ["eval-"]  # runs list shows it as an eval's
    stats = cli(env, "runs", "stats")
    assert stats.returncode == 0 and "0 run(s) since" in stats.stdout
    assert "1 run(s) of eval cases left out (--evals counts them)" in stats.stdout
    counted = json.loads(cli(env, "runs", "stats", "--evals", "--json").stdout)
    assert counted["runs"] == 1 and [(g["workflow"], g["trigger"]) for g in counted["groups"]] == [("pr-job", "eval")]
    assert counted["evals_left_out"] == 0
