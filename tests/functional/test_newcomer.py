"""A newcomer's first hour: the README's first workflow runs as written on a tree with nothing configured, and
``workflows validate`` says everything a workflow lacks in one pass (errors fail it, what a run here goes without
is a warning)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from agent_runtime.workflows import parse_workflow
from agent_runtime.workflows.credentials import missing_credentials
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.newcomer_support import bare_env, cli, readme_first_workflow


def test_the_readmes_first_workflow_runs_as_written_with_nothing_configured(tmp_path: Path) -> None:
    validate, run = readme_first_workflow(tmp_path)
    assert validate[:2] == ["workflows", "validate"] and run[:2] == ["run", "incident-helper"]
    shutil.copytree(REPO / "examples" / "incidents", tmp_path / "examples" / "incidents")  # as a clone has them
    env = bare_env(AGENT_WORKFLOWS_DIR=str(tmp_path / "workflows"))  # the clone's workflows/, here a copy

    checked = cli(*validate, cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stderr  # valid: what this machine lacks is said, and not an error
    assert "ok  " in checked.stdout
    assert "warning: tools.builtin 'slack_thread': no credentials (SLACK_BOT_TOKEN)" in checked.stderr
    assert "warning: triggers.slack: SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN are not set" in checked.stderr

    ran = cli(*run, cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() and "Traceback" not in ran.stderr
    [left_out] = [line for line in ran.stderr.splitlines() if "slack_thread" in line]  # one line says so
    assert "left out of this run: no credentials (SLACK_BOT_TOKEN)" in left_out
    # Nothing in a pasted log and a table asks for a restart: the answer is the first error and the numbers, and no
    # call gave a tool a value the message does not name (the demo had restarted "INFO file-19edf0be9201 virtual").
    assert "The first error in the pasted log is at line 67: `2026-11-20T14:02:10Z ERROR payments POST" in ran.stdout
    assert "errors: 1 at 14:00, peak 512 at 14:07" in ran.stdout and "p95_latency_ms" in ran.stdout
    shown = cli("runs", "list", cwd=tmp_path, env=env)
    assert "incident-helper" in shown.stdout and "completed" in shown.stdout
    run_id = re.search(r"run (run-[0-9a-f]+)", ran.stderr)[1]  # type: ignore[index]
    record = json.loads(cli("runs", "show", run_id, "--json", cwd=tmp_path, env=env).stdout)
    called = [call["name"] for call in record["tool_calls"]]
    assert called and "restart_service" not in called, called  # only the file tools, on the files


EVERYTHING = """\
name: everything
description: Uses every credential a workflow can.
prompt: You help.
model: {name: gpt-4.1-mini, context_window: 128000}
tools:
  builtin: [slack_thread, jira_issue, jira_search]
  python: [no_such_module:nothing]
  mcp:
    - {name: notion, url: "https://mcp.example.invalid/mcp", headers: {Authorization: "Bearer ${secret:notion_token}"}}
triggers:
  slack: {channels: [C0123INCIDENTS]}
  jira: {projects: [PROJ]}
  webhook: {secret: github_webhook_secret}
  schedule:
    - {name: morning, expression: "cron(0 9 ? * MON-FRI *)", message: Digest, answer_to: "slack:C0123DIGEST"}
    - {name: ticket, expression: "rate(1 day)", message: Digest, answer_to: "jira:PROJ-12"}
