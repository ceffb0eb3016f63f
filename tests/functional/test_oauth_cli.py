"""The CLI's side of tools that act as the person who asked, against oidc-provider on 127.0.0.1: ``agent-runtime
run`` at a terminal prints the stack's link and waits until you have connected, then calls the provider with your
token (the provider's own log names whose); without a terminal it refuses, saying why; ``agent-runtime oauth
revoke`` revokes a connection at the provider and forgets it. The stack's authorisation routes run in-process over
the same state directory, as ``serve`` shares it."""

from __future__ import annotations

import getpass
import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
from agent_runtime.identity import LocalKeyring, Vault
from agent_runtime.identity.flow import ConnectFlow
from agent_runtime.stores import LocalStore
from agent_runtime.stores.items import ConnectAsk
from agent_runtime.testing import ScriptedRequest, call, reply
from agent_runtime.workflows import load_workflow

from tests.cli_support import REPO, run_cli
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

LINK = re.compile(r"open (https://stack\.example/oauth/local/start\?ask=[A-Za-z0-9_-]+) to connect")
WORKFLOW = """\
name: mine
description: Answers from the asker's own account at the provider.
prompt: You answer from the person's own account.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
tools:
  openapi:
    - {name: me, spec: specs/me.json, as_requester: local}
"""
STATE_KEY = "state-key-FOR-TESTS-0123456789"


def stack(tmp_path: Path, issuer: str) -> tuple[ConnectFlow, dict[str, str]]:
    """The workflow, and the stack's side over the CLI's state directory (sealed by its key file); the CLI's env."""
    (tmp_path / "mine.yaml").write_text(WORKFLOW + provider_yaml(issuer))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "me.json").write_text(userinfo_spec(issuer))
    state = tmp_path / "state"
    store = LocalStore(state)
    secrets = {"oauth_state_key": STATE_KEY, "local_client_secret": CLIENT_SECRET}
    flow = ConnectFlow(
        store,
        Vault(store, LocalKeyring(state / "oauth.key")),
        workflow=lambda name: load_workflow(name, tmp_path),
        secrets=secrets.get,
        base_url=STACK,
    )
    env = {
        "AGENT_STATE_DIR": str(state),
        "AGENT_WORKFLOWS_DIR": str(tmp_path),
        "AGENT_API_URL": STACK,
        "AGENT_SANDBOX": "off",
        "OAUTH_STATE_KEY": STATE_KEY,
        "LOCAL_CLIENT_SECRET": CLIENT_SECRET,
    }
    return flow, env


def from_the_tool(request: ScriptedRequest) -> Any:
    return reply(f"The provider says: {request.tool_results().popitem()[1]}")


def test_a_run_at_a_terminal_prints_the_link_waits_for_you_to_connect_and_calls_the_provider_as_you(
    auth_server: Any, scripted: Any, tmp_path: Path
) -> None:
    flow, env = stack(tmp_path, auth_server.issuer)
    server = scripted(call("me_whoami", {}), from_the_tool)
    seen = len(auth_server.events("userinfo"))
    full = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")} | env
    full |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
    primary, terminal = pty.openpty()  # a terminal on stdin: the run may ask you there
    command = [sys.executable, "-m", "agent_runtime", "run", "mine", "-m", "Who am I there?"]
    with subprocess.Popen(command, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=full, cwd=REPO) as run:  # fmt: skip
        os.close(terminal)
        assert run.stderr is not None
        said = ""
        while (link := LINK.search(said)) is None:
            line = run.stderr.readline()
            assert line, f"the run ended without asking: {said}"
            said += line
        assert accounts_served(auth_server, seen) == []  # nothing called before you connect
        answered, _ = through_provider(link.group(1), routes_of(flow), "kim-account")
        out, err = run.communicate(timeout=60)
    os.close(primary)
    assert answered == {"statusCode": 200, "body": "connected"}
    assert run.returncode == 0, err
    assert accounts_served(auth_server, seen, 1) == ["kim-account"]  # the provider's log: your token, once
    assert "The provider says:" in out and "kim-account" in out  # its answer reached the model
    held = flow.vault.load(f"local:{getpass.getuser()}", "local")  # the run acted for you, at this login
    assert held is not None and held.tokens.access_token not in said + out + err


