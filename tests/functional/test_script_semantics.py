"""``coordinator: script`` with Python's semantics (issues 50 and 49): a call that gives no result raises a typed
exception the script may catch; one it lets out fails the run with its file and line; the script's own code is
bounded by the deadline and a stop; a step is known by its name and what it calls; a thread's next turn asks and
runs afresh; a helper works on its task. Through build_agent, the real ``openai`` client over HTTP to the scripted
server, a local store, and the real CLI in a subprocess where the CLI is what a person sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import Deadline, RunStatus, Services
from agent_runtime.approvals import ApprovalRequest, Decision
from agent_runtime.models import OpenAIChatModel
from agent_runtime.runtime import build_agent
from agent_runtime.stopping import StopCheck, StopRequest
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.stores.hook import new_turn
from agent_runtime.testing import Paced, ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.workflows import load_workflow
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
OPS = '''
import os
import time
from pathlib import Path

from agent_runtime import tool
from agent_runtime.coordinator import InvalidArguments, ToolCallError, ToolDenied, ToolFailed


def log(line):
    with open(os.environ["OPS_LOG"], "a") as out:
        out.write(line + "\\n")


@tool(mutating=True)
def restart(service: str) -> str:
    """Restart a service.

    Args:
        service: Its name.
    """
    log(f"restart {service}")
    return f"restarted {service}"


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"value of {key}"


@tool
def broken(key: str) -> str:
    """A backend that is down.

    Args:
        key: The key.
    """
    raise RuntimeError(f"the {key} backend is down")


def thirty_bad(run):
    for n in range(30):
        run.call("lookup", nope=n)
    return "done"


def catches(run):
    seen = []
    try:
        run.call("lookup", nope=1)
    except InvalidArguments as error:
        seen.append(f"invalid {error.tool}: {error.reason}")
    try:
        run.call("broken", key="billing")
    except ToolFailed as error:
        seen.append(f"failed {error.tool}: {error.reason}")
    try:
        run.call("restart", service="db", step="db")
    except ToolDenied as error:
        seen.append(f"denied {error.tool} at step {error.step}: {error.reason}")
    try:
        run.call("nosuch", key="x")
    except ToolCallError as error:
        seen.append(f"{type(error).__name__}: {error}")
    return "\\n".join(seen)


def uncaught(run):
    run.call("restart", service="db")
    return "restarted db"


def no_tickets(run):
    raise ValueError("no tickets today")


def restart_alpha(run):
    return "alpha: " + run.call("restart", service="alpha")


def restart_twice(run):
    alpha = run.call("restart", service="alpha", step="restart")
    bravo = run.call("restart", service="bravo", step="restart")
    return f"alpha: {alpha}; bravo: {bravo}"


def restart_bravo(run):
    return "bravo: " + run.call("restart", service="bravo", step="restart")


def restart_named_alpha(run):
    return "alpha: " + run.call("restart", service="alpha", step="restart")


def spins(run):
    while True:
        pass


def spins_after_a_step(run):
    run.call("lookup", key="a")
    while True:
        time.sleep(0.01)


def stubborn(run):
    run.call("lookup", key="a")
    while not os.path.exists(os.environ["OPS_LOG"] + ".enough"):
        try:
            while not os.path.exists(os.environ["OPS_LOG"] + ".enough"):
                pass
        except BaseException:  # swallows what the runtime raises in it, and calls on
            try:
                run.call("restart", service="late")
            except BaseException:
                pass


def asks_a_story(run):
    return run.ask("Tell me a long story")


def stops_itself(run):
    from agent_runtime.stopping import StopRequest
    from agent_runtime.stores import LocalStore, RunStore

    runs = RunStore(LocalStore(Path(os.environ["AGENT_STATE_DIR"])))
    runs.request_stop(os.environ["OPS_RUN"], StopRequest("cli:dana", time.time(), "cli"))
    return "all done"


def delegates(run):
    return "the helper said: " + run.call("subagent", task="Name the first planet.")


def sequence(run):
    import json

    return json.dumps([run.call("restart", service=service, step=step) for step, service in json.loads(run.message)])
'''


@dataclass
class Ops:
    root: Path
    module: str

    def flow(self, script: str | None, extra: str = "") -> Path:
        """The workflow, driven by ``script`` (None: by the model)."""
        path = self.root / "workflows" / "ops-job.yaml"
        driver = f"coordinator: script\nscript: {self.module}:{script}\n" if script else ""
        path.write_text(
            f"name: ops-job\ndescription: Restarts services, in code.\nprompt: You help the on-call engineer.\n"
            f"{driver}"
            "model: {name: gpt-4o, context_window: 128000, max_output_tokens: 512}\nlimits: {max_tool_calls: 50}\n"
            f"tools: {{python: [{self.module}:restart, {self.module}:lookup, {self.module}:broken]}}\n{extra}"
        )
        return path

    def agent(self, server: ScriptedServer, script: str | None, approver: Any = None, extra: str = "") -> Any:
        workflow = load_workflow(str(self.flow(script, extra)), self.root / "workflows")
        services = Services(runs=RunStore(LocalStore(self.root / "state")), approver=approver)
        return build_agent(workflow, OpenAIChatModel("gpt-4o", client=server.client()), services)

    def at(self, code: str, function: str) -> str:
        """Where a stop reason says the script was: the line of ``code``, in ``function``."""
        line = next(n for n, text in enumerate(OPS.splitlines(), 1) if text.strip() == code)
        return f"{self.module}.py:{line} in {function}"

    def ran(self) -> list[str]:
        log = self.root / "ops.log"
        return log.read_text().splitlines() if log.exists() else []

    def cli(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")} | (env or {})
        return subprocess.run([sys.executable, "-m", "agent_runtime", *args], capture_output=True, text=True,
                              env=clean, cwd=REPO, timeout=120)  # fmt: skip


@pytest.fixture
def ops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Ops:
    for name in ("workflows", "tools", "state"):
        (tmp_path / name).mkdir()
    module = f"ops_{uuid.uuid4().hex[:8]}"  # a module of its own: the process keeps what it imported
    (tmp_path / "tools" / f"{module}.py").write_text(OPS)
    for key, folder in (("AGENT_TOOLS_PATH", "tools"), ("AGENT_WORKFLOWS_DIR", "workflows"),
                        ("AGENT_STATE_DIR", "state")):  # fmt: skip
        monkeypatch.setenv(key, str(tmp_path / folder))
    monkeypatch.setenv("OPS_LOG", str(tmp_path / "ops.log"))
    monkeypatch.setenv("PYTHONPATH", str(REPO / "layers" / "runtime"))  # the CLI runs this tree's package
    return Ops(tmp_path, module)


class Desk:
    """Decides each call by its service; asks (pending) for the others."""

    def __init__(self, **said: str) -> None:
        self.said, self.asked = said, []  # type: ignore[var-annotated]

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        self.asked.append(request.summary)
        decided = next((d for service, d in self.said.items() if f'"{service}"' in request.summary), None)
        return (Decision(decided), "U0LEAD") if decided else (Decision.PENDING, None)


def test_thirty_invalid_calls_fail_the_run_at_the_first_with_its_line(ops: Ops) -> None:
    """Was: thirty calls with invalid arguments, each an ``ERROR: ...`` string; the run ``completed``, exit 0."""
    ops.flow("thirty_bad")
    done = ops.cli("run", "ops-job", "-m", "go", "--approve", "all")
    assert done.returncode == 1, done.stderr
    where = ops.at('run.call("lookup", nope=n)', "thirty_bad")
    assert (f"run failed: the script failed: InvalidArguments: lookup: invalid arguments: key: Field required; "
            f"nope: Extra inputs are not permitted (at {where})") in done.stderr  # fmt: skip
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_script_exception_names_its_file_and_line(ops: Ops) -> None:
    """Was: ``the script failed: ValueError: no tickets today``, with no file or line."""
    with ScriptedServer([]) as server:
        record = ops.agent(server, "no_tickets").run("go")
    where = ops.at('raise ValueError("no tickets today")', "no_tickets")
    assert record.status is RunStatus.FAILED
    assert record.stop_reason == f"the script failed: ValueError: no tickets today (at {where})"


def test_each_failure_is_an_exception_the_script_catches(ops: Ops) -> None:
    """Denied, invalid, failed, unknown: each its own class with the tool and why; the model-facing text stays."""
    with ScriptedServer([]) as server:
        record = ops.agent(server, "catches", Desk(db="denied")).run("go")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert (record.final_answer or "").splitlines() == [
        "invalid lookup: invalid arguments: key: Field required; nope: Extra inputs are not permitted",
        "failed broken: tool 'broken' failed: RuntimeError: the billing backend is down",
        "denied restart at step db: denied by U0LEAD; it did not run",
        "InvalidArguments: nosuch: the workflow has no tool named 'nosuch' (it has file_read, file_regex, "
        "restart, lookup, broken)",
    ] or record.final_answer
    told = [m["content"] for m in record.state.messages if m["role"] == "tool"]
    assert any(t.startswith("ERROR: not run: this restart call was denied by U0LEAD. Do not retry") for t in told)
    assert ops.ran() == []  # nothing was restarted; the invalid calls were never steps
    assert [c["name"] for c in record.tool_calls] == ["broken", "restart"]


def test_an_uncaught_denial_fails_the_run_with_the_scripts_line(ops: Ops) -> None:
    with ScriptedServer([]) as server:
        record = ops.agent(server, "uncaught", Desk(db="denied")).run("go")
    where = ops.at('run.call("restart", service="db")', "uncaught")
    assert record.status is RunStatus.FAILED
    denied = "ToolDenied: restart: denied by U0LEAD; it did not run"
    assert record.stop_reason == f"the script failed: {denied} (at {where})"


def test_an_endless_loop_ends_at_the_deadline_with_its_line(ops: Ops) -> None:
    """Was: an endless loop ran 20 s past a 3 s deadline. Now the run ends at it, and the loop's thread ends too."""
    with ScriptedServer([]) as server:
        started = time.monotonic()
        record = ops.agent(server, "spins").run("go", deadline=Deadline.after(1.0))
        took = time.monotonic() - started
    assert record.status is RunStatus.FAILED and took < 5, (record.stop_reason, took)
    assert record.stop_reason == ("the script's own code ran past the run's deadline without finishing a step "
                                  f"(at {ops.at('while True:', 'spins')})")  # fmt: skip
    time.sleep(0.3)
    assert not [t for t in threading.enumerate() if t.name == "coordinator-script"]  # abandoned, and gone


