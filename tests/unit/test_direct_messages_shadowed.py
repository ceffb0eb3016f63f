"""Of the workflows deployed together, the app's direct messages (and the pane's suggested prompts) go to one:
``workflows validate`` warns every other one that takes them, naming the one that does — the first by name, as
the webhook routes a direct message — and warns none that takes none, nor the one that gets them."""

from __future__ import annotations

from typing import Any

from agent_runtime.sources.shadowing import direct_messages_shadowed
from agent_runtime.workflows import Workflow, parse_workflow
from hypothesis import given, settings
from hypothesis import strategies as st

NAMES = st.sampled_from(["document-feedback", "incident-helper", "jira-triage", "a-first", "zeta"])
SLACK = st.sampled_from(["none", "channel", "dms", "dms+prompts", "dms-off"])


def made(name: str, slack: str) -> Workflow:
    data: dict[str, Any] = {"name": name, "description": "d", "prompt": "p", "model": {"name": "gpt-4o",
                            "context_window": 128000}}  # fmt: skip
    rules = {
        "channel": {"channels": ["*"]},
        "dms": {"channels": ["C0"], "direct_messages": True},
        "dms+prompts": {"channels": ["C0"], "direct_messages": True, "suggested_prompts": ["Summarise"]},
        "dms-off": {"channels": ["C0"], "direct_messages": False},
    }
    if slack in rules:
        data["triggers"] = {"slack": rules[slack]}
    return parse_workflow(data, file=f"{name}.yaml")


@settings(max_examples=60, deadline=None)
@given(folder=st.dictionaries(NAMES, SLACK, min_size=1, max_size=5))
def test_every_workflow_taking_direct_messages_but_the_first_by_name_is_warned(folder: dict[str, str]) -> None:
    flows = [made(name, slack) for name, slack in folder.items()]
    taking = sorted(name for name, slack in folder.items() if slack.startswith("dms") and slack != "dms-off")
    for flow in flows:
        said = direct_messages_shadowed(flow, flows)
        if flow.name not in taking[1:]:
            assert said == [], (flow.name, said)
            continue
        [warning] = said
        assert warning.startswith("triggers.slack.direct_messages: ") and f"go to {taking[0]!r}" in warning
        assert f"({', '.join(taking)})" in warning
        prompts = folder[flow.name] == "dms+prompts"
        assert ("direct_messages and suggested_prompts are never used" in warning) == prompts


def test_a_workflow_validated_from_elsewhere_is_routed_with_the_folders() -> None:
    """A YAML path outside the folder (its name the folder's or not) competes with the folder's workflows."""
    folder = [made("document-feedback", "dms+prompts"), made("incident-helper", "channel")]
    mine = made("incident-helper", "dms+prompts")
    [warning] = direct_messages_shadowed(mine, folder)
    assert "go to 'document-feedback'" in warning and "set direct_messages: false in 'document-feedback'" in warning
    assert direct_messages_shadowed(made("a-first", "dms"), folder) == []
