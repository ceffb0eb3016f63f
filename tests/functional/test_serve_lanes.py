"""serve works message groups (threads) at once, as SQS FIFO and Lambda do on AWS: a mention in another thread is
answered while a slow run streams elsewhere (was: it waited, without even its "working" message, until the slow
run ended; approvals and feedback clicks waited in the same line).

Real paths: signed Slack events over HTTP into serve's webhook, serve's queue and lanes, the scripted model over
HTTP (its slow answer blocks until the test lets it go: no timing decides the verdict), the replies on a fake
Slack API. The order within a group and the lanes' bounds are tests/unit/test_serve_lanes.py's."""

from __future__ import annotations

import threading
import urllib.request
from pathlib import Path

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.service.serve import LocalServer
from agent_runtime.testing import ScriptedRequest, ScriptedServer, reply
from agent_runtime.testing.steps import Reply
from agent_runtime.triggers.config import TriggerConfig

from tests.conftest import REPO
from tests.playground_support import until
from tests.triggers_support import BOT_USER, ENV, fake_apis, slack_mention, slack_request
from tests.worker_support import WORKFLOW

SLOW, QUICK = "1763800000.000100", "1763800100.000200"


def _mention(server: LocalServer, event_id: str, ts: str, text: str) -> None:
    body, headers = slack_request(slack_mention(event_id, ts=ts, text=text))
    request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
    urllib.request.urlopen(request, timeout=10).close()


def test_a_mention_in_another_thread_is_answered_while_a_slow_run_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release, slow_asked = threading.Event(), threading.Event()

    def answer(request: ScriptedRequest) -> Reply:
        if "slow" in request.last_user_text():
            slow_asked.set()
            release.wait(60)  # the model is still writing
            return reply("the slow answer")
        return reply("the quick answer")

    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills",
                            use_demo_model=False, sandbox_mode="off")  # fmt: skip
    with ScriptedServer([], intercept=answer) as model, fake_apis() as (apis, base):
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/"})
        server = LocalServer(runtime, triggers, port=0).start()
        try:
            _mention(server, "EvSlow", SLOW, f"<@{BOT_USER}> slow please")
            until(slow_asked.is_set, what="the slow run's model call")
            _mention(server, "EvQuick", QUICK, f"<@{BOT_USER}> quick please")
            until(lambda: server.outcomes, timeout=20, what="the quick thread, beside the slow run")
            assert not release.is_set() and server.outcomes == ["answered"]
            assert any("the quick answer" in str(c.get("text")) for c in apis.named("chat.update"))
            release.set()
            until(lambda: len(server.outcomes) == 2, what="the slow run, once released")
        finally:
            release.set()
            server.close()
    assert server.outcomes == ["answered", "answered"]
    answers = [str(c.get("text")) for c in apis.named("chat.update")]
    assert any("the slow answer" in text for text in answers)
