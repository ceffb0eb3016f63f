"""``coordinator: script``: a Python function drives the run through the workflow's own tools and asks a model
only where it chooses — with approvals, resumes, the spend limit and evals as a model-driven run has them. The
merged-PR job: list pull requests, ask a model for a summary (JSON), mark each merged one (a mutating call that
waits for approval). Through build_agent, the real ``openai`` client and the scripted server over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import Deadline, RunStatus, Services
from agent_runtime.approvals import ApprovalRequest, Decision
from agent_runtime.config import RuntimeConfig
from agent_runtime.evals import EvalOptions, Runner, build_report, load_cases
from agent_runtime.models import OpenAIChatModel
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedServer, reply
from agent_runtime.workflows import load_workflow

REPO = Path(__file__).resolve().parents[2]
TOOLS = '''
import os
from pathlib import Path
from agent_runtime import tool
from agent_runtime.coordinator import ToolDenied


def log(line):
    path = Path(os.environ["PR_LOG"])
    path.write_text((path.read_text() if path.exists() else "") + line + "\\n")


@tool
def list_prs(repo: str) -> str:
    """List a repository's recent pull requests.

    Args:
        repo: owner/name.
    """
    log("list")
    return "#12 merged\\n#13 open\\n#14 merged"


@tool(mutating=True)
def mark_merged(pr: str) -> str:
    """Mark a pull request :merged: in the team channel.

    Args:
        pr: Its number, like #12.
    """
    log(f"mark {pr}")
    return f"marked {pr}"


def merged_job(run):
    listed = run.call("list_prs", repo="acme/api", step="list")
    merged = [line.split()[0] for line in listed.splitlines() if line.endswith("merged")]
    summary = run.ask("Summarise in one sentence: " + listed, step="summary",
                      schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    marked, refused = [], []
    for pr in merged:
        run.progress(f"marking {pr} :merged:")
        try:
            run.call("mark_merged", pr=pr, step=f"mark {pr}")
            marked.append(pr)
        except ToolDenied as denied:
            refused.append(f"{pr} ({denied.reason})")
    return f"Marked {', '.join(marked)}. {summary['text']}" + "".join(f" Not marked: {pr}." for pr in refused)


def broken_job(run):
    raise ValueError("no repository is configured")
'''
FLOW = """\
name: merged-prs
description: Marks merged pull requests, in code; a model only writes the summary.
prompt: You summarise pull requests.
coordinator: script
script: pr_job:merged_job
model: {{name: gpt-4o, context_window: 128000, max_output_tokens: 512}}
limits: {{max_tool_calls: 10{cost}}}
tools: {{python: [pr_job:list_prs, pr_job:mark_merged]}}
"""
SUMMARY = reply(json.dumps({"text": "Two of three pull requests are merged."}))


class Desk:
    """Decides from what people said; asks (pending) otherwise."""

    def __init__(self) -> None:
        self.said: dict[str, str] = {}
        self.asked: list[str] = []

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        self.asked.append(request.summary)
        decided = next((d for pr, d in self.said.items() if pr in request.summary), None)
        return (Decision(decided), "U0LEAD") if decided else (Decision.PENDING, None)


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in ("workflows", "evals", "tools", "state"):
        (tmp_path / name).mkdir()
    (tmp_path / "tools" / "pr_job.py").write_text(TOOLS)
    for key, folder in (("AGENT_TOOLS_PATH", "tools"), ("AGENT_WORKFLOWS_DIR", "workflows"),
                        ("AGENT_EVALS_DIR", "evals"), ("AGENT_STATE_DIR", "state")):  # fmt: skip
        monkeypatch.setenv(key, str(tmp_path / folder))
    monkeypatch.setenv("PR_LOG", str(tmp_path / "calls.log"))
    yield tmp_path


def agent_for(job: Path, server: ScriptedServer, desk: Any, cost: str = "") -> Any:
    (job / "workflows" / "merged-prs.yaml").write_text(FLOW.format(cost=cost))
    workflow = load_workflow("merged-prs", job / "workflows")
    return build_agent(workflow, OpenAIChatModel("gpt-4o", client=server.client()), Services(approver=desk))


def calls(job: Path) -> list[str]:
    return (job / "calls.log").read_text().splitlines()


def test_approvals_and_a_deadline_resume_without_repeating_finished_steps(job: Path) -> None:
    desk = Desk()
    with ScriptedServer([SUMMARY]) as server:  # one model call in all: the summary
        agent = agent_for(job, server, desk)
        late = lambda: 999.0 if (job / "calls.log").exists() else 100.0  # noqa: E731 (past it once a step ran)
        record = agent.run("go", deadline=Deadline(at=500.0, clock=late))
        assert record.status is RunStatus.SUSPENDED and "before step 'summary'" in (record.stop_reason or "")
        record = agent.run(state=record.state)  # the next invocation
        assert record.status is RunStatus.AWAITING_APPROVAL and calls(job) == ["list"]  # listed once
        desk.said["#12"] = "approved"
        record = agent.run(state=record.state)
        assert record.status is RunStatus.AWAITING_APPROVAL  # #12 ran; now #14 waits
        desk.said["#14"] = "approved"
        record = agent.run(state=record.state)
    assert record.status is RunStatus.COMPLETED
    assert record.final_answer == "Marked #12, #14. Two of three pull requests are merged."
    assert calls(job) == ["list", "mark #12", "mark #14"]  # each step once, across four invocations
    assert len(server.requests) == 1 and record.cost_usd() > 0  # the summary: asked once, priced


def test_a_scripts_progress_lines_show_in_the_working_message(job: Path) -> None:
    """run.progress(text) is the chat's "working…" line (as a model run's tool names are); never a step."""
    from agent_runtime.service.progress import ProgressHook

    shown: list[str] = []
    desk = Desk()
    desk.said |= {"#12": "approved", "#14": "approved"}
    (job / "workflows" / "merged-prs.yaml").write_text(FLOW.format(cost=""))
    workflow = load_workflow("merged-prs", job / "workflows")
    with ScriptedServer([SUMMARY]) as server:
        model = OpenAIChatModel("gpt-4o", client=server.client())
        hook = ProgressHook(shown.append, workflow="merged-prs", interval=0.0)
        record = build_agent(workflow, model, Services(approver=desk), hooks=[hook]).run("go")
    assert record.status is RunStatus.COMPLETED
    assert [line.split(" · ")[-1] for line in shown if "marking" in line] == ["marking #12 :merged:",
                                                                            "marking #14 :merged:"]  # fmt: skip
    assert "Working on it (merged-prs)" in shown[0]


def test_a_threads_next_turn_runs_its_steps_afresh(job: Path) -> None:
    """The journal is the run's: the thread's next message (a new run over the same state) does the job again."""
    from agent_runtime.stores.hook import new_turn

    desk = Desk()
    desk.said |= {"#12": "approved", "#14": "approved"}
    with ScriptedServer([SUMMARY, SUMMARY]) as server:
        agent = agent_for(job, server, desk)
        first = agent.run("go")
        again = agent.run("and again", state=new_turn(first.state, "run-next"))
    assert (first.status, again.status) == (RunStatus.COMPLETED, RunStatus.COMPLETED)
    assert calls(job) == ["list", "mark #12", "mark #14"] * 2 and len(server.requests) == 2


def test_a_denied_step_is_the_scripts_to_catch_and_a_script_error_is_the_runs_failure(job: Path) -> None:
    desk = Desk()
    desk.said |= {"#12": "denied", "#14": "approved"}
    with ScriptedServer([SUMMARY, reply("not json at all")]) as server:
        record = agent_for(job, server, desk).run("go")
        assert record.status is RunStatus.COMPLETED and calls(job) == ["list", "mark #14"]  # #12 was not run
        assert record.final_answer == (
            "Marked #14. Two of three pull requests are merged. Not marked: #12 (denied by U0LEAD; it did not run)."
        )  # the script caught ToolDenied and said so
        (job / "calls.log").unlink()
        failed = agent_for(job, server, desk).run("go again")
    assert failed.status is RunStatus.FAILED and "not the JSON asked for" in (failed.stop_reason or "")
    (job / "workflows" / "merged-prs.yaml").write_text(FLOW.format(cost="").replace("merged_job", "broken_job"))
    with ScriptedServer([]) as server:
        workflow = load_workflow("merged-prs", job / "workflows")
        broken = build_agent(workflow, OpenAIChatModel("gpt-4o", client=server.client()), Services()).run("go")
    assert broken.status is RunStatus.FAILED
    line = TOOLS.splitlines().index('    raise ValueError("no repository is configured")') + 1
    assert broken.stop_reason == (  # its words and where, never a traceback
        f"the script failed: ValueError: no repository is configured (at pr_job.py:{line} in broken_job)"
    )


def test_an_ask_on_a_server_that_omits_usage_is_charged_an_estimate(job: Path) -> None:
    """Script x a server without usage: the ask is priced like any call of the run (an estimate, marked so)."""
    desk = Desk()
    desk.said |= {"#12": "approved", "#14": "approved"}
    with ScriptedServer([SUMMARY], usage=False) as server:
        record = agent_for(job, server, desk).run("go")
    [asked] = [call for call in record.model_calls if call.get("source") == "script"]
    assert asked["usage_estimated"] == "no usage reported" and asked["usage"]["prompt_tokens"] > 0
    assert record.cost_usd() > 0


def test_the_spend_limit_stops_a_script_before_a_call_it_cannot_afford(job: Path) -> None:
    with ScriptedServer([]) as server:
        record = agent_for(job, server, Desk(), cost=", max_cost: 0.0001").run("go")
    assert record.status is RunStatus.COST_LIMIT and "0.0001" in (record.stop_reason or "")
    assert server.requests == [] and calls(job) == ["list"]  # the tool ran; the model was never asked


def test_the_script_passes_its_eval_suite_with_stubs(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (job / "workflows" / "merged-prs.yaml").write_text(FLOW.format(cost=""))
    (job / "evals" / "merged-prs.yaml").write_text(
        "cases:\n  - name: marks-the-merged-one\n    message: go\n    approve: all\n"
        "    stubs: {list_prs: '#7 merged', mark_merged: 'marked (stub)'}\n"
        "    expect: {contains: ['Marked #7.'], tools_called: [mark_merged]}\n"
    )
    with ScriptedServer([SUMMARY] * 3) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        cases = load_cases("merged-prs", [job / "evals" / "merged-prs.yaml"])
        attempts = Runner(RuntimeConfig.from_env(), EvalOptions(parallel=1)).run(cases)
        report = build_report("merged-prs", attempts, {"model": "gpt-4o", "endpoint": server.base_url})
    [row] = report["cases"]
    assert row["runs"][0]["passed"], row
    assert not (job / "calls.log").exists()  # the stubs answered: the real tools never ran


def example_job(job: Path) -> None:
    """The docs' example as written, with the tools it calls, as workflow doc-job."""
    doc = (REPO / "docs" / "workflows.md").read_text()
    section = doc[doc.index("### Code coordinators (`coordinator: script`)") :]
    start = section.index("```python\n") + len("```python\n")
    example = section[start : section.index("```", start)]
    (job / "tools" / "doc_job.py").write_text(TOOLS.split("def merged_job")[0] + example)
    flow = FLOW.format(cost="").replace("pr_job:", "doc_job:").replace("name: merged-prs", "name: doc-job")
    (job / "workflows" / "doc-job.yaml").write_text(flow)


