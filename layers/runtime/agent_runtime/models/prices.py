"""What a run's tokens cost: list prices per million tokens (input, cached input, output), by model name.

An estimate for the run record and the trace, not a bill: a workflow sets ``model.prices`` for a model missing
here, a negotiated rate or a self-hosted one (zero). Cached input is what the endpoint reported in
``usage.prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import re
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


# OpenAI list prices, USD per million tokens (input, cached input, output). A name matches exactly or as a dated
# snapshot ("gpt-4.1-2025-04-14" prices like gpt-4.1); nothing else does: "gpt-4.1-mnii" is not gpt-4.1.
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
SNAPSHOT = re.compile(r"(?P<name>.+?)-\d{4}-\d{2}-\d{2}")


def prices_for(model: str, override: Prices | None = None) -> Prices | None:
    """The workflow's prices (they are the prices of the model the workflow runs on), else the list price of the
    name or of the snapshot's family, else None (unknown)."""
    if override is not None:
        return override
    if model in LIST_PRICES:
        return LIST_PRICES[model]
    snapshot = SNAPSHOT.fullmatch(model)
    return LIST_PRICES.get(snapshot["name"]) if snapshot else None


def unpriced_warning(model: str, override: Prices | None = None) -> str | None:
    """What to tell a person whose model has no price: its runs' cost is not counted."""
    if prices_for(model, override) is not None:
        return None
    return (
        f"model {model!r} has no known price (the table knows {', '.join(LIST_PRICES)} and their dated "
        "snapshots): its cost is not counted; set model.prices in the workflow (USD per million tokens, "
        "0 for a self-hosted model)"
    )