"""


def test_validate_says_every_problem_and_every_missing_credential_in_one_pass(tmp_path: Path) -> None:
    (tmp_path / "everything.yaml").write_text(EVERYTHING)
    env = bare_env(AGENT_WORKFLOWS_DIR=str(tmp_path))
    result = cli("workflows", "validate", "everything", cwd=tmp_path, env=env)
    assert result.returncode == 2  # the errors: a secret the MCP server needs, a Python tool that is not there
    said = result.stderr
    assert "tools: secret 'notion_token' is not set" in said
    assert "tools.python 'no_such_module:nothing': cannot import" in said
    for warning in (
        "tools.builtin 'slack_thread': no credentials (SLACK_BOT_TOKEN)",
        "tools.builtin 'jira_issue': no credentials (JIRA_BASE_URL, JIRA_EMAIL and JIRA_API_TOKEN)",
        "tools.builtin 'jira_search': no credentials",
        "triggers.slack: SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN are not set",
        "triggers.jira: JIRA_WEBHOOK_SECRET (or JIRA_SHARED_SECRET) is not set",
        "triggers.webhook.secret: GITHUB_WEBHOOK_SECRET is not set: every POST /hooks/everything is refused",
        "triggers.schedule 'morning': answer_to slack:C0123DIGEST: SLACK_BOT_TOKEN is not set",
        "triggers.schedule 'ticket': answer_to jira:PROJ-12: JIRA_BASE_URL, JIRA_EMAIL and JIRA_API_TOKEN",
    ):
        assert f"everything.yaml: warning: {warning}" in said, said
    assert "Traceback" not in said

    fixed = (tmp_path / "everything.yaml").read_text().replace("  python: [no_such_module:nothing]\n", "")
    (tmp_path / "everything.yaml").write_text(fixed.replace("${secret:notion_token}", "static"))
    offline = cli("workflows", "validate", "everything", "--offline", cwd=tmp_path, env=env)
    assert offline.returncode == 0 and "warning" not in offline.stderr, offline.stderr  # the file alone
    tokens = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "JIRA_BASE_URL": "https://x.example",
              "JIRA_EMAIL": "bot@x.example", "JIRA_API_TOKEN": "t", "JIRA_SHARED_SECRET": "s",
              "GITHUB_WEBHOOK_SECRET": "g"}  # fmt: skip
    without_mcp = fixed.replace(fixed[fixed.index("  mcp:") : fixed.index("triggers:")], "")
    (tmp_path / "everything.yaml").write_text(without_mcp)
    env = bare_env(**tokens, AGENT_WORKFLOWS_DIR=str(tmp_path))
    ready = cli("workflows", "validate", "everything", cwd=tmp_path, env=env)
    assert ready.returncode == 0 and "warning" not in ready.stderr, ready.stderr


KEYS = ("slack_signing_secret", "slack_bot_token", "jira_webhook_secret", "jira_shared_secret", "jira_api_token",
        "github_webhook_secret")  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(KEYS)), st.booleans())
def test_each_missing_credential_is_named_and_no_set_one_is(present: set[str], site: bool) -> None:
    """Whatever is set: a warning names each credential a trigger needs and lacks, and none that is set; with
    everything set, none is said."""
    import yaml

    data = yaml.safe_load(EVERYTHING)
    data.pop("tools")
    workflow = parse_workflow(data, file="everything.yaml")
    lacking = missing_credentials(workflow, lambda key: "v" if key in present else None, jira_site=site)
    said = " ".join(why for _, why in lacking)
    for key in present:
        assert f"{key.upper()} is not set" not in said and f"{key.upper()} and" not in said
    needed = {"slack_signing_secret", "slack_bot_token", "github_webhook_secret"} - present
    for key in needed:
        assert key.upper() in said
    answers = site and "jira_api_token" in present
    assert ("JIRA_API_TOKEN are not all set" in said) is not answers
    verify = {"jira_webhook_secret", "jira_shared_secret"} & present
    assert ("JIRA_WEBHOOK_SECRET (or JIRA_SHARED_SECRET) is not set" in said) is not bool(verify)
    if set(KEYS) <= present and site:
        assert lacking == []
    # What serve does without them is said as it is: without SLACK_BOT_TOKEN it serves the playground, which takes
    # Slack's and JIRA's events in their place; with it, there is no playground to point to.
    serves = [why for key, why in lacking if key.startswith(("triggers.slack", "triggers.jira"))]
    assert all(("playground" in why) is ("slack_bot_token" not in present) for why in serves), serves


TYPOED = [
    ("run", "incident-helpr", "-m", "hi"),
    ("eval", "incident-helpr"),
    ("eval", "add", "incident-helpr", "--from-run", "run-0123456789abcdef"),
    ("workflows", "validate", "incident-helpr"),
    ("workflows", "webhook-token", "incident-helpr"),
    ("runs", "stats", "--workflow", "incident-helpr"),
]


def test_a_typo_of_a_workflow_name_is_said_as_one_wherever_a_name_is_taken(tmp_path: Path) -> None:
    readme_first_workflow(tmp_path)
    env = bare_env(AGENT_WORKFLOWS_DIR=str(tmp_path / "workflows"), AGENT_STATE_DIR=str(tmp_path / "state"))
    for args in TYPOED:
        result = cli(*args, cwd=tmp_path, env=env)
        assert result.returncode == 2, (args, result.stderr)
        assert "no such workflow 'incident-helpr'; did you mean 'incident-helper'?" in result.stderr, args
        assert "write " not in result.stderr and "Traceback" not in result.stderr


NAMES = ["document-feedback", "incident-helper", "jira-triage", "knowledge-answers", "slack-helper"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(NAMES), st.integers(0, 40), st.sampled_from(["drop", "swap", "change"]), st.sampled_from("xqz"))
def test_one_slip_of_the_keyboard_points_back_to_the_name_meant(name: str, at: int, slip: str, letter: str) -> None:
    """Any one character dropped, swapped with the next or changed: the name suggested is the one meant; a
    name of the folder is never a typo."""
    from agent_runtime.workflows.loader import closest

    i = at % (len(name) - 1)
    typo = {"drop": name[:i] + name[i + 1 :], "swap": name[:i] + name[i + 1] + name[i] + name[i + 2 :],
            "change": name[:i] + letter + name[i + 1 :]}[slip]  # fmt: skip
    assert closest(name, NAMES) is None
    if typo not in NAMES:
        assert closest(typo, NAMES) == name


def test_validate_says_whose_direct_messages_the_readmes_workflow_does_not_get(tmp_path: Path) -> None:
    """In a clone, the README's incident-helper sits beside document-feedback, which takes direct messages first."""
    validate, _ = readme_first_workflow(tmp_path)
    shutil.copy(REPO / "workflows" / "document-feedback.yaml", tmp_path / "workflows")
    shutil.copytree(REPO / "workflows" / "prompts", tmp_path / "workflows" / "prompts")
    checked = cli(*validate, cwd=tmp_path, env=bare_env(AGENT_WORKFLOWS_DIR=str(tmp_path / "workflows")))
    assert checked.returncode == 0, checked.stderr  # a warning, not an error
    [shadowed] = [line for line in checked.stderr.splitlines() if "direct_messages:" in line]
    assert shadowed.startswith(f"{tmp_path / 'workflows' / 'incident-helper.yaml'}: warning: triggers.slack.")
    assert "go to 'document-feedback', the first by name" in shadowed
    assert "direct_messages and suggested_prompts are never used" in shadowed
    alone = cli("workflows", "validate", "document-feedback", cwd=tmp_path, env=bare_env(AGENT_WORKFLOWS_DIR=str(
        tmp_path / "workflows")))  # fmt: skip
    assert "direct_messages:" not in alone.stderr  # the one that gets them is not warned
