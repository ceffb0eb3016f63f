"""What a tool sees of the run it serves (pydantic-ai's ``RunContext``): ids, deadline, stores."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .deadline import Deadline
from .files import FileStore


class Ledger(Protocol):
    """What tools see of the context engine: the budget, token counts, and the record of reads."""

    def remaining_tokens(self) -> int: ...

    def count(self, text: str) -> int: ...

    def file_lines(self, file_id: str) -> int | None:
        """The file's line count if known (sized once per run), so a range read need not scan to the end."""
        ...

    def record_read(
        self, file_id: str, *, tool: str, lines: tuple[int, int] | None = None, bytes_: tuple[int, int] | None = None
    ) -> None: ...


@dataclass(slots=True)
class RunContext:
    """Passed to any tool parameter annotated ``RunContext``; hidden from the model's schema."""

    run_id: str
    workflow: str
    files: FileStore
    deadline: Deadline = field(default_factory=Deadline.none)
    ledger: Ledger | None = None  # set by the context engine; None means no budget checks
    state: dict[str, Any] = field(default_factory=dict)  # JSON, persisted with the run (RunState.context)
    run: Any = None  # the live Run (loop.Run), for tools that manage runs of their own (sub-agents)
