"""Slack's documented limits on what the Web API takes, held by the playground as Slack holds them: what a real
workspace would refuse is refused here, by the error name Slack gives, so a workflow tried in the playground
meets the same walls as in Slack.

- Message text: Slack truncates a message's ``text`` past 40,000 characters (docs.slack.dev/reference/methods/
  chat.postMessage, "Truncating content").
- Blocks: at most 50 in a message, each valid Block Kit (checked by slack_sdk's own models: a section's text at
  most 3,000 characters, a context_actions block at most 5 elements, ...): ``invalid_blocks`` otherwise
  (docs.slack.dev/reference/block-kit/blocks).
- Streams: a ``markdown_text`` chunk at most 12,000 characters (``msg_too_long``; docs.slack.dev/reference/methods/
  chat.appendStream), chunks of the kinds slack_sdk's ``Chunk`` knows.
- Suggested prompts: at most 4 (docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts).
- Files a person attaches on the page: Slack takes a file up to 1 GB; here a message's (or a JIRA issue's) files
  are up to 50 MB together (:data:`MAX_FILES`): the page sends them in one request, base64, and serve holds it
  in memory. A 10 MB PDF and its neighbours fit; what a run then reads is the worker's limit
  (AGENT_MAX_ATTACHMENT_MB, 20 by default), as in Slack.
"""

from __future__ import annotations

import json
from typing import Any

MAX_TEXT = 40_000
MAX_BLOCKS = 50
MAX_CHUNK = 12_000
MAX_PROMPTS = 4
MAX_FILES = 50 * 1024 * 1024
MAX_BODY = MAX_FILES * 4 // 3 + 1024 * 1024  # a page's request: its files in base64, its text and fields besides
CHUNKS = ("markdown_text", "task_update", "plan_update", "blocks")  # slack_sdk.models.messages.chunk


class Refused(Exception):
    """A Web API call Slack would refuse: ``error`` is Slack's name for it, ``detail`` what its
    ``response_metadata.messages`` would say."""

    def __init__(self, error: str, detail: str = "") -> None:
        super().__init__(error)
        self.error, self.detail = error, detail


def listed(value: Any, name: str) -> list[Any] | None:
    """An argument that is a JSON array, sent as JSON or as a form field holding JSON; None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise Refused(f"invalid_{name}_format" if name == "blocks" else "invalid_arguments", name) from None
    if not isinstance(value, list):
        raise Refused(f"invalid_{name}_format" if name == "blocks" else "invalid_arguments", name)
    return value


def text(value: Any) -> str:
    """A message's text as Slack keeps it: truncated past its limit, never refused for its length."""
    return "" if value is None else str(value)[:MAX_TEXT]


def blocks(value: Any) -> list[dict[str, Any]] | None:
    """The blocks as given, once slack_sdk's models find them valid Block Kit within Slack's limits."""
    from slack_sdk.errors import SlackObjectFormationError
    from slack_sdk.models.blocks import Block

    found = listed(value, "blocks")
    if found is None:
        return None
    if len(found) > MAX_BLOCKS:
        raise Refused("invalid_blocks", f"no more than {MAX_BLOCKS} items allowed [json-pointer:/blocks]")
    for number, block in enumerate(found):
        parsed = Block.parse(block) if isinstance(block, dict) else None
        if parsed is None:
            raise Refused("invalid_blocks", f"unknown block [json-pointer:/blocks/{number}]")
        try:
            parsed.validate_json()
        except SlackObjectFormationError as error:
            raise Refused("invalid_blocks", f"{error} [json-pointer:/blocks/{number}]") from None
        if parsed.to_dict() != block:  # a key Block Kit does not have (Slack refuses it), or a malformed value
            raise Refused("invalid_blocks", f"unexpected or malformed field [json-pointer:/blocks/{number}]")
    return found


def chunks(value: Any, markdown_text: Any = None) -> list[dict[str, Any]]:
    """A stream call's chunks (``markdown_text`` alone is one chunk), each of a kind slack_sdk knows, its text
    within Slack's limit."""
    from slack_sdk.models.messages.chunk import Chunk

    found = listed(value, "chunks") or []
    if markdown_text:
        found = [{"type": "markdown_text", "text": str(markdown_text)}, *found]
    for chunk in found:
        known = isinstance(chunk, dict) and chunk.get("type") in CHUNKS  # (slack_sdk logs the unknown ones)
        parsed = Chunk.parse(chunk) if known else None
        if parsed is None or parsed.to_dict() != chunk:
            raise Refused("invalid_chunks", "unknown or malformed chunk")
        if chunk["type"] == "markdown_text" and len(str(chunk.get("text") or "")) > MAX_CHUNK:
            raise Refused("msg_too_long", f"a markdown_text chunk is over {MAX_CHUNK:,} characters")
    return found


def prompts(value: Any) -> list[dict[str, str]]:
    found = listed(value, "prompts") or []
    if len(found) > MAX_PROMPTS or not all(
        isinstance(p, dict) and isinstance(p.get("title"), str) and isinstance(p.get("message"), str) for p in found
    ):
        raise Refused("invalid_arguments", f"prompts: at most {MAX_PROMPTS}, each a title and a message")
    return found


def files(given: list[tuple[str, bytes]]) -> str | None:
    """Why the page's files are refused (each named, with its size, and the limit), or None when they fit."""
    total = sum(len(data) for _, data in given)
    if total <= MAX_FILES:
        return None
    named = [f"{name[:80]} ({megabytes(len(data))})" for name, data in given]
    which = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}: {megabytes(total)} together"
    return f"{which}: the playground takes up to {megabytes(MAX_FILES)} of files in a message (Slack: 1 GB a file)"


def megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB".replace(".0 MB", " MB")
