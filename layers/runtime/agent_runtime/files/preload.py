"""Preload: at the start of a turn, the first part of each new attachment goes into the turn's user message.

Text attachments contribute their first ``preload_kb`` KB (cut on a line); images become image parts for
vision models (their token cost is counted from their size). Binary documents are never preloaded: the model
extracts them (file_read reads their text); a file named as text that fails the text test (files/readable.py) is
said to be binary instead. Preloaded ranges count as read in the ledger, so the status shows them.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from ..hooks import Hook
from ..messages import quoted, text_of
from ..state import Slot
from ..workflows.files import FileSettings
from .images import IMAGE_TYPES
from .readable import TEXT_SAMPLE, binary, looks_like_text
from .store import is_text

if TYPE_CHECKING:
    from ..steps import Run

PRELOADED: Slot[list[str]] = Slot("preloaded", list, owner=__name__)  # attachment ids already preloaded


class PreloadHook(Hook):
    """Runs after the context engine (it needs the ledger), at the start of each new turn."""

    def __init__(self, settings: FileSettings) -> None:
        self.settings = settings

    def on_run_start(self, run: Run) -> None:
        """A new turn (the first, or a thread's next with new attachments) gets the attachments no earlier turn
        preloaded: an image sent in a Slack follow-up reaches a vision model like the first one did."""
        last = run.state.messages[-1]
        if last["role"] != "user" or not isinstance(last.get("content"), str):
            return  # a resumed run, or this turn's message already carries its parts
        done = PRELOADED.use(run.state.context)
        parts = []
        for meta in run.context.files.list():
            part = self._part(run, meta) if meta.source == "attachment" and meta.id not in done else None
            if part is not None:
                parts.append(part)
                done.append(meta.id)
        if parts:
            run.state.messages[-1] = {"role": "user", "content": [{"type": "text", "text": text_of(last)}, *parts]}

    def _part(self, run: Run, meta: Any) -> dict[str, Any] | None:
        files, ledger = run.context.files, getattr(run.context.ledger, "file_state", None)
        if meta.mimetype in IMAGE_TYPES and self.settings.preload_images:
            url = f"data:{meta.mimetype};base64," + base64.b64encode(files.read(meta.id)).decode("ascii")
            if ledger:
                ledger(meta)["preloaded"] = True
            return {"type": "image_url", "image_url": {"url": url, "detail": "high"}}
        if not self.settings.preload_kb or not is_text(meta):
            return None
        limit = self.settings.preload_kb * 1024
        chunk = files.read(meta.id, 0, limit)
        if not looks_like_text(chunk[:TEXT_SAMPLE], whole=meta.size_bytes <= min(limit, TEXT_SAMPLE)):
            return {"type": "text", "text": f"[not preloaded: {binary(meta)}]"}  # named as text, but it is not
        complete = meta.size_bytes <= limit
        if not complete and b"\n" in chunk:
            chunk = chunk[: chunk.rfind(b"\n")]  # whole lines, so coverage and the next read line up
        text = chunk.decode("utf-8", errors="ignore")
        lines = text.count("\n") + 1
        if ledger:
            state = ledger(meta)
            state["preloaded"] = True
            state["read_lines"] = [[1, lines]]
        shown = "the whole file" if complete else f"lines 1-{lines} ({len(chunk):,} of {meta.size_bytes:,} bytes)"
        more = "" if complete else f'; continue with file_read(id="{meta.id}", start_line={lines + 1})'
        return {"type": "text", "text": f"[preloaded {quoted(meta.name)} ({meta.id}): {shown}{more}]\n{text}"}
