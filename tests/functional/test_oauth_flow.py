"""The stack's side of connecting, against a real authorisation server (oidc-provider on 127.0.0.1) with the
tokens sealed under moto's KMS: a connection made, its access token expired and refreshed, a denied consent, a
forged or replayed ``state``, a token endpoint that is down — each leaving the store as it must."""

from __future__ import annotations

import re
import socket
import urllib.parse
from pathlib import Path
from typing import Any

import httpx2
import pytest
from agent_runtime.identity import Connections, KmsKeyring, Vault
from agent_runtime.identity.flow import ConnectFlow, FlowRefused
from agent_runtime.stores import LocalStore
from agent_runtime.stores.items import ConnectAsk
from agent_runtime.workflows import load_workflow
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oauth_support import CLIENT_SECRET, STACK, provider_yaml, routes_of, through_provider

SECRETS = {"oauth_state_key": "state-key-FOR-TESTS-0123456789", "local_client_secret": CLIENT_SECRET}
HEAD = """\
name: mine
description: Acts as the asker.
prompt: You help.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
"""


class Clock:
    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def flow(auth_server: Any, kms_key: Any, tmp_path: Path) -> ConnectFlow:
    (tmp_path / "mine.yaml").write_text(HEAD + provider_yaml(auth_server.issuer))
    kms, key_id = kms_key
    store = LocalStore(tmp_path / "state")
    return ConnectFlow(
        store,
        Vault(store, KmsKeyring(kms, key_id)),
        workflow=lambda name: load_workflow(name, tmp_path),
        secrets=SECRETS.get,
        base_url=STACK,
    )


def asked(flow: ConnectFlow, person: str, clock: float = 0.0) -> tuple[str, str]:
    import time

    ask = ConnectAsk(person, "local", "mine", "run-1", "thread-1", (clock or time.time()) + 3600)
    return flow.ask(ask)


def connections(flow: ConnectFlow, person: str, clock: Any) -> Connections:
    providers = flow.workflow("mine").oauth.providers
    return Connections(person, providers, vault=flow.vault, secrets=SECRETS.get, clock=clock)


def test_a_connection_is_refreshed_when_its_access_token_expires_and_the_provider_answers_the_new_one(
    flow: ConnectFlow, auth_server: Any
) -> None:
    ask, link = asked(flow, "slack:U0ANN")
    answered, _ = through_provider(link, routes_of(flow), "ann-account")
    assert answered == {"statusCode": 200, "body": "connected"} and flow.status(ask) == "connected"
    clock = Clock()
    mine = connections(flow, "slack:U0ANN", clock)
    first = mine.credential("local")
    held = flow.vault.load("slack:U0ANN", "local")
    assert first is not None and held is not None and held.tokens.expires_at is not None
    assert mine.credential("local").access_token == first.access_token  # fresh: no refresh
    logged = auth_server.events("token")
    refreshes = len([e for e in logged if e["grant_type"] == "refresh_token"])
    clock.now = held.tokens.expires_at + 1  # the access token has expired
    second = mine.credential("local")
    assert second is not None and second.access_token != first.access_token
    tokens = auth_server.events("token", at_least=len(logged) + 1)
    assert len([e for e in tokens if e["grant_type"] == "refresh_token"]) == refreshes + 1
    me = httpx2.get(f"{auth_server.issuer}/me", headers=second.headers(), timeout=10)
    assert me.status_code == 200 and me.json()["sub"] == "ann-account"  # the provider takes the new one
    assert flow.vault.load("slack:U0ANN", "local").tokens.access_token == second.access_token  # kept, sealed


def test_a_revoked_grant_is_forgotten_at_the_next_refresh(flow: ConnectFlow, auth_server: Any) -> None:
    _, link = asked(flow, "slack:U0BEN")
    through_provider(link, routes_of(flow), "ben-account")
    held = flow.vault.load("slack:U0BEN", "local")
    auth_server.revoke(held.tokens.refresh_token)
    clock = Clock()
    clock.now = held.tokens.expires_at + 1
    assert connections(flow, "slack:U0BEN", clock).credential("local") is None  # invalid_grant: not connected
    assert flow.vault.load("slack:U0BEN", "local") is None


def test_a_denied_consent_connects_nothing_and_says_so(flow: ConnectFlow) -> None:
    ask, link = asked(flow, "slack:U0CAT")
    answered, _ = through_provider(link, routes_of(flow), "cat-account", decline=True)
    assert answered == {"statusCode": 200, "body": "denied"} and flow.status(ask) == "denied"
    assert flow.vault.load("slack:U0CAT", "local") is None
    again = routes_of(flow)(link)  # the request is settled: its link leads nowhere now
    assert again["statusCode"] == 410 and "denied" in again["body"]


def test_a_replayed_or_altered_state_is_refused_and_a_token_endpoint_down_leaves_the_ask_open(
    flow: ConnectFlow, auth_server: Any, tmp_path: Path
) -> None:
    with socket.socket() as closed:  # a port nothing listens on: the token endpoint is down
        closed.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{closed.getsockname()[1]}/token"
    (tmp_path / "mine.yaml").write_text(HEAD + provider_yaml(auth_server.issuer, token_url=down))
    ask, link = asked(flow, "slack:U0DAN")
    answered, callback = through_provider(link, routes_of(flow), "dan-account")
    assert answered["statusCode"] == 502 and "could not be reached" in answered["body"]
    assert flow.status(ask) == "open" and flow.vault.load("slack:U0DAN", "local") is None
    replayed = routes_of(flow)(callback)  # the provider's answer again: its state is used up
    assert replayed["statusCode"] == 400 and "replay" in replayed["body"]
    (tmp_path / "mine.yaml").write_text(HEAD + provider_yaml(auth_server.issuer))
    answered, callback = through_provider(link, routes_of(flow), "dan-account")  # the same link, again
    assert answered == {"statusCode": 200, "body": "connected"}
    nonce, signature = re.search(r"state=([^&]+)", callback).group(1).split(".")
    for state in (f"{nonce}.{'0' * 64}", f"{'A' * 43}.{signature}", "forged"):
        query = urllib.parse.urlencode({"state": state, "code": "x"})
        altered = routes_of(flow)(f"{STACK}/oauth/local/callback?{query}")
        assert altered["statusCode"] == 400, state


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.dictionaries(st.sampled_from(["state", "code", "error", "ask", "x"]), st.text(max_size=120)))
def test_whatever_a_callback_or_a_link_says_is_answered_with_a_reason_and_connects_no_one(
    flow: ConnectFlow, query: dict[str, str]
) -> None:
    """Invariant: a request the flow did not make — any query, forged state, unknown ask — is refused with an HTTP
    status and a reason (never another exception) and stores no connection."""
    for route in (flow.callback, flow.start):
        with pytest.raises(FlowRefused) as refused:
            route("local", query)
        assert 400 <= refused.value.status < 600 and refused.value.reason
    assert flow.store.list_items("oauth#slack:U0EVE#local") == []