def test_a_run_without_a_terminal_refuses_the_tool_saying_why_and_asks_nobody(
    auth_server: Any, scripted: Any, tmp_path: Path
) -> None:
    _, env = stack(tmp_path, auth_server.issuer)
    server = scripted(call("me_whoami", {}), from_the_tool)
    full = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")} | env
    command = [sys.executable, "-m", "agent_runtime", "run", "mine", "-m", "Who am I there?"]
    done = subprocess.run(  # stdin not a terminal, whoever runs the tests: as in CI, or a cron job
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, cwd=REPO,
        env=full | {"OPENAI_BASE_URL": server.base_url},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no terminal to show you the link at" in done.stdout and "open https://" not in done.stderr
    [told] = [line for line in done.stderr.splitlines() if "acts as you" in line]  # what to do, in one line
    assert "has not connected" not in told and "run it once at a terminal" in told


def test_a_run_with_no_stack_to_link_to_says_in_one_line_what_to_start_and_set(
    auth_server: Any, scripted: Any, tmp_path: Path
) -> None:
    _, env = stack(tmp_path, auth_server.issuer)
    server = scripted(call("me_whoami", {}), from_the_tool)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_API_URL"))}
    full |= {k: v for k, v in env.items() if k != "AGENT_API_URL"} | {"OPENAI_BASE_URL": server.base_url}
    primary, terminal = pty.openpty()  # at a terminal: only the stack's address is missing
    command = [sys.executable, "-m", "agent_runtime", "run", "mine", "-m", "Who am I there?"]
    done = subprocess.run(command, stdin=terminal, capture_output=True, text=True, timeout=60, cwd=REPO, env=full)
    os.close(terminal)
    os.close(primary)
    assert done.returncode == 0, done.stderr
    [told] = [line for line in done.stderr.splitlines() if "acts as you" in line]
    assert "start `agent-runtime serve`" in told and "set AGENT_API_URL" in told


def test_the_cli_revokes_a_persons_connection_at_the_provider_and_forgets_it(auth_server: Any, tmp_path: Path) -> None:
    flow, env = stack(tmp_path, auth_server.issuer)
    _, link = flow.ask(ConnectAsk("slack:U0EDA", "local", "mine", "run-1", "thread-1", time.time() + 3600))
    through_provider(link, routes_of(flow), "eda-account")
    refresh = flow.vault.load("slack:U0EDA", "local").tokens.refresh_token
    done = run_cli("oauth", "revoke", "local", "--user", "slack:U0EDA", env=env)
    assert done.returncode == 0, done.stderr
    assert "Disconnected local" in done.stdout and "revoked at the provider" in done.stdout
    assert flow.vault.load("slack:U0EDA", "local") is None
    assert refresh not in done.stdout + done.stderr
    answer = httpx2.post(  # the grant is gone at the provider too: its refresh token no longer works
        f"{auth_server.issuer}/token",
        data={"grant_type": "refresh_token", "refresh_token": refresh},
        auth=(CLIENT_ID, CLIENT_SECRET),
        timeout=10,
    )
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"
    again = run_cli("oauth", "revoke", "local", "--user", "slack:U0EDA", env=env)
    assert again.returncode == 1 and "nothing to disconnect" in again.stdout


def test_serve_keeps_the_authorisation_routes_over_its_state_directory(auth_server: Any, tmp_path: Path) -> None:
    """`agent-runtime run` with AGENT_API_URL at a local `serve` connects through it: its routes are the flow's,
    over the same state directory (a request the CLI kept there is found, and sent on to the provider)."""
    from agent_runtime.config import RuntimeConfig
    from agent_runtime.service.serve import LocalServer
    from agent_runtime.triggers.config import TriggerConfig

    flow, _ = stack(tmp_path, auth_server.issuer)
    state = tmp_path / "state"
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=state, use_demo_model=True, sandbox_mode="off")
    server = LocalServer(runtime, TriggerConfig.from_env({"OAUTH_STATE_KEY": STATE_KEY}), port=0).start()
    try:
        ask, _ = flow.ask(ConnectAsk("local:kim", "local", "mine", "run-1", "", time.time() + 3600))
        with httpx2.Client(timeout=10) as browser:
            sent = browser.get(f"{server.url}/oauth/local/start", params={"ask": ask})
            unknown = browser.get(f"{server.url}/oauth/local/start", params={"ask": "x" * 43})
    finally:
        server.close()
    assert sent.status_code == 302 and sent.headers["location"].startswith(f"{auth_server.issuer}/auth?")
    assert f"redirect_uri={server.url.replace(':', '%3A').replace('/', '%2F')}" in sent.headers["location"]
    assert unknown.status_code == 404 and "no such request to connect" in unknown.text
