"""A run as today's code stores it, in full: a helper reading a shared file, file reads and masking, a skill
loaded, a mutating call asked for approval in the first invocation and run in the second (one record, merged),
and a rating. ``python -m tests.functional.stored_run`` writes it as the record fixture
(tests/fixtures/record-<commit>.json) that later versions must keep reading."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_runtime import RunStatus, Services, tool
from agent_runtime.approvals import ApprovalRequest, Decision
from agent_runtime.files import InMemoryFileStore
from agent_runtime.runtime import build_agent
from agent_runtime.skills import SkillLibrary
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.subagents import SubagentSettings
from agent_runtime.testing import ScriptedServer, call, reply

from tests.conftest import REPO, make_workflow, model_for
from tests.subagents_support import child_script, long_doc

RUN_ID = "run-stored-0001"
FIXTURES = REPO / "tests" / "fixtures"


@tool(mutating=True)
def restart_service(service: str) -> str:
    """Restart a service.

    Args:
        service: Its name.
    """
    return f"restarted {service}"


class Later:
    """Decides nothing at first (the run waits), then approves: the person's click, between two invocations."""

    def __init__(self) -> None:
        self.decided = False

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        return (Decision.APPROVED, "U0LEAD") if self.decided else (Decision.PENDING, None)


def resumed_run(root: Path) -> RunStore:
    """Runs it against the scripted model, stored in a local store under ``root``; returns the store."""
    files = InMemoryFileStore()
    doc = files.put(long_doc(400), name="contract.txt")
    runs, approver = RunStore(LocalStore(root)), Later()
    skills = SkillLibrary(REPO / "skills")
    child = child_script(
        call("file_read", {"id": doc.id, "start_line": 1, "end_line": 200}),
        call("file_read", {"id": doc.id, "start_line": 201, "end_line": 400}),
        reply("Clause 7 keeps SECRET-7."),
    )
    steps = [
        call("load_skill", {"name": sorted(skills.names())[0]}),
        call("subagent", {"task": "find clause 7", "files": [doc.id]}),
        call("restart_service", {"service": "payments"}),
        reply("Restarted payments; clause 7 keeps SECRET-7."),
    ]
    workflow = replace(make_workflow(), subagents=SubagentSettings(enabled=True))
    with ScriptedServer(steps, intercept=child) as server:
        services = Services(runs=runs, approver=approver, skills=skills)
        agent = build_agent(workflow, model_for(server), services, files=files,
                            tools=[replace(restart_service, approval="always")])  # fmt: skip
        first = agent.run("Find clause 7, then restart payments.", run_id=RUN_ID)
        assert first.status is RunStatus.AWAITING_APPROVAL and first.state is not None, first.stop_reason
        approver.decided = True
        second = agent.run(state=first.state)
        assert second.status is RunStatus.COMPLETED, second.stop_reason
    runs.save_feedback(RUN_ID, "U0DANA", "good", 1_764_000_000.0)
    return runs


def write_fixture(root: Path) -> Path:
    record = resumed_run(root).load_record(RUN_ID)
    commit = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, cwd=REPO)
    target = FIXTURES / f"record-{commit.stdout.strip()}.json"
    about = f"A run's record as agent-runtime at {commit.stdout.strip()} stored it (tests/functional/stored_run.py)."
    target.write_text(json.dumps({"_about": about, "record": record}, indent=1, ensure_ascii=False) + "\n")
    return target


def fixture() -> dict[str, Any]:
    """The newest record fixture: the stored JSON as ``RunStore.load_record`` returns it."""
    [path] = sorted(FIXTURES.glob("record-*.json"))[-1:]
    return dict(json.loads(path.read_text())["record"])


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        print(write_fixture(Path(folder)), file=sys.stderr)
