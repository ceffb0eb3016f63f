"""A real authorisation server for the tests (panva's oidc-provider, OpenID-certified, from the npm registry:
tests/oauth_provider, installed by `make oauth-provider`), and a person's browser going through it.

The server runs on 127.0.0.1 with one confidential client whose redirect URI is the stack's callback at
``STACK`` (a name nothing resolves: the browser hands that last redirect to the webhook's routes in-process). Its
own log — each grant, each token request, each userinfo call and whose token it was — is read back as JSON."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

SERVER = Path(__file__).resolve().parent / "oauth_provider"
STACK = "https://stack.example"  # the stack's API as its links and redirect URI name it
CLIENT_ID, CLIENT_SECRET = "agent-runtime", "client-secret-FOR-TESTS-0001"
# A public client for `serve` on any loopback port (RFC 8252: a native app's loopback redirect matches any port)
LOOPBACK_CLIENT_ID = "agent-runtime-serve"
FORM = re.compile(r'<form[^>]*action="([^"]+)"')


class AuthServer:
    """oidc-provider in a node process: ``issuer``, its ``log`` (parsed lines), stopped with ``close``."""

    def __init__(self, *, access_token_seconds: int = 3600) -> None:
        if not (SERVER / "node_modules" / "oidc-provider").is_dir():
            raise RuntimeError(
                "oidc-provider is not installed: run `make oauth-provider` (npm ci in tests/oauth_provider)"
            )
        client = {
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "redirect_uris": [f"{STACK}/oauth/local/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
        loopback = {
            "client_id": LOOPBACK_CLIENT_ID,
            "application_type": "native",
            "token_endpoint_auth_method": "none",
            "redirect_uris": ["http://127.0.0.1/oauth/local/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
        options = json.dumps({"clients": [client, loopback], "accessTokenTTL": access_token_seconds})
        self.process = subprocess.Popen(
            ["node", str(SERVER / "server.mjs"), options],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        self.issuer = json.loads(self.process.stdout.readline())["issuer"]
        self.log: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):  # its own lines; oidc-provider's notices are prose
                self.log.append(json.loads(line))

    def events(self, name: str, *, at_least: int = 0) -> list[dict[str, Any]]:
        """Its log's entries of ``name``; waiting (5 s at most) until there are ``at_least``: the log is read
        from its output by a thread, a moment after the request it logs has been answered."""
        deadline = time.monotonic() + 5
        while len(found := [e for e in list(self.log) if e.get("event") == name]) < at_least:
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        return found

    def revoke(self, token: str) -> None:
        """The person revokes the grant at the provider itself (as its account page would)."""
        answer = httpx2.post(
            f"{self.issuer}/token/revocation", data={"token": token}, auth=(CLIENT_ID, CLIENT_SECRET), timeout=10
        )
        assert answer.status_code == 200, answer.text

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def provider_yaml(issuer: str, *, token_url: str | None = None) -> str:
    """The workflow's ``oauth:`` section for this server (``token_url``: another, such as one that is down)."""
    return f"""\
oauth:
  providers:
    local:
      authorize_url: {issuer}/auth
      token_url: {token_url or issuer + "/token"}
      revoke_url: {issuer}/token/revocation
      client_id: {CLIENT_ID}
      client_secret: ${{secret:local_client_secret}}
      scopes: [openid, offline_access]
"""


def userinfo_spec(issuer: str) -> str:
    """An OpenAPI tool over the provider's own userinfo endpoint (``/me``): who the token it is called with is for."""
    return json.dumps(
        {
            "openapi": "3.0.0",
            "info": {"title": "the provider's userinfo", "version": "1"},
            "servers": [{"url": issuer}],
            "paths": {"/me": {"get": {"operationId": "whoami", "summary": "Who the token is for"}}},
        }
    )


def accounts_served(server: AuthServer, since: int = 0, count: int = 0) -> list[str]:
    """The accounts the provider's own log says its userinfo endpoint answered for, in order, from its ``since``-th
    call on (waiting for ``count`` of them)."""
    return [e["account"] for e in server.events("userinfo", at_least=since + count)[since:] if e["status"] == 200]


def through_provider(
    link: str, stack: Callable[[str], dict[str, Any]], account: str, *, decline: bool = False, at: str = STACK
) -> tuple[dict[str, Any], str]:
    """A person follows ``link`` (the stack's start route, through ``stack``: the webhook in-process), signs in to
    the provider as ``account`` and consents (or declines); the provider's redirect to the stack's callback is
    handed to ``stack`` as the browser would follow it (``at``: the stack's address). The callback's answer, and the
    callback URL itself."""
    started = stack(link)
    assert started["statusCode"] == 302, started
    where = started["headers"]["Location"]
    with httpx2.Client(follow_redirects=False, timeout=10) as browser:
        while not where.startswith(at):
            answer = browser.get(where)
            if answer.status_code in (302, 303):
                where = urllib.parse.urljoin(where, answer.headers["location"])
                continue
            assert answer.status_code == 200, answer.text[:500]
            form = urllib.parse.urljoin(where, FORM.search(answer.text).group(1))
            if decline and 'name="prompt" value="consent"' in answer.text:
                answer = browser.get(f"{form}/abort")
            elif 'value="login"' in answer.text:
                answer = browser.post(form, data={"prompt": "login", "login": account, "password": "any"})
            else:
                answer = browser.post(form, data={"prompt": "consent"})
            where = urllib.parse.urljoin(form, answer.headers["location"])
    return stack(where), where


def routes_of(flow: Any) -> Callable[[str], dict[str, Any]]:
    """The stack's two authorisation routes over ``flow`` (an ``identity.flow.ConnectFlow``), answered as the
    webhook answers them (a status, a Location, a body), without the rest of the stack."""
    from agent_runtime.identity.flow import FlowRefused

    def get(url: str) -> dict[str, Any]:
        parts = urllib.parse.urlsplit(url)
        provider, route = parts.path.split("/")[2:4]
        query = dict(urllib.parse.parse_qsl(parts.query))
        try:
            if route == "start":
                return {"statusCode": 302, "headers": {"Location": flow.start(provider, query)}}
            return {"statusCode": 200, "body": flow.callback(provider, query).outcome}
        except FlowRefused as refused:
            return {"statusCode": refused.status, "body": refused.reason}

    return get
