"""What a run's tokens cost: list prices per million tokens (input, cached input, output), by model name.

An estimate for the run record and the trace, not a bill: a workflow sets ``model.prices`` for a model missing
here, a negotiated rate or a self-hosted one (zero). Cached input is what the endpoint reported in
``usage.prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Prices:
    input: float  # USD per million uncached input tokens
    cached_input: float
    output: float

    def cost(self, usage: Mapping[str, int]) -> float:
        prompt, cached = usage.get("prompt_tokens", 0), usage.get("cached_tokens", 0)
        per_token = (max(0, prompt - cached) * self.input + cached * self.cached_input) / 1e6
        return per_token + usage.get("completion_tokens", 0) * self.output / 1e6


# OpenAI list prices, USD per million tokens (input, cached input, output); names match by longest prefix, so a
# dated snapshot ("gpt-4.1-2025-04-14") prices like its family.
LIST_PRICES: dict[str, Prices] = {
    "gpt-4.1": Prices(2.00, 0.50, 8.00),
    "gpt-4.1-mini": Prices(0.40, 0.10, 1.60),
    "gpt-4.1-nano": Prices(0.10, 0.025, 0.40),
    "gpt-4o": Prices(2.50, 1.25, 10.00),
    "gpt-4o-mini": Prices(0.15, 0.075, 0.60),
    "o3": Prices(2.00, 0.50, 8.00),
    "o3-mini": Prices(1.10, 0.55, 4.40),
    "o4-mini": Prices(1.10, 0.275, 4.40),
}


def prices_for(model: str, override: Prices | None = None) -> Prices | None:
    """The workflow's prices, else the list price of the longest matching name, else None (unknown)."""
    if override is not None:
        return override
    matches = [name for name in LIST_PRICES if model == name or model.startswith(name + "-")]
    return LIST_PRICES[max(matches, key=len)] if matches else None