def test_a_script_that_got_on_suspends_at_the_deadline(ops: Ops) -> None:
    with ScriptedServer([]) as server:
        record = ops.agent(server, "spins_after_a_step").run("go", deadline=Deadline.after(1.0))
    assert record.status is RunStatus.SUSPENDED, record.stop_reason
    assert (record.stop_reason or "").startswith("the deadline was reached while the script ran its own code (at ")


def test_a_script_that_swallows_everything_still_ends_at_the_deadline_and_changes_nothing_after(ops: Ops) -> None:
    with ScriptedServer([]) as server:
        record = ops.agent(server, "stubborn", Desk(late="approved")).run("go", deadline=Deadline.after(1.0))
        time.sleep(0.5)  # it goes on, in its thread, calling restart
        (ops.root / "ops.log.enough").touch()
    assert record.status is RunStatus.SUSPENDED, record.stop_reason  # it had made a step: the next invocation goes on
    assert ops.ran() == [] and "late" not in json.dumps(record.state.to_dict())  # nothing it did after reached the run


def test_a_stop_from_the_cli_ends_a_script_in_its_own_code(ops: Ops) -> None:
    """Was: a stopped script run ended ``completed`` 29 s later. ``runs stop`` (the real CLI) ends it within the
    stop check's interval."""
    run_id = f"run-{uuid.uuid4().hex[:16]}"
    runs = RunStore(LocalStore(ops.root / "state"))

    def stop_once_checkpointed() -> None:
        while runs.load_checkpoint(run_id) is None:
            time.sleep(0.05)
        ops.cli("runs", "stop", run_id, env={"USER": "dana"})

    stopper = threading.Thread(target=stop_once_checkpointed, daemon=True)
    with ScriptedServer([]) as server:
        agent = ops.agent(server, "spins_after_a_step")
        stopper.start()
        check = StopCheck(lambda: runs.stop_request(run_id), interval=0.2)
        record = agent.run("go", run_id=run_id, stop=check, deadline=Deadline.after(60))
    assert record.status is RunStatus.STOPPED and (record.stop_reason or "").startswith("Stopped by local:")
    assert [e["type"] for e in record.events][-1] == "stopped"


