"""The cost estimate's prices: list prices by name (a dated snapshot prices like its family), the workflow's own."""

from __future__ import annotations

import pytest
from agent_runtime.models.prices import Prices, prices_for
from agent_runtime.workflows import WorkflowError, parse_workflow


def test_prices_by_name_and_by_the_workflow() -> None:
    assert prices_for("gpt-4.1-2025-04-14") == prices_for("gpt-4.1") == Prices(2.0, 0.5, 8.0)
    assert prices_for("gpt-4.1-mini") == Prices(0.4, 0.1, 1.6)  # the longest name wins
    assert prices_for("gemma3:270m") is None  # unknown: no estimate rather than a wrong one
    assert prices_for("gemma3:270m", Prices(0, 0, 0)) == Prices(0, 0, 0)  # self-hosted: free
    usage = {"prompt_tokens": 10_000, "cached_tokens": 8_000, "completion_tokens": 1_000}
    assert Prices(2.0, 0.5, 8.0).cost(usage) == pytest.approx((2_000 * 2.0 + 8_000 * 0.5 + 1_000 * 8.0) / 1e6)


def test_model_prices_in_a_workflow_are_validated() -> None:
    base = {"name": "x", "description": "d", "prompt": "p"}
    model = {"name": "llama", "context_window": 8192, "prices": {"input": 0.2, "cached_input": 0.05, "output": 0.6}}
    assert parse_workflow({**base, "model": model}, file="x.yaml").model.prices == Prices(0.2, 0.05, 0.6)
    bad = {**model, "prices": {"input": -1, "outputs": 2}}
    with pytest.raises(WorkflowError) as error:
        parse_workflow({**base, "model": bad}, file="x.yaml")
    text = str(error.value)
    assert "model.prices.outputs: unknown key; did you mean 'output'?" in text
    assert "model.prices.input: must be a number between 0.0 and 1000.0, got -1" in text
