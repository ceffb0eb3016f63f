"""The demo model restarted "INFO file-19edf0be9201 virtual file-" on the README's first workflow: it filled a
tool's argument with the message's words. The promise, over any message through build_agent and the demo model
over HTTP: a value it gives a tool's parameter is one the person's own words name (a word of theirs beside the
parameter's name), never pasted text; a message that names none makes no such call."""

from __future__ import annotations

import json
import re

from agent_runtime import tool
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.demo import demo_script
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, make_workflow, model_for

WORDS = ["restart", "the", "payments", "billing", "service", "service:", "which", "failed", "INFO", "please", "?"]
LOG = (REPO / "examples" / "incidents" / "pasted-log.txt").read_text()


@tool(mutating=True)
def restart_service(service: str) -> str:
    """Restart a service.

    Args:
        service: The service's name.
    """
    return f"restarted {service}"


@settings(max_examples=15, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), max_size=8), pasted=st.booleans())
def test_a_tools_argument_is_a_value_the_person_names(words: list[str], pasted: bool) -> None:
    said = " ".join(words)
    message = f"{said}\n{LOG * 2}" if pasted else said  # a long paste is kept as a virtual file
    with ScriptedServer(demo_script(), model="demo") as server:
        record = build_agent(make_workflow(), model_for(server), tools=[restart_service]).run(message or "hello")
    given_values = [
        json.loads(call["function"]["arguments"])["service"]
        for m in record.state.messages
        for call in m.get("tool_calls", [])
        if call["function"]["name"] == "restart_service"
    ]
    named = set(re.findall(r"\b(\w+) service\b", said)) | set(re.findall(r"\bservice:\s*(\w+)", said))
    named |= set(re.findall(r"\bservice ([A-Z][A-Z0-9_-]+)\b", said))  # a code after it: "service INFO"
    assert set(given_values) <= named - {"the", "which", "restart"}, (said, given_values)