def test_a_stop_closes_an_ask_in_flight(ops: Ops) -> None:
    runs = RunStore(LocalStore(ops.root / "state"))
    run_id = f"run-{uuid.uuid4().hex[:16]}"

    def stop_while_streaming(request: ScriptedRequest) -> Paced:
        runs.request_stop(run_id, StopRequest("U0DANA", time.time(), "slack"))
        return Paced(reply("Once upon a time. " * 400), interval=0.05)  # ~20 s unless closed

    with ScriptedServer([stop_while_streaming]) as server:
        started = time.monotonic()
        check = StopCheck(lambda: runs.stop_request(run_id), interval=0.1)
        record = ops.agent(server, "asks_a_story").run("go", run_id=run_id, stop=check)
    assert record.status is RunStatus.STOPPED and record.stop_reason == "Stopped by <@U0DANA>."
    assert time.monotonic() - started < 10 and len(server.requests) == 1


def test_a_stop_asked_as_the_script_returns_is_a_stop(ops: Ops, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = RunStore(LocalStore(ops.root / "state"))
    run_id = f"run-{uuid.uuid4().hex[:16]}"
    monkeypatch.setenv("OPS_RUN", run_id)
    with ScriptedServer([]) as server:
        check = StopCheck(lambda: runs.stop_request(run_id), interval=0.0)
        record = ops.agent(server, "stops_itself").run("go", run_id=run_id, stop=check)
    assert record.status is RunStatus.STOPPED and record.final_answer is None
    assert record.stop_reason == "Stopped by cli:dana."


def test_a_name_used_twice_gives_each_call_its_own_result(ops: Ops) -> None:
    """Was: "bravo: restarted alpha" — the second call under a name got the first one's result."""
    desk = Desk()
    with ScriptedServer([]) as server:
        agent = ops.agent(server, "restart_twice", desk)
        record = agent.run("go")
        assert record.status is RunStatus.AWAITING_APPROVAL
        desk.said["alpha"] = "approved"
        record = agent.run(state=record.state)
        assert record.status is RunStatus.AWAITING_APPROVAL  # alpha ran; bravo is asked, not handed alpha's
        desk.said["bravo"] = "approved"
        record = agent.run(state=record.state)
    assert record.final_answer == "alpha: restarted alpha; bravo: restarted bravo"
    assert ops.ran() == ["restart alpha", "restart bravo"]


def test_a_script_changed_while_an_approval_waits_never_gets_the_old_calls_result(ops: Ops) -> None:
    desk = Desk()
    with ScriptedServer([]) as server:
        waiting = ops.agent(server, "restart_named_alpha", desk).run("go")
        assert waiting.status is RunStatus.AWAITING_APPROVAL
        desk.said["alpha"] = "approved"  # approved what was asked: alpha
        changed = ops.agent(server, "restart_bravo", desk)  # the same step name now restarts bravo
        record = changed.run(state=waiting.state)
        assert record.status is RunStatus.AWAITING_APPROVAL  # bravo is asked about, never told "restarted alpha"
        desk.said["bravo"] = "approved"
        record = changed.run(state=record.state)
    assert record.final_answer == "bravo: restarted bravo"
    assert ops.ran() == ["restart alpha", "restart bravo"]  # alpha ran once, as approved


def test_a_threads_next_turn_asks_again_from_the_cli(ops: Ops) -> None:
    """Was (issue 49): the second turn reused the first one's approval and result — "restarted alpha", and nothing
    ran. Now the second turn's call is asked about afresh: refused there, it is refused."""
    ops.flow("restart_alpha")
    first = ops.cli("run", "ops-job", "-m", "restart alpha", "-t", "T-1", "--approve", "all")
    second = ops.cli("run", "ops-job", "-m", "again", "-t", "T-1", "--approve", "none")
    assert (first.returncode, first.stdout.strip()) == (0, "alpha: restarted alpha"), first.stderr
    assert second.returncode == 1 and "ToolDenied: restart: denied by --approve none" in second.stderr
    assert ops.ran() == ["restart alpha"]


def test_a_threads_next_turn_runs_its_calls_again_with_ids_of_its_own(ops: Ops) -> None:
    with ScriptedServer([]) as server:
        agent = ops.agent(server, "restart_alpha", Desk(alpha="approved"))
        first = agent.run("go")
        second = agent.run("again", state=new_turn(first.state, "run-second"))
    assert (first.final_answer, second.final_answer) == ("alpha: restarted alpha",) * 2
    ids = [c["id"] for m in second.state.messages for c in m.get("tool_calls", [])]
    assert len(ids) == 2 and len(set(ids)) == 2 and ops.ran() == ["restart alpha"] * 2  # ran in each turn
    assert [e["type"] for e in second.events].count("approval_requested") == 1  # asked in its own turn
    assert not [e for e in second.events if e["type"] == "mutation_replayed"]


def test_a_helper_works_on_its_task_not_the_parents_script(ops: Ops) -> None:
    """Was: a script run's helper ran the script again (its workflow kept the parent's coordinator)."""

    def helper(request: ScriptedRequest) -> Any:
        assert request.system_text().startswith("You are a helper agent"), request.system_text()
        return reply("Mercury.")

    with ScriptedServer([helper]) as server:
        extra = "subagents: {enabled: true}\n"
        record = ops.agent(server, "delegates", extra=extra).run("go")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert record.final_answer == "the helper said: Mercury."
    assert "Name the first planet." in str(server.requests[0].messages)


class AfterAsking:
    """Approves a call once it has been asked about in an earlier invocation: every call waits once."""

    def __init__(self) -> None:
        self.asked: set[str] = set()

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        if request.call_id in self.asked:
            return Decision.APPROVED, "U0LEAD"
        self.asked.add(request.call_id)
        return Decision.PENDING, None


NAMES = st.sampled_from(["restart", "r", None])  # repeats are the point: a name, or the tool's, used again


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(NAMES, st.sampled_from(["alpha", "bravo", "charlie"])), min_size=1, max_size=5))
def test_any_sequence_of_step_names_gives_each_call_its_own_result(ops: Ops, steps: list[tuple[Any, str]]) -> None:
    """Each call waits for an approval (the run resumes from the top each time): whatever the names and their
    repeats, every call runs once and gets its own result, in order."""
    (ops.root / "ops.log").unlink(missing_ok=True)
    with ScriptedServer([]) as server:
        agent = ops.agent(server, "sequence", AfterAsking())
        record = agent.run(json.dumps(steps))
        for _ in steps:
            assert record.status is RunStatus.AWAITING_APPROVAL, record.stop_reason
            record = agent.run(state=record.state)
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert json.loads(record.final_answer or "") == [f"restarted {service}" for _, service in steps]
    assert ops.ran() == [f"restart {service}" for _, service in steps]


def test_a_model_driven_runs_mutating_call_is_asked_and_run_again_in_the_next_turn(ops: Ops) -> None:
    """The same for a model's calls: the server numbers them per reply (``call_1`` again, same arguments); the next
    turn's call is asked about afresh and runs, never answered with the first turn's approval or result."""
    restart_web = call("restart", {"service": "web"}, id="call_1")
    said = lambda request: reply(next(iter(request.tool_results().values())))  # noqa: E731
    with ScriptedServer([restart_web, said, restart_web, said]) as server:
        first = ops.agent(server, None, Desk(web="approved")).run("restart web")
        desk = Desk()
        agent = ops.agent(server, None, desk)
        second = agent.run("again", state=new_turn(first.state, "run-second"))
        assert second.status is RunStatus.AWAITING_APPROVAL and len(desk.asked) == 1  # asked, in its own turn
        desk.said["web"] = "approved"
        second = agent.run(state=second.state)
    assert (first.final_answer, second.final_answer) == ("restarted web", "restarted web")
    assert ops.ran() == ["restart web", "restart web"]
    assert not [e for e in second.events if e["type"] == "mutation_replayed"]
