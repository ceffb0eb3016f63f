"""Tools that act as the person who asked (issue 53), end to end against a real authorisation server (oidc-provider,
OpenID-certified, on 127.0.0.1): Slack's signed request → the webhook → SQS (moto) → the worker → the scripted
model; the person's private link → the stack's start route → the provider's sign-in and consent → the stack's
callback → a "connected" message → the run resumes in another invocation and calls the provider with that
person's token, which the provider's own log names. Tokens are sealed under the stack's KMS key (moto's KMS) and
searched for in everything the stack wrote or said."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx2
from agent_runtime import telemetry
from agent_runtime.identity import KmsKeyring, Vault
from agent_runtime.identity.flow import ConnectFlow
from agent_runtime.pages.build import page_for
from agent_runtime.stores import RunStore
from agent_runtime.stores.items import ConnectAsk
from agent_runtime.testing import call, reply
from agent_runtime.workflows import load_workflow

from tests.oauth_support import (
    CLIENT_ID,
    CLIENT_SECRET,
    STACK,
    accounts_served,
    provider_yaml,
    routes_of,
    through_provider,
    userinfo_spec,
)
from tests.triggers_support import slack_mention, slack_request

LINK = re.compile(r"<(https://stack\.example/oauth/local/start\?ask=[A-Za-z0-9_-]+)\|")
STATE_KEY = "state-key-FOR-TESTS-0123456789"


def workflow(issuer: str) -> str:
    return """\
name: my-account
description: Answers from the asker's own account at the provider.
prompt: You answer from the person's own account.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  slack: {channels: [C0MINE]}
tools:
  openapi:
    - {name: me, spec: specs/me.json, as_requester: local}
