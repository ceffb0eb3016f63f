"""What each Lambda handler's init imports, and what the worker's first run still has to.

The webhook checks, routes and enqueues: its init loads neither the run record and its events, nor slack_sdk's
Web API client, nor Powertools' event handler, nor the agent. The worker's init loads what handling any message
needs; the agent's machinery (the openai client, the context engine, the tools) loads with the first run, which
SnapStart's before-snapshot priming does: after a restore, a run imports nothing of the package or the model
client. `make bench` measures the cold imports against `import boto3` and one client
(tests/bench/test_bench_triggers.py). No timing here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.steps import reply

from tests.conftest import REPO
from tests.triggers_support import HANDLER_ENV

AGENT = ("openai", "pydantic", "tiktoken", "agent_runtime.runtime", "agent_runtime.context", "agent_runtime.loop.agent")
FIRST_RUN = """\
import json, os, sys
import app
from agent_runtime import snapstart
from agent_runtime.deadline import Deadline
from agent_runtime.inbound import TriggerEvent
if snapstart.snapshotting():
    snapstart.run_before_snapshot()
    snapstart.run_after_restore()
before = set(sys.modules)
event = TriggerEvent(source="api", kind="run", dedup_key="api:first", text="Summarise.", user="u", thread_id="t-1",
                     correlation_id="first", reply_to={}, attributes={}, workflow="document-feedback")
outcome = app.worker.handle({"type": "event", "event": event.to_dict()}, deadline=Deadline.after(60))
print(json.dumps({"outcome": outcome, "loaded": sorted(set(sys.modules) - before)}))
"""


def handler(function: str, code: str, env: dict[str, str]) -> dict[str, object]:
    """Run ``code`` beside a handler's app.py with the package on the path; its last line of output, as JSON."""
    paths = [str(REPO / "functions" / function), str(REPO / "layers" / "runtime")]
    full = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join(paths), "AGENT_SANDBOX": "off"}
    full |= {"AGENT_WORKFLOWS_DIR": str(REPO / "workflows"), "AGENT_SKILLS_DIR": str(REPO / "skills")} | env
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def among(modules: object, names: tuple[str, ...]) -> list[str]:
    assert isinstance(modules, list)
    return sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in names))


INIT = "import json, sys, app; print(json.dumps({'modules': sorted(sys.modules)}))"


def test_the_webhook_init_loads_no_run_record_slack_client_or_agent() -> None:
    modules = handler("webhook", INIT, HANDLER_ENV)["modules"]
    assert among(modules, ("agent_runtime.service.webhook", "boto3")) != []  # it did initialise
    assert among(modules, ("agent_runtime.events", "agent_runtime.record", "slack_sdk", *AGENT)) == []
    # Nor Powertools' event handler: its package imports every resolver it has (AppSync, Bedrock, asyncio); the
    # webhook's routes are service/_http.py's, and no request loads it later either.
    assert among(modules, ("aws_lambda_powertools.event_handler", "asyncio")) == []
    # Nor the workflows' YAML, loader and model (read by the first request; before the snapshot under SnapStart),
    # nor the access rules' tool hook and budgets (admission needs the rules alone).
    # Nor the OAuth flow and its HTTP client (loaded by the first link a person follows).
    late = (
        "yaml",
        "agent_runtime.workflows.loader",
        "agent_runtime.workflows.schema",  # the workflow model: the routes name it in annotations only
        "agent_runtime.access.hook",
        "agent_runtime.identity.flow",
        "httpx2",
    )
    assert among(modules, (*late, "agent_runtime.access.budgets")) == []


def test_the_worker_init_leaves_the_agent_to_the_first_run() -> None:
    modules = handler("worker", INIT, HANDLER_ENV)["modules"]
    assert among(modules, ("agent_runtime.service.worker", "boto3")) != []
    assert among(modules, AGENT) == []


def test_after_a_snapstart_restore_the_first_run_imports_nothing_of_the_agent(tmp_path: Path) -> None:
    """Priming is what makes the worker's lighter init free under SnapStart; without it (on-demand) the first run
    loads the agent — the probe sees that, so it can see a priming that misses something."""
    local = {"AWS_DEFAULT_REGION": "us-east-1", "OPENAI_API_KEY": "k"}
    seen = {}
    for mode in ("snap-start", "on-demand"):
        env = local | {"AGENT_STATE_DIR": str(tmp_path / mode), "AWS_LAMBDA_INITIALIZATION_TYPE": mode}
        with ScriptedServer([reply("Done.")]) as server:
            seen[mode] = handler("worker", FIRST_RUN, env | {"OPENAI_BASE_URL": server.base_url})
    assert seen["snap-start"]["outcome"] == seen["on-demand"]["outcome"] == "answered"
    assert among(seen["snap-start"]["loaded"], ("agent_runtime", *AGENT)) == []
    assert among(seen["on-demand"]["loaded"], ("agent_runtime.runtime", "openai")) != []
