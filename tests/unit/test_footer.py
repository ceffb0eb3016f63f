"""The footer replies end with: a link only when it resolves, Slack's link form in chat, Markdown (or the file's
real location) on the command line, and italics that JIRA renders (not literal underscores)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_runtime.adf import to_adf
from agent_runtime.runtime import answer_footer
from agent_runtime.workflows import load_workflow

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / "workflows"
URL = "https://github.com/acme/agents/blob/main/workflows"


def test_the_footer_links_only_when_the_link_resolves() -> None:
    flow = load_workflow("document-feedback", WORKFLOWS)
    assert answer_footer(flow, URL, WORKFLOWS, chat=True) == (
        f"_Answered by the <{URL}/prompts/document-feedback.md|document-feedback workflow>_"
    )
    assert answer_footer(flow, URL, WORKFLOWS) == (
        f"_Answered by the [document-feedback workflow]({URL}/prompts/document-feedback.md)_"
    )
    assert answer_footer(flow, None, WORKFLOWS, chat=True) == "_Answered by the document-feedback workflow_"
    assert answer_footer(flow, None, WORKFLOWS) == f"_Answered by the document-feedback workflow ({flow.path})_"


def test_a_jira_comment_renders_the_footer_in_italics_with_its_link() -> None:
    [paragraph] = to_adf(f"_Answered by the <{URL}/x.yaml|x workflow>_")["content"]
    nodes = paragraph["content"]
    assert "".join(n["text"] for n in nodes) == "Answered by the x workflow"  # no literal underscores
    assert all({"type": "em"} in n["marks"] for n in nodes)
    assert {"type": "link", "attrs": {"href": f"{URL}/x.yaml"}} in nodes[1]["marks"]
    [plain] = to_adf("call parse_json_body with max_depth")["content"]
    assert plain["content"] == [{"type": "text", "text": "call parse_json_body with max_depth"}]


def test_the_cli_prints_the_footer_when_asked(tmp_path: Path) -> None:
    from agent_runtime.testing import ScriptedServer, reply

    copy = tmp_path / "flows" / "ops.yaml"
    copy.parent.mkdir()
    copy.write_text((WORKFLOWS / "jira-triage.yaml").read_text().replace("name: jira-triage", "name: ops")
                    .replace("prompt_file: prompts/jira-triage.md", "prompt: You triage.")
                    .replace("tools:\n  builtin: [jira_issue, jira_search]\n", ""))  # fmt: skip
    with ScriptedServer([reply("Triaged.")]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(tmp_path / "state"), "PATH": "/usr/bin"}
        done = subprocess.run([sys.executable, "-m", "agent_runtime", "run", str(copy), "-m", "x", "--footer", "-q"],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Triaged.\n\n_Answered by the ops workflow ({copy})_"
