"""Adding a trigger source is its module and one registration line (issue 49): a web form, defined here and
registered here only (``BUILTIN.adding(Form())``, handed to the webhook and the worker as setup and serve hand
theirs), comes in through its own route, is verified, routed, deduplicated and queued, and its run starts from the
message it prepares, answers where it says and is described in the runs channel as it says — through the real
webhook, queue, worker, scripted model (HTTP) and a fake Slack (HTTP), with no other module touched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.chat.channels import Channel, Replies
from agent_runtime.chat.replies import SlackReplier
from agent_runtime.config import RuntimeConfig
from agent_runtime.deadline import Deadline
from agent_runtime.service.worker import Process, Worker
from agent_runtime.sources import BUILTIN, Chat, Request, Routed, Source
from agent_runtime.sources.base import Intake, safe
from agent_runtime.stores import LocalStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer, reply
from agent_runtime.triggers import fields
from agent_runtime.triggers.config import TriggerConfig, all_workflows
from agent_runtime.triggers.event import TriggerEvent
from agent_runtime.triggers.exceptions import RejectedRequest
from agent_runtime.triggers.idempotency import StorePersistenceLayer
from agent_runtime.triggers.payload import parse_json
from agent_runtime.triggers.queue import LocalQueue, decode
from agent_runtime.triggers.webhook import create_app
from agent_runtime.workflows import Workflow

from tests.conftest import REPO, model_for
from tests.triggers_support import FakeApis, FakeContext, api_event, fake_apis

FORM_KEY = "form-key-for-tests"
WORKFLOW = """\
name: feedback
description: Answers the feedback form.
prompt: You answer feedback kindly.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
"""


class Outbox(Channel):
    """Where a form's run answers (a toy surface: the answers it was given)."""

    name = "form"

    def __init__(self) -> None:
        self.answers: list[str] = []

    def answer(self, text: str, *, feedback: bool = False) -> None:
        self.answers.append(text)


class Form(Source):
    """``POST /forms/<form>`` with ``X-Form-Key`` and ``{"id", "email", "message"}``: it starts the workflow named
    after the form, its run reads who sent it, answers in the outbox and is "form <name>" in the runs channel."""

    name = "form"
    route = "/forms/<form>"

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    def parse(self, request: Request) -> Intake:
        given = fields.text(request.headers.get("x-form-key"), "X-Form-Key")
        if not fields.same(given, request.config.secret("form_key") or ""):
            raise RejectedRequest(401, "wrong form key")
        body = parse_json(request.body, "the form")
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("id", "email", "message")):
            raise RejectedRequest(400, "the form needs id, email and message")
        form = request.params["form"]
        return TriggerEvent(source="form", kind="submitted", dedup_key=f"form:{form}:{body['id']}",
                            text=body["message"], user=body["email"], thread_id=f"form-{form}-{body['id']}",
                            correlation_id=body["id"], attributes={"form": form})  # fmt: skip

    def matches(self, workflow: Workflow, event: Routed) -> bool:
        return workflow.name == event.attributes.get("form")

    def prepare(self, event: TriggerEvent, chat: Chat) -> TriggerEvent:
        return replace(event, text=f"[the {event.attributes['form']} form, sent by {event.user}]\n{event.text}")

    def channel(self, event: TriggerEvent, chat: Chat, run_id: str) -> Channel:
        return self.outbox

    def described(self, event: TriggerEvent) -> str:
        return f"form {safe(str(event.attributes['form']))}"


@dataclass
class Setup:
    post: Any  # (path, body, headers) -> the webhook's answer
    drain: Any  # () -> the worker's outcomes for what is queued
    queue: LocalQueue
    apis: FakeApis
    outbox: Outbox


@pytest.fixture
def setup(tmp_path: Path, scripted: Any) -> Iterator[Any]:
    (tmp_path / "feedback.yaml").write_text(WORKFLOW)
    outbox = Outbox()
    sources = BUILTIN.adding(Form(outbox))  # the registration: the one line a deployment adds where it wires
    with fake_apis() as (apis, base):

        def build(server: ScriptedServer) -> Setup:
            runtime = RuntimeConfig(workflows_dir=tmp_path, skills_dir=REPO / "skills", state_dir=tmp_path / "state",
                                    runs_channel="C0RUNS")  # fmt: skip
            store = LocalStore(runtime.state_dir)
            queue = LocalQueue(store)
            webhook = create_app(TriggerConfig.from_env({"FORM_KEY": FORM_KEY}), queue=queue,
                                 persistence=StorePersistenceLayer(store), workflows=all_workflows(runtime),
                                 sources=sources)  # fmt: skip
            model = model_for(server)
            worker = Worker(Process(runtime, store=store, queue=queue, models=lambda wf: nullcontext(model),
                                    replies=Replies(slack=SlackReplier("xoxb-test", base_url=f"{base}/")),
                                    progress_interval=0.0, sources=sources))  # fmt: skip

            def post(path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
                answer = webhook.handle(api_event(path, json.dumps(body).encode(), headers), FakeContext())
                return answer["statusCode"], json.loads(answer["body"])

            def drain() -> list[str]:
                outcomes = []
                while not queue.messages.empty():
                    body = queue.messages.get_nowait()
                    outcomes.append(str(worker.handle(decode(body, store), deadline=Deadline.none())))
                return outcomes

            return Setup(post, drain, queue, apis, outbox)

        yield build


FILLED = {"id": "f-0001", "email": "ada@example.com", "message": "The export button does nothing."}


def test_a_source_registered_at_wiring_comes_in_by_its_route_and_answers_where_it_says(setup: Any, scripted) -> None:
    seen: list[ScriptedRequest] = []

    def answer(request: ScriptedRequest) -> Any:
        seen.append(request)
        return reply("Thank you: the export is fixed in 2.3.")

    system = setup(scripted(answer))
    accepted = system.post("/forms/feedback", FILLED, {"X-Form-Key": FORM_KEY})
    assert accepted == (200, {"status": "queued", "workflow": "feedback"})  # routed by its own rule
    assert system.post("/forms/feedback", FILLED, {"X-Form-Key": FORM_KEY}) == (
        200,
        {"status": "duplicate", "workflow": "feedback"},
    )
    assert system.drain() == ["answered"]
    assert "[the feedback form, sent by ada@example.com]\nThe export button does nothing." in seen[0].last_user_text()
    assert system.outbox.answers and "fixed in 2.3" in system.outbox.answers[0]
    [line] = [m["text"] for m in system.apis.named("chat.postMessage") if m.get("channel") == "C0RUNS"]
    assert "*feedback* · form feedback · completed" in line  # described as the source says


def test_a_registered_source_refuses_and_ignores_through_the_webhooks_rules(setup: Any, scripted) -> None:
    system = setup(scripted())
    assert system.post("/forms/feedback", FILLED, {"X-Form-Key": "guess"}) == (401, {"error": "wrong form key"})
    assert system.post("/forms/feedback", {"id": "f-2"}, {"X-Form-Key": FORM_KEY})[0] == 400
    ignored = system.post("/forms/survey", FILLED, {"X-Form-Key": FORM_KEY})  # no workflow is named survey
    assert ignored == (200, {"status": "ignored", "reason": "no workflow's triggers match this event"})
    assert system.queue.messages.empty()  # nothing queued for any of them
