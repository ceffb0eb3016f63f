"""The shipped examples (examples/workflows: a schedule, a reaction, a signed webhook) are valid workflows with
their example tools (examples/tools), as `workflows validate` checks them; their create call asks first."""

from __future__ import annotations

from agent_runtime.workflows import load_workflow

from tests.conftest import REPO
from tests.functional.test_cli import run_cli

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
