"""An answer Slack could not take under ``agent-runtime serve``: serve's queue hands the message over again after
the backoff (``service/again.py``), as SQS does on the stack — one warning line, no traceback — and once Slack is
back the answer is posted, once, without serve restarting.

Real paths: a signed Slack event over HTTP into serve's webhook, serve's queue and lanes, the scripted model over
HTTP, the replies on a fake Slack API that goes down as the model answers (nothing listening on its port) and
comes back on the same port."""

from __future__ import annotations

import json
import logging
import urllib.request
from contextlib import ExitStack
from pathlib import Path

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.service.serve import LocalServer
from agent_runtime.testing import ScriptedRequest, ScriptedServer, reply
from agent_runtime.triggers.config import TriggerConfig

from tests.conftest import REPO
from tests.playground_support import until
from tests.triggers_support import BOT_USER, ENV, FakeApis, fake_apis, slack_mention, slack_request
from tests.worker_support import WORKFLOW

ANSWER = "Design review 4712: the plan holds."


def posted(apis: FakeApis) -> int:
    """How many calls carried the answer to Slack."""
    return sum(ANSWER in json.dumps(body) for _, body in apis.calls)


def test_serve_hands_a_message_slack_could_not_take_over_again_and_posts_its_answer_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills",
                            use_demo_model=False, sandbox_mode="off")  # fmt: skip
    slack = ExitStack()
    apis, base = slack.enter_context(fake_apis())
    apis.streams = True
    port = int(base.rsplit(":", 1)[1])

    def slack_goes_down(request: ScriptedRequest) -> None:  # as the model starts answering
        slack.close()

    with ScriptedServer([reply(ANSWER)], intercept=slack_goes_down) as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/"})
        server = LocalServer(runtime, triggers, port=0)
        server.retry_first = 0.5
        server.start()
        try:
            body, headers = slack_request(slack_mention("EvDown", text=f"<@{BOT_USER}> review please"))
            request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
            with urllib.request.urlopen(request, timeout=10) as answer:
                assert answer.status == 200
            until(lambda: "unreachable" in server.outcomes, timeout=30, what="the answer Slack could not take")
            assert posted(apis) == 0
            with fake_apis(port, apis):  # Slack is back where it was
                until(lambda: server.outcomes[-1:] == ["duplicate"], timeout=20, what="the answer posted again")
                assert posted(apis) == 1
        finally:
            server.close()
    assert set(server.outcomes) == {"unreachable", "duplicate"}
    said = [r for r in caplog.records if r.name == "agent_runtime.service.serve" and r.levelno >= logging.WARNING]
    assert said and all("Slack is unreachable" in r.getMessage() and r.exc_info is None for r in said)
