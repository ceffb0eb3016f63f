"""The shipped examples (examples/workflows: a schedule, a reaction, a signed webhook, a code coordinator) are
valid workflows with their example tools (examples/tools), as `workflows validate` checks them; the ticket's
create call asks first; the merged-PR job, run on stubs, marks only what GitHub says merged and asks no model."""

from __future__ import annotations

from agent_runtime.workflows import load_workflow

from tests.cli_support import run_cli
from tests.conftest import REPO

EXAMPLES = REPO / "examples" / "workflows"


def test_the_examples_validate_with_their_tools() -> None:
    env = {"AGENT_WORKFLOWS_DIR": str(EXAMPLES), "AGENT_TOOLS_PATH": str(REPO / "examples" / "tools"),
           "SLACK_BOT_TOKEN": "xoxb-example", "JIRA_BASE_URL": "https://example.atlassian.net",
           "JIRA_EMAIL": "bot@example.com", "JIRA_API_TOKEN": "example"}  # as the worker has them  # fmt: skip
    checked = run_cli("workflows", "validate", env=env)
    assert checked.returncode == 0, checked.stderr
    listed = run_cli("workflows", "list", env=env).stdout
    assert "weekdays: cron(0 9 ? * MON-FRI *) Europe/Paris, next " in listed and "-> slack:C0DIGEST" in listed


def test_each_example_shows_one_trigger_of_its_kind() -> None:
    flows = {path.stem: load_workflow(str(path), EXAMPLES) for path in EXAMPLES.glob("*.yaml")}
    assert flows["daily-digest"].triggers.schedules[0].answer_to == "slack:C0DIGEST"
    assert flows["jira-from-reaction"].triggers.slack is not None
    assert flows["jira-from-reaction"].triggers.slack.reactions == ("jira",)
    assert flows["jira-from-reaction"].tools.approvers == ("requester",)
    assert flows["pr-summary"].triggers.webhook is not None and flows["pr-summary"].triggers.webhook.events == (
        "pull_request",
    )


def test_the_merged_pr_job_marks_only_what_merged_and_asks_no_model(monkeypatch) -> None:
    from dataclasses import replace

    from agent_runtime import Services, tool
    from agent_runtime.runtime import build_agent
    from agent_runtime.testing import ScriptedServer

    monkeypatch.setenv("AGENT_TOOLS_PATH", str(REPO / "examples" / "tools"))
    links = "1.1 https://github.com/acme/api/pull/12 unmarked\n2.2 https://github.com/acme/api/pull/13 unmarked\n"
    links += "3.3 https://github.com/acme/api/pull/14 marked"
    reacted: list[str] = []

    @tool
    def recent_pr_links(channel: str) -> str:
        """Stub."""
        return links

    @tool
    def pr_merged(url: str) -> str:
        """Stub."""
        if url.endswith("/13"):
            raise RuntimeError("GitHub answered 502")  # said and skipped: the script catches ToolFailed
        return "merged" if url.endswith("/12") else "not merged"

    @tool(mutating=True)
    def react(channel: str, ts: str, name: str) -> str:
        """Stub."""
        reacted.append(ts)
        return "ok"

    stubs = [replace(t, stub=True) for t in (recent_pr_links, pr_merged, react)]  # in place of the real ones
    flow = load_workflow(str(EXAMPLES / "merged-prs.yaml"), EXAMPLES)
    with ScriptedServer([]) as server:  # no step: a model call would fail the test
        from agent_runtime.models import OpenAIChatModel

        record = build_agent(flow, OpenAIChatModel("gpt-4.1-mini", client=server.client()), Services(),
                             tools=stubs).run("Mark the merged pull requests.")  # fmt: skip
    assert record.status.value == "completed", record.stop_reason
    assert record.final_answer == ("Marked 1 merged pull request(s).\n- https://github.com/acme/api/pull/12\nNot "
                                   "checked: https://github.com/acme/api/pull/13: tool 'pr_merged' failed: "
                                   "RuntimeError: GitHub answered 502")  # fmt: skip
    assert reacted == ["1.1"] and server.requests == []