""" + provider_yaml(issuer)


def setup(system: Any, server: Any, auth_server: Any, kms_key: Any, tmp_path: Path) -> tuple[Any, ConnectFlow]:
    (tmp_path / "my-account.yaml").write_text(workflow(auth_server.issuer))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "me.json").write_text(userinfo_spec(auth_server.issuer))
    kms, key_id = kms_key
    made: dict[str, ConnectFlow] = {}

    def connect(store: Any, secrets: Any) -> ConnectFlow:
        vault = Vault(store, KmsKeyring(kms, key_id))
        made["flow"] = ConnectFlow(
            store, vault, workflow=lambda name: load_workflow(name, tmp_path), secrets=secrets, base_url=STACK
        )
        return made["flow"]

    secrets = {"OAUTH_STATE_KEY": STATE_KEY, "LOCAL_CLIENT_SECRET": CLIENT_SECRET}
    return system(server, secrets=secrets, connect=connect), made["flow"]


def mention(s: Any, event_id: str, user: str, ts: str) -> None:
    event = slack_mention(event_id, channel="C0MINE", ts=ts, user=user, text="<@U0BOT> who am I there?")
    assert json.loads(s.post("/slack/events", *slack_request(event))["body"])["status"] == "queued"


def links_to(s: Any, user: str) -> list[str]:
    """The connect links the app sent ``user`` privately (its direct conversation: the user's id as channel)."""
    said = [LINK.search(m["text"]) for m in s.apis.named("chat.postMessage") if m["channel"] == user]
    return [link.group(1) for link in said if link is not None]


def test_a_run_asks_once_waits_resumes_with_that_persons_token_and_a_revoked_grant_asks_again(
    system, scripted, auth_server, kms_key, tmp_path, capfd, receiver, monkeypatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver[0])  # the runs traced: their spans searched too
    server = scripted(
        call("me_whoami", {}),  # Dana's first run: she is asked to connect; it waits
        reply("You are dana."),  # ... and goes on once she has
        call("me_whoami", {}),  # Sam's run: Sam is asked, not Dana
        reply("You are sam."),
        call("me_whoami", {}),  # Dana again: connected, nothing asked
        reply("Still dana."),
        call("me_whoami", {}),  # Dana after revoking the grant at the provider: refused, forgotten...
        call("me_whoami", {}),  # ... and asked again
    )
    s, flow = setup(system, server, auth_server, kms_key, tmp_path)
    vault = flow.vault
    seen = before = len(auth_server.events("userinfo"))

    mention(s, "Ev1", "U0DANA", "1763800001.0")
    assert s.deliver() == ["awaiting_approval"]
    [link] = links_to(s, "U0DANA")
    assert links_to(s, "U0SAM") == [] and accounts_served(auth_server, before) == []  # nothing called yet
    answered, _ = through_provider(link, s.get, "dana-account")
    assert answered["statusCode"] == 200 and "Connected local" in answered["body"]
    assert s.deliver() == ["answered"]  # the "connected" message: the run resumes in another invocation
    assert accounts_served(auth_server, seen, 1) == ["dana-account"]
    tokens = vault.load("slack:U0DANA", "local").tokens.values()

    mention(s, "Ev2", "U0SAM", "1763800002.0")  # a second person's run asks them, not the first
    assert s.deliver() == ["awaiting_approval"]
    [sam_link] = links_to(s, "U0SAM")
    assert len(links_to(s, "U0DANA")) == 1
    through_provider(sam_link, s.get, "sam-account")
    assert s.deliver() == ["answered"]
    assert accounts_served(auth_server, seen, 2) == ["dana-account", "sam-account"]
    tokens += vault.load("slack:U0SAM", "local").tokens.values()

    mention(s, "Ev3", "U0DANA", "1763800003.0")  # connected: not asked again
    assert s.deliver() == ["answered"] and len(links_to(s, "U0DANA")) == 1
    assert accounts_served(auth_server, seen, 3) == ["dana-account", "sam-account", "dana-account"]

    held = vault.load("slack:U0DANA", "local")
    auth_server.revoke(held.tokens.refresh_token)  # she revokes the grant at the provider itself
    mention(s, "Ev4", "U0DANA", "1763800004.0")
    assert s.deliver() == ["awaiting_approval"]
    assert len(links_to(s, "U0DANA")) == 2  # asked again
    assert vault.load("slack:U0DANA", "local") is None  # the refused token is forgotten

    written = everything_written(s, server, capfd, receiver[1])
    assert "dana-account" in written  # what the tool answered is in there: a token beside it would be found
    assert tokens and [token for token in tokens if token in written] == [], "a token reached what the stack wrote"
    assert any(span.name == "execute_tool me_whoami" for span in receiver[1])  # the calls were traced, and searched


def test_disconnect_written_to_the_app_revokes_the_grant_tells_them_privately_and_their_next_run_asks_again(
    system, scripted, auth_server, kms_key, tmp_path, capfd
) -> None:
    server = scripted(call("me_whoami", {}))  # Lee's run after disconnecting: asked again, it waits
    s, flow = setup(system, server, auth_server, kms_key, tmp_path)
    ask = ConnectAsk("slack:U0LEE", "local", "my-account", "run-earlier", "thread-earlier", time.time() + 3600)
    through_provider(flow.ask(ask)[1], routes_of(flow), "lee-account")  # connected for an earlier run
    tokens = flow.vault.load("slack:U0LEE", "local").tokens

    def direct(event_id: str, text: str) -> dict[str, Any]:  # no workflow takes direct messages: queued all the same
        dm = slack_mention(event_id, type="message", channel_type="im", channel="D0LEE", user="U0LEE", text=text)
        return json.loads(s.post("/slack/events", *slack_request(dm))["body"])

    assert direct("Ev7", "disconnect Local.") == {"status": "queued", "disconnect": "local"}
    assert s.deliver() == ["noted"]
    assert flow.vault.load("slack:U0LEE", "local") is None
    told = [m["text"] for m in s.apis.named("chat.postMessage") if m["channel"] == "U0LEE"]
    assert len(told) == 1 and "Disconnected local" in told[0] and "revoked at the provider" in told[0]
    assert refused_at_provider(auth_server, tokens.refresh_token)
    direct("Ev8", "disconnect local")  # again: nothing left, and said so
    assert s.deliver() == ["noted"] and "nothing to disconnect" in s.apis.named("chat.postMessage")[-1]["text"]

    mention(s, "Ev9", "U0LEE", "1763800009.0")
    assert s.deliver() == ["awaiting_approval"] and len(links_to(s, "U0LEE")) == 1  # asked to connect again
    assert [t for t in tokens.values() if t in everything_written(s, server, capfd, [])] == []


def refused_at_provider(auth_server: Any, refresh_token: str) -> bool:
    answer = httpx2.post(
        f"{auth_server.issuer}/token",
        data={"grant_type": "refresh_token", "refresh_token": refresh_token},
        auth=(CLIENT_ID, CLIENT_SECRET),
        timeout=10,
    )
    return answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


def everything_written(s: Any, server: Any, capfd: Any, spans: list[Any]) -> str:
    """Every record, page, transcript, queue message, Slack call, model request, log line and span of the test, and
    the store's raw items and objects, as one text to search."""
    telemetry.flush()  # what a handler does before it returns: its spans are at the collector now
    runs = RunStore(s.store)
    parts = [json.dumps(s.apis.calls), json.dumps(s.received), json.dumps([r.body for r in server.requests])]
    for row in runs.list_runs():
        parts += [json.dumps(runs.load_record(row.run_id)), page_for(runs, row.run_id) or ""]
    table = s.clients["dynamodb"].scan(TableName=s.store.table)["Items"]
    parts += [json.dumps(table, default=str), *objects(s.clients["s3"], s.store.bucket)]
    parts += [span.SerializeToString().decode("utf-8", "replace") for span in spans]
    captured = capfd.readouterr()
    parts += [captured.out, captured.err]
    return "\n".join(parts)


def objects(s3: Any, bucket: str) -> list[str]:
    """Every object of the stack's bucket (checkpoints, transcripts, claim checks), as text."""
    listed = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    return [s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read().decode("utf-8", "replace") for o in listed]
