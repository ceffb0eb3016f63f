"""Tools that act as the person who asked, tried in the playground against oidc-provider (issue 55): a mention's
run asks its person to connect in their direct message with the app (chat.postMessage to their user id, as Slack
takes it), the link there leads through serve's own routes to the provider and back, and the run goes on with
that person's token — the provider's own log names whose. Nothing is set up beyond the workflow: serve is its own
AGENT_API_URL and keeps the links' state key in its state directory."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import pytest
from agent_runtime.playground.layout import DM
from agent_runtime.playground.workspace import MESSAGE

from tests.oauth_support import LOOPBACK_CLIENT_ID, accounts_served, through_provider, userinfo_spec
from tests.playground_support import act, page_token, playground, until

WORKFLOW = """\
name: whoami
description: Says who the requester is at the provider.
prompt: You answer from the person's own account.
model: {{name: gpt-4.1-mini, context_window: 128000}}
oauth:
  providers:
    local: {{authorize_url: "{issuer}/auth", token_url: "{issuer}/token", client_id: {client}, scopes: [openid]}}
tools:
  openapi:
    - {{name: me, spec: specs/me.json, as_requester: local}}
triggers:
  slack: {{channels: [C0OAUTH]}}
"""
LINK = re.compile(r"<(http://127\.0\.0\.1:\d+/oauth/local/start\?ask=[A-Za-z0-9_-]{43})\|")


def whoami_then_say(request: Any) -> Any:
    from agent_runtime.testing import call, reply

    results = request.tool_results()
    return reply(f"Said: {list(results.values())[-1]}") if results else call("me_whoami", {})


def asked(server: Any, user: str) -> str:
    """The connect link the app sent ``user`` in their direct message (waiting for it)."""
    dms = lambda: [m for m in server.playground.workspace.all(MESSAGE, scope=DM) if m.get("_dm") == user]  # noqa: E731
    [message] = until(dms, what=f"the app's direct message to {user}")
    assert message["bot_id"] and message["channel"] == DM and not message.get("_to")
    return LINK.search(message["text"]).group(1)


def browser(url: str) -> dict[str, Any]:
    """A person's browser at serve's routes (the start and the callback), one request at a time."""
    answer = httpx2.get(url, follow_redirects=False, timeout=10)
    return {
        "statusCode": answer.status_code,
        "headers": {"Location": answer.headers.get("location")},
        "body": answer.text,
    }


def web_api(server: Any, method: str, args: dict[str, Any]) -> dict[str, Any]:
    api = server.playground.slack
    request = urllib.request.Request(
        api.base + method,
        data=json.dumps(args).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {api.token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return dict(json.loads(response.read()))


def test_a_mentions_run_asks_its_person_in_their_dm_and_goes_on_with_their_token(
    auth_server: Any, scripted: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "workflows" / "specs").mkdir(parents=True)
    (tmp_path / "workflows" / "specs" / "me.json").write_text(userinfo_spec(auth_server.issuer))
    model = scripted(*[whoami_then_say] * 3)  # Dana's call, her answer once connected; Sam's call
    monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
    seen = len(auth_server.events("userinfo"))
    workflow = WORKFLOW.format(issuer=auth_server.issuer, client=LOOPBACK_CLIENT_ID)
    with playground(tmp_path, {"whoami": workflow}, demo=False) as server:
        token = page_token(server.url)
        said = act(server.url, "message", {"channel": "C0OAUTH", "text": "@agent who am I there?"}, token)
        link = asked(server, "U0DANA")
        assert link.startswith(server.url) and accounts_served(auth_server, seen) == []  # nothing called yet
        answered, _ = through_provider(link, browser, "dana-account", at=server.url)
        assert answered["statusCode"] == 200 and "Connected local" in answered["body"], answered
        thread = lambda: server.playground.workspace.thread("C0OAUTH", said["ts"])  # noqa: E731
        [answer] = until(lambda: [m for m in thread() if "Said:" in str(m.get("text"))], what="Dana's answer")
        assert "dana-account" in answer["text"]
        assert accounts_served(auth_server, seen, 1) == ["dana-account"]  # the provider's log: her token, once
        act(server.url, "message", {"user": "U0SAM", "channel": "C0OAUTH", "text": "@agent and me?"}, token)
        assert asked(server, "U0SAM") != link  # Sam is asked in his own, with a link of his own
        assert accounts_served(auth_server, seen) == ["dana-account"]  # and nothing is called as Dana for him
        posted = web_api(server, "chat.postMessage", {"channel": "U0SAM", "text": "hi"})
        nobody = web_api(server, "chat.postMessage", {"channel": "U0NOBODY", "text": "hi"})
    assert posted["ok"] and posted["channel"] == DM  # a user id is their direct message, as Slack answers
    assert nobody == {"ok": False, "error": "channel_not_found"}
