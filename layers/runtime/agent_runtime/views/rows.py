"""The runs index's rows (``runs list``, ``runs stats``, the thread's spend today) and a person's rating of an
answer, as typed values: read once from what the store holds (``parsing.parsed``), each field what it says."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .parsing import parsed


@dataclass(frozen=True)
class RunRow:
    """One run's row of the runs index, as of its latest invocation (a CLI run's first one says running, with
    the process that runs it)."""

    run_id: str
    workflow: str = ""
    status: str = ""
    model: str | None = None  # the running row's (a finished run's record names its model)
    model_calls: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost_usd: float | None = None  # everything the run caused: its calls, compaction summaries, helpers
    cost: Mapping[str, float] = field(default_factory=dict)  # by source (run, compaction, helpers), and total
    started_at: str = ""  # this invocation's start: the index's order, a thread's spend today, a resume's key
    first_started_at: str | None = None  # the run's first start, as its record keeps it (None: rows from before)
    ended_at: str | None = None
    thread_id: str | None = None
    process: Mapping[str, Any] | None = None  # a CLI run's (cli/running.py reads it)

    @property
    def first_start(self) -> str:
        """When the run started: its first invocation's start, as ``runs show`` says (a resumed run's row is its
        latest invocation's)."""
        return self.first_started_at or self.started_at

    @property
    def helpers_cost(self) -> float:
        return float(self.cost.get("helpers") or 0.0)

    def to_dict(self) -> dict[str, Any]:
        """The row as ``runs list --json`` prints it: the stored keys (a running row's model and process too)."""
        row = dataclasses.asdict(self)
        kept = {key: value for key, value in row.items() if value is not None or key not in ("model", "process")}
        return kept | {"first_started_at": self.first_start}


@dataclass(frozen=True)
class Rating:
    """A person's rating of a run's answer (Slack's feedback buttons): the latest of each person's."""

    by: str = ""
    verdict: str = ""  # good | bad
    at: float | None = None
    name: str = ""  # the rater's name as the click gave it ("" in ratings from before, or when it gave none)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def read_row(data: object) -> RunRow:
    return parsed(RunRow, data, "a row of the runs index")


def read_rating(data: object) -> Rating:
    return parsed(Rating, data, "a rating")
