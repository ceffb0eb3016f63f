"""Chat Completions messages as plain JSON dicts, so history persists to S3 without a serialiser.

The invariant every component keeps: an assistant message's ``tool_calls`` are always followed by exactly one
``tool`` message per call id, and no ``tool`` message exists without its call. :func:`find_orphans` checks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

if TYPE_CHECKING:  # annotations only: the files and the workflow sit above the messages
    from .files import FileMeta
    from .workflows import Workflow

MAX_QUOTED = 200


class FunctionCall(TypedDict):
    name: str
    arguments: str


class ToolCallDict(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class Message(TypedDict):
    role: Literal["system", "user", "assistant", "tool"]
    content: NotRequired[str | list[dict[str, Any]] | None]
    tool_calls: NotRequired[list[ToolCallDict]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]


def system(text: str) -> Message:
    return {"role": "system", "content": text}


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str | None, tool_calls: list[ToolCallDict] | None = None) -> Message:
    message: Message = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def tool_result(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def with_user_text(messages: list[Message], text: str) -> list[Message]:
    """``messages`` with ``text`` said by the user at the end: joined to a last user message (plain text) rather
    than a second user message in a row, which templates that want alternating roles refuse."""
    last = messages[-1] if messages else None
    if last is not None and last["role"] == "user" and isinstance(last.get("content"), str):
        return [*messages[:-1], user(f"{text_of(last)}\n\n{text}")]
    return [*messages, user(text)]


def quoted(text: str, limit: int = MAX_QUOTED) -> str:
    """Text from outside (a file name, a mime type, a display name) as one quoted line, so it can never open a
    section, a tag or a line of its own in a prompt: whitespace runs (newlines too) become one space, quotes and
    backslashes are escaped, and it is cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[:limit] + "…", ensure_ascii=False)


def text_of(message: Message) -> str:
    """The text of a message, joining text parts of multi-part content."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def tool_names(messages: Iterable[Message]) -> dict[str, str]:
    """Call id → tool name, for every call in ``messages`` (to name the tool a result came from)."""
    return {call["id"]: call["function"]["name"] for message in messages for call in message.get("tool_calls", [])}


def pending_tool_calls(messages: list[Message]) -> list[ToolCallDict]:
    """Calls of the last assistant message that have no result yet (a run suspended mid-batch)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "assistant":
            answered = {m.get("tool_call_id") for m in messages[index + 1 :] if m["role"] == "tool"}
            return [call for call in message.get("tool_calls", []) if call["id"] not in answered]
    return []


class OrphanCheck:
    """Incremental pairing check: feed messages in order, then ask what is wrong.

    Rules: every tool call is answered by exactly one result before the next non-tool message; no result
    without its call; no result twice; and (at the end) no call left unanswered.
    """

    def __init__(self) -> None:
        self.open_calls: dict[str, int] = {}
        self.problems: list[str] = []

    def feed(self, index: int, message: Message) -> None:
        if message["role"] == "tool":
            call_id = message.get("tool_call_id", "")
            if self.open_calls.pop(call_id, None) is None:
                self.problems.append(f"message {index}: tool result {call_id!r} has no matching call")
            return
        self._close()
        if message["role"] == "assistant":
            for call in message.get("tool_calls", []):
                self.open_calls[call["id"]] = index

    def _close(self) -> None:
        self.problems.extend(f"message {i}: tool call {cid!r} has no result" for cid, i in self.open_calls.items())
        self.open_calls = {}

    def result(self) -> list[str]:
        """Problems so far, counting calls still open as unanswered (the sequence is about to be sent)."""
        dangling = [f"message {i}: tool call {cid!r} has no result" for cid, i in self.open_calls.items()]
        return self.problems + dangling


def find_orphans(messages: list[Message], *, allow_pending: bool = False) -> list[str]:
    """Describe every broken call/result pairing; an empty list means the history is safe to send.

    ``allow_pending``: calls of the last assistant message may still be unanswered (a run suspended mid-batch,
    which the loop completes before the next model call)."""
    check = OrphanCheck()
    for index, message in enumerate(messages):
        check.feed(index, message)
    return check.problems if allow_pending else check.result()


def system_prompt(workflow: Workflow, files: Sequence[FileMeta], sections: Sequence[str] = ()) -> str:
    """The workflow's prompt, extra sections (e.g. the skills catalog), and the run's files list (metadata
    only; contents come through tools)."""
    parts = [workflow.prompt.rstrip(), *(s.strip() for s in sections if s.strip())]
    if files:
        parts.append(files_section(files))
    return "\n\n".join(parts)


def files_section(files: Sequence[FileMeta]) -> str:
    rows = "\n".join(
        f"- {f.id}: {quoted(f.name)} ({quoted(f.mimetype, 80)}, {f.size_bytes:,} bytes, {f.source})" for f in files
    )
    return f"## Files\nRead them with the file tools, by id.\n{rows}"
