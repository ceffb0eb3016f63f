"""A reasoning model's thinking never reaches the thread (``models.reasoning``): its ``<think>`` block, streamed in
pieces before a tool call and before the answer, is not in any call the runtime makes to Slack, while the model
reads it back in its history. And the embedded demo model keeps its notes there: a newcomer's playground showed
``NOTES evidence {…}`` lines in its streamed answers. Through the webhook, SQS (moto), the worker, the ``openai``
client over HTTP to the scripted server and the fake Slack API, streaming."""

from __future__ import annotations

import json
from typing import Any

from agent_runtime.testing import Reply, ScriptedServer, reply
from agent_runtime.testing.demo import demo_script

from tests.conftest import REPO
from tests.slack_support import thread
from tests.triggers_support import slack_mention, slack_request
from tests.worker_support import read_design

FIRST = "<think>\nThey attached a design. SECRET-PLAN-ONE: read it, then review.\n</think>\n\n"
SECOND = "<think>SECRET-PLAN-TWO: no rollback</think>\n"


def said_to_slack(s: Any) -> str:
    """Everything the runtime sent Slack: messages, stream chunks, updates."""
    return json.dumps([body for _, body in s.apis.calls])


def test_a_reasoning_block_never_reaches_the_thread_and_stays_in_the_models_history(system, scripted) -> None:
    def read_it(request: Any) -> Reply:
        return Reply(text=FIRST + "Reading the design now.", calls=read_design(request).calls)

    server = scripted(read_it, reply(SECOND + "Add a rollback plan."))
    s = system(server)
    s.apis.streams = True
    s.apis.files["/files/design.md"] = b"# Design\n"
    attachment = {"id": "F1", "name": "design.md", "url_private": f"{s.base}/files/design.md", "size": 9}
    s.post("/slack/events", *slack_request(slack_mention("Ev1", files=[attachment])))
    assert s.deliver() == ["answered"]
    sent = said_to_slack(s)
    assert "SECRET-PLAN" not in sent and "think>" not in sent
    answer = "\n".join(thread(s.apis).values())
    assert "Reading the design now." in answer and "Add a rollback plan." in answer
    history = json.dumps(server.requests[1].messages)
    assert "SECRET-PLAN-ONE" in history  # the model reads its own thinking back


def test_the_demo_models_notes_never_show_in_a_streamed_answer(system) -> None:
    with ScriptedServer(demo_script(), model="demo") as server:
        s = system(server)
        s.apis.streams = True
        s.apis.files["/files/design.md"] = b"# Design\n\n## Open questions\n- Who owns the rollback?\n\nTODO: budget\n"
        attachment = {"id": "F1", "name": "design.md", "url_private": f"{s.base}/files/design.md", "size": 60}
        log = (REPO / "examples" / "incidents" / "pasted-log.txt").read_text() * 3  # a virtual file: several rounds
        text = f"<@U0BOT> review the design against this log\n{log}"
        s.post("/slack/events", *slack_request(slack_mention("Ev2", text=text, files=[attachment])))
        assert s.deliver() == ["answered"]
        assert len(server.requests) >= 3  # notes were kept beside tool calls, more than once
    answer = "\n".join(thread(s.apis).values())
    assert "design.md" in answer and "NOTES" not in said_to_slack(s) and "think>" not in said_to_slack(s)