def test_the_docs_example_runs_as_written_on_the_demo_model(job: Path) -> None:
    """Was: the docs' own ``run.ask(..., schema=...)`` failed on the embedded demo model (``make demo``'s)."""
    example_job(job)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}  # the embedded demo model
    done = subprocess.run([sys.executable, "-m", "agent_runtime", "run", "doc-job", "-m", "go", "--approve", "all"],
                          capture_output=True, text=True, timeout=120, cwd=REPO,
                          env=env | {"PYTHONPATH": str(REPO / "layers" / "runtime")})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Marked #12, #14. 3 items: #12 merged; #13 open; #14 merged."
    assert calls(job) == ["list", "mark #12", "mark #14"]


def test_the_docs_example_catches_a_denial_on_the_demo_model(job: Path) -> None:
    from agent_runtime.testing.demo import demo_script

    example_job(job)
    with ScriptedServer(demo_script()) as server:  # the CLI's embedded model, in this process
        workflow = load_workflow("doc-job", job / "workflows")
        desk = Desk()
        desk.said |= {"#12": "denied", "#14": "approved"}
        agent = build_agent(workflow, OpenAIChatModel("gpt-4o", client=server.client()), Services(approver=desk))
        record = agent.run("go")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert record.final_answer == ("Marked #14. 3 items: #12 merged; #13 open; #14 merged. "
                                   "Not marked: #12 (denied by U0LEAD; it did not run).")  # fmt: skip
    assert calls(job) == ["list", "mark #14"]


def test_a_run_waiting_under_the_previous_version_resumes_without_repeating_its_steps(job: Path) -> None:
    """A checkpoint stored before steps were known by what they call (its journal by step name) resumes unchanged:
    its finished steps are not run again, its waiting call finishes, and the rest run."""
    desk = Desk()
    with ScriptedServer([SUMMARY]) as server:
        agent = agent_for(job, server, desk)
        waiting = agent.run("go")
        assert waiting.status is RunStatus.AWAITING_APPROVAL and calls(job) == ["list"]
        state, steps = waiting.state, waiting.state.context.pop("script_steps")  # as the previous version kept it:
        state.context["script_journal"] = {  # results by step name, and the waiting call's step name
            "run": steps["run"],
            "steps": {entry["name"]: entry["value"] for entry in steps["steps"].values()},
            "calls": {call: name for call, (_, name) in steps["calls"].items()},
        }
        desk.said |= {"#12": "approved", "#14": "approved"}
        record = agent.run(state=state)
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert record.final_answer == "Marked #12, #14. Two of three pull requests are merged."
    assert calls(job) == ["list", "mark #12", "mark #14"] and len(server.requests) == 1
