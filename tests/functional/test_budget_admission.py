"""A budget admits a run only when what is left pays for the least a run needs (its first request and a last
answer at the shortest reply), priced as the run will be: at the model that runs it, ``AGENT_MODEL`` when the
deployment sets one, not the model the workflow's file names."""

from __future__ import annotations

import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.access import BudgetBook, Requester
from agent_runtime.models import OpenAIChatModel
from agent_runtime.stores import RunStore
from agent_runtime.testing import reply
from agent_runtime.workflows import load_workflow

from tests.triggers_support import slack_mention, slack_request

# gpt-4o in its file; $0.02 a day for each person.
PENNY = (
    "name: penny\ndescription: Answers on a tight budget.\nprompt: You help.\n"
    "model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}\n"
    "limits: {max_cost_per_person_day: 0.02}\ntriggers: {slack: {channels: [C0GUARD]}}\n"
)


@pytest.mark.parametrize("override", [None, "gpt-4.1-nano"])
def test_a_budget_admits_by_the_price_of_the_model_that_runs(
    system: Any, scripted: Any, tmp_path: Path, override: str | None
) -> None:
    """$0.003 left: less than the least a run needs at gpt-4o's price (~$0.005: two 256-token replies at $10 a
    million), far more than at gpt-4.1-nano's (~$0.0002), which AGENT_MODEL runs it on."""
    (tmp_path / "penny.yaml").write_text(PENNY)
    server = scripted(*([reply("Done.")] if override else []))
    s = system(server, settings={"model_override": override})
    # The model the worker opens (runtime.open_model): AGENT_MODEL's name when set, else the workflow's.
    s.worker.process.models = lambda flow: nullcontext(OpenAIChatModel(flow.model.name, client=server.client()))
    day = time.strftime("%Y-%m-%d", time.gmtime())
    dana = Requester("slack:U0DANA", "U0DANA")
    BudgetBook(s.store, load_workflow("penny", tmp_path), day).charge("run-earlier", dana, [], 0.017)
    event = slack_mention("Ev1", channel="C0GUARD", ts="1763800001.0", user="U0DANA", text="<@U0BOT> help")
    s.post("/slack/events", *slack_request(event))
    outcome = s.deliver()
    told = [m["text"] for m in s.apis.named("chat.postEphemeral")]
    if override is None:
        assert outcome == ["refused"] and len(told) == 1 and "less than the least a run needs" in told[0]
        return
    assert outcome == ["answered"] and told == []
    [row] = RunStore(s.store).list_runs()
    assert (RunStore(s.store).load_record(row.run_id) or {}).get("model") == override
