"""What a tool sees of the run it serves (pydantic-ai's ``RunContext``): ids, deadline, stores."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .deadline import Deadline
from .files import FileStore


@dataclass(slots=True)
class RunContext:
    """Passed to any tool parameter annotated ``RunContext``; hidden from the model's schema."""

    run_id: str
    workflow: str
    files: FileStore
    deadline: Deadline = field(default_factory=Deadline.none)
    extras: dict[str, Any] = field(default_factory=dict)  # per-run state later subsystems hang here
