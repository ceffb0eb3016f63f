"""What the context engine writes into a window, and the one check every mutation of a window must pass.

The markers let any component tell an engine-made message from the conversation: previews of virtual files,
compaction summaries, masked outputs and the status message.
"""

from __future__ import annotations

from .. import messages as msgs
from ..errors import RunError
from ..messages import Message

VIRTUAL_MARK = "[virtual file "
SUMMARY_MARK = "[compacted context"
MASK_MARK = "[masked: "
FOLD_MARK = "[folded: "
STATUS_MARK = "[context status"


class InvalidHistoryError(RunError):
    """A mutation produced a message sequence the API would reject; it is never sent."""


def check_history(messages: list[Message], *, where: str, problems: list[str] | None = None) -> None:
    problems = msgs.find_orphans(messages) if problems is None else problems
    if problems:
        raise InvalidHistoryError(f"invalid message sequence after {where}: {'; '.join(problems)}")
