"""The demo model's ask for a missing value x the thread's next turn (C x a second turn). It answered "I did not
call X: your message does not give its text (…). Ask again with `text: …`", and the person's reply in the same
thread with just that value ("text: the fix is in", or the bare text) was not taken: it named no tool. Invariant:
the next turn calls X once with the first message's values and the reply's, each a value the person wrote;
a reply that gives nothing usable calls nothing.

Real paths: the demo model over HTTP (``demo_script``), the agent's thread turns over its saved state."""

from __future__ import annotations

from typing import Any

from agent_runtime.record import new_run_id
from agent_runtime.runtime import build_agent
from agent_runtime.stores.hook import new_turn
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.demo import demo_script
from agent_runtime.tools.decorator import external_tool
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make_workflow, model_for

KEY = st.from_regex(r"[A-Z]{2,5}-[1-9][0-9]{0,4}", fullmatch=True)
TEXT = st.lists(st.sampled_from(["the", "fix", "is", "in", "shipped", "rolled", "back", "today", "looks", "good"]),
                min_size=1, max_size=6).map(" ".join)  # fmt: skip
SCHEMA = {
    "properties": {"ticket": {"type": "string", "description": "The ticket's key."}, "text": {"type": "string"}},
    "required": ["ticket", "text"],
}


def _turns(first: str, second: str) -> tuple[list[dict[str, Any]], str, str]:
    ran: list[dict[str, Any]] = []
    made = external_tool("post_comment", "Posts a comment.", SCHEMA, lambda args, _ctx: ran.append(args) or "posted")
    with ScriptedServer(demo_script(), model="demo") as server:
        agent = build_agent(make_workflow(), model_for(server), tools=[made])
        one = agent.run(first)
        assert ran == [] and one.state is not None
        run_id = new_run_id()
        two = agent.run(second, state=new_turn(one.state, run_id), run_id=run_id)
    return ran, one.final_answer or "", two.final_answer or ""


@settings(max_examples=6, deadline=None)
@given(key=KEY, text=TEXT, missing=st.sampled_from(["text", "ticket"]), labelled=st.booleans())
def test_a_reply_with_the_value_asked_for_calls_the_tool_with_both_turns_values(
    key: str, text: str, missing: str, labelled: bool
) -> None:
    first = "post_comment on " + key if missing == "text" else "post_comment: " + text
    value = text if missing == "text" else key
    ran, asked, answered = _turns(first, f"{missing}: {value}" if labelled else value)
    assert "I did not call post_comment" in asked and f"`{missing}: …`" in asked
    assert ran == [{"ticket": key, "text": text}], (first, value, ran)
    assert answered == "Done: posted"


@settings(max_examples=3, deadline=None)
@given(key=KEY, spaced=st.booleans())
def test_a_reply_that_gives_another_value_than_the_one_asked_calls_nothing(key: str, spaced: bool) -> None:
    """ "ticket: KEY" where the text was asked for: the ticket's value is not the text (it was taken for it)."""
    ran, _, answered = _turns(f"post_comment on {key}", f"ticket{' ' if spaced else ''}: {key}")
    assert ran == [] and "I did not call post_comment" in answered and "`text: …`" in answered, answered
