"""Skills in real runs: what the model is offered, what loading returns, and that loaded skills survive
compaction."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from agent_runtime import RunStatus, Services
from agent_runtime.context import ContextSettings
from agent_runtime.messages import find_orphans, text_of
from agent_runtime.runtime import build_agent
from agent_runtime.skills import SkillLibrary, SkillPolicy
from agent_runtime.testing import Reply, ScriptedServer, call, reply

from tests.cli_support import run_cli
from tests.compaction_support import fetch, talkative
from tests.conftest import make_workflow, model_for

Start = Callable[..., ScriptedServer]
REPO = Path(__file__).resolve().parents[2]
LIBRARY = SkillLibrary(REPO / "skills")


def skilled_agent(server: ScriptedServer, policy: SkillPolicy, **workflow: object):
    flow = make_workflow(**workflow)  # type: ignore[arg-type]
    from dataclasses import replace

    agent = build_agent(replace(flow, skills=policy), model_for(server), Services(skills=LIBRARY))
    agent.tools.register(fetch)
    return agent


def test_catalog_required_body_and_loading(scripted: Start) -> None:
    policy = SkillPolicy(required=("slack-formatting",), prohibited=("notion-formatting",))
    server = scripted(
        call("load_skill", {"name": "large-files"}),
        call("load_skill", {"name": "large-files"}),
        call("load_skill_file", {"name": "large-files", "path": "references/patterns.md"}),
        call("load_skill", {"name": "notion-formatting"}),
        call("load_skill_file", {"name": "jira-formatting", "path": "references/adf-nodes.md"}),
        reply("done"),
    )
    record = skilled_agent(server, policy).run("go")
    assert record.status is RunStatus.COMPLETED
    system = server.requests[0].system_text()
    assert "<available_skills>" in system and "<name>large-files</name>" in system
    assert "notion-formatting" not in system  # prohibited: never shown
    assert '<skill_content name="slack-formatting">' in system  # required: loaded at start
    assert "Workflow: test-flow" in system
    load_skill = next(t for t in server.requests[0].body["tools"] if t["function"]["name"] == "load_skill")
    enum = load_skill["function"]["parameters"]["properties"]["name"]["enum"]
    assert "notion-formatting" not in enum and "slack-formatting" in enum
    results = [next(iter(r.tool_results().values())) for r in server.requests[1:]]
    assert (
        results[0].startswith('<skill_content name="large-files">')
        and "<file>references/patterns.md</file>" in results[0]
    )
    assert "already loaded" in results[1]
    assert results[2].startswith('<skill_file skill="large-files" path="references/patterns.md">')
    assert results[3].startswith("ERROR: invalid arguments: name: Input should be")
    assert results[4] == "ERROR: load the skill first: load_skill(name='jira-formatting')"


def test_a_skill_loaded_before_compaction_is_still_there_after(scripted: Start) -> None:
    server = scripted(
        call("load_skill", {"name": "jira-formatting"}),
        talkative(1),
        talkative(2),
        talkative(3),
        talkative(4),
        reply("done"),
        intercept=lambda r: Reply(text="## Current work\nReading.") if r.is_compaction() else None,
    )
    record = skilled_agent(server, SkillPolicy(allowed=("jira-formatting",)), window=9_000, output=1_000).run("go")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    compactions = [e for e in record.events if e["type"] == "compaction"]
    assert compactions and compactions[0]["tactic"] == "summary"
    final = server.requests[-1].messages
    assert find_orphans(final[:-1]) == []
    window = "\n".join(text_of(m) for m in final)
    assert '<skill_content name="jira-formatting">' in window  # carried verbatim through the summary
    assert "Atlassian Document Format" in window or "ADF" in window


def test_masking_never_touches_loaded_skills(scripted: Start) -> None:
    server = scripted(
        call("load_skill", {"name": "large-files"}), *[call("fetch", {"n": n}) for n in range(1, 6)], reply("ok")
    )
    settings = ContextSettings(mask_threshold_tokens=1_000)
    record = skilled_agent(server, SkillPolicy(), context=settings, window=20_000).run("go")
    assert any(e["type"] == "masking" for e in record.events)
    final = server.requests[-1].messages
    assert any(text_of(m).startswith('<skill_content name="large-files">') for m in final)


def test_skills_cli(tmp_path: Path) -> None:
    listing = json.loads(run_cli("skills", "list", "--json").stdout)
    assert [s["name"] for s in listing] == [
        "jira-formatting",
        "large-files",
        "notion-formatting",
        "python-sandbox",
        "slack-formatting",
    ]
    assert run_cli("skills", "validate").returncode == 0
    shown = run_cli("skills", "show", "large-files")
    assert shown.returncode == 0 and shown.stdout.startswith('<skill_content name="large-files">')
    missing = run_cli("skills", "show", "nope")
    assert missing.returncode == 2 and "no skill named 'nope'" in missing.stderr
    bad = tmp_path / "Bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: Bad\n---\n", encoding="utf-8")
    result = run_cli("skills", "validate", str(tmp_path))
    assert result.returncode == 2
    assert f"{bad / 'SKILL.md'}: name: use 1-64 lowercase letters" in result.stderr
    assert f"{bad / 'SKILL.md'}: description: is required (1-1024 characters)" in result.stderr
