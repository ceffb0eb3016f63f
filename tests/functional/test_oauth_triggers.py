"""Whom a run's tools acting as the requester act for, by trigger, end to end (the webhook → SQS on moto → the
worker; oidc-provider on 127.0.0.1, whose own log names the account each call was for): a reaction's run acts for
the person who reacted (asked privately), a signed webhook's for the person ``triggers.webhook.identities`` maps
its sender to, a schedule's for its ``owner``; an unmapped sender's and an ownerless schedule's tools refuse,
saying why — nobody's token is used for them."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from pathlib import Path
from typing import Any

from agent_runtime.deadline import Deadline
from agent_runtime.identity import KmsKeyring, Vault
from agent_runtime.identity.flow import ConnectFlow
from agent_runtime.stores.items import ConnectAsk
from agent_runtime.testing import ScriptedRequest, call, reply
from agent_runtime.triggers.queued import TickMessage
from agent_runtime.workflows import load_workflow

from tests.oauth_support import (
    CLIENT_SECRET,
    STACK,
    accounts_served,
    provider_yaml,
    routes_of,
    through_provider,
    userinfo_spec,
)
from tests.slack_support import PARENT, REPLY, reaction
from tests.triggers_support import slack_request

WORKFLOW = """\
name: triage
description: Triage from the asker's own account, by reaction, by GitHub, and every night.
prompt: You triage from the person's own account.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  slack: {channels: [C0OPS], reactions: [jira]}
  webhook: {secret: github_webhook_secret, signature: github, events: [pull_request], message: $.pull_request.title,
    identities: {dependabot: "slack:U0DANA"}}
  schedule: [{name: nightly, expression: rate(1 day), message: Triage the night., owner: "slack:U0DANA"},
    {name: hourly, expression: rate(1 hour), message: Triage the hour.}]
tools:
  openapi:
    - {name: me, spec: specs/me.json, as_requester: local}
"""
SECRET = "gh-webhook-secret-for-tests"
LINK = re.compile(r"https://stack\.example/oauth/local/start\?ask=[A-Za-z0-9_-]+")


def whoami_then_say(request: ScriptedRequest) -> Any:
    """The model calls the tool once, then says what it answered (or why it was refused)."""
    results = request.tool_results()
    return reply(f"Said: {list(results.values())[-1]}") if results else call("me_whoami", {})


def delivery(sender: str, number: int) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"action": "opened", "pull_request": {"title": f"PR {number}"}, "sender": {"login": sender}})
    signature = "sha256=" + hmac.new(SECRET.encode(), body.encode(), hashlib.sha256).hexdigest()
    headers = {"X-Hub-Signature-256": signature, "X-GitHub-Delivery": f"d-{number}", "X-GitHub-Event": "pull_request"}
    return body.encode(), headers


def test_a_reactions_a_webhooks_and_a_schedules_run_act_for_whom_the_docs_name_or_refuse_saying_why(
    system, scripted, auth_server, kms_key, tmp_path: Path
) -> None:
    (tmp_path / "triage.yaml").write_text(WORKFLOW + provider_yaml(auth_server.issuer))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "me.json").write_text(userinfo_spec(auth_server.issuer))
    made: dict[str, ConnectFlow] = {}

    def connect(store: Any, secrets: Any) -> ConnectFlow:
        vault = Vault(store, KmsKeyring(*kms_key))
        made["flow"] = ConnectFlow(store, vault, workflow=lambda n: load_workflow(n, tmp_path), secrets=secrets,
                                   base_url=STACK)  # fmt: skip
        return made["flow"]

    server = scripted(*[whoami_then_say] * 9)
    secrets = {"OAUTH_STATE_KEY": "state-key-FOR-TESTS-0123456789", "LOCAL_CLIENT_SECRET": CLIENT_SECRET}
    s = system(server, secrets=secrets | {"GITHUB_WEBHOOK_SECRET": SECRET}, connect=connect)
    flow = made["flow"]
    ask = ConnectAsk("slack:U0DANA", "local", "triage", "run-earlier", "thread-earlier", time.time() + 3600)
    through_provider(flow.ask(ask)[1], routes_of(flow), "dana-account")  # Dana connected before
    s.apis.threads[PARENT] = [{"ts": REPLY, "thread_ts": PARENT, "user": "U0ERIN", "text": "The consumer drops."}]
    seen = len(auth_server.events("userinfo"))

    # A reaction's run acts for who reacted (Frank), not the message's author (Erin): Frank is asked, privately.
    s.post("/slack/events", *slack_request(reaction("Ev1", user="U0FRANK")))
    assert s.deliver() == ["awaiting_approval"]
    asked = [m["channel"] for m in s.apis.named("chat.postMessage") if LINK.search(m.get("text") or "")]
    assert asked == ["U0FRANK"] and accounts_served(auth_server, seen) == []

    # A webhook's run acts for the person its sender is mapped to (dependabot: Dana); an unmapped sender's refuses.
    assert s.post("/hooks/triage", *delivery("dependabot", 1))["statusCode"] == 200
    assert s.deliver() == ["answered"] and accounts_served(auth_server, seen, 1) == ["dana-account"]
    assert s.post("/hooks/triage", *delivery("octocat", 2))["statusCode"] == 200
    assert s.deliver() == ["answered"] and "'octocat' is not in triggers.webhook.identities" in said(server)

    # A schedule's run acts for its owner (nightly: Dana); an ownerless schedule's refuses.
    for name in ("nightly", "hourly"):
        tick = TickMessage("triage", name, "2026-11-27T06:00:00Z").body()
        assert s.worker.handle(tick, deadline=Deadline.after(600)) == "answered"
    assert accounts_served(auth_server, seen, 2) == ["dana-account", "dana-account"]  # octocat's, hourly's: none
    assert "the schedule 'hourly' names no owner" in said(server)


def said(server: Any) -> str:
    """What the tool answered in the last run (its result, as the model was given it)."""
    return str(list(server.requests[-1].tool_results().values())[-1])
