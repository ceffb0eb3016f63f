"""``agent-runtime serve``: a signed Slack event over real HTTP → in-process worker → reply on a fake Slack API."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

from agent_runtime.config import RuntimeConfig
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.serve import LocalServer

from tests.conftest import REPO
from tests.functional.test_triggers_e2e import WORKFLOW
from tests.functional.test_webhook import ENV
from tests.triggers_support import fake_apis, slack_mention, slack_request


def test_serve_answers_a_slack_mention_through_the_local_worker(tmp_path: Path) -> None:
    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(
        workflows_dir=tmp_path,
        state_dir=tmp_path / "state",
        skills_dir=REPO / "skills",
        use_demo_model=True,
        sandbox_mode="off",
    )
    with fake_apis() as (apis, base):
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/"})
        server = LocalServer(runtime, triggers, port=0).start()
        try:
            body, headers = slack_request(slack_mention("EvServe"))
            request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
            with urllib.request.urlopen(request, timeout=10) as response:
                assert json.loads(response.read()) == {"status": "queued", "workflow": "design-review"}
            deadline = time.monotonic() + 30
            while not server.outcomes and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            server.close()
    assert server.outcomes == ["answered"]
    [progress] = apis.named("chat.postMessage")
    assert progress["thread_ts"] == "1763800000.000100"
    final = apis.named("chat.update")[-1]["text"]
    assert final.startswith("(demo model) Nothing is attached to this run")
