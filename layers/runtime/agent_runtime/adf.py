"""Atlassian Document Format both ways: model answers (Markdown or Slack mrkdwn) as ADF for JIRA REST v3
comments (chat), and the plain text of an ADF node (a ticket's description, an issue read by a tool)."""

from __future__ import annotations

import re
from typing import Any

_INLINE = re.compile(
    r"\*\*(.+?)\*\*|\*(.+?)\*|`([^`]+)`|\[([^\]]+)\]\((https?://[^)\s]+)\)|<(https?://[^|>]+)\|([^>]+)>"
    r"|(?<![\w])_(\S(?:.*?\S)?)_(?![\w])"  # _italic_ (Slack's and Markdown's), not snake_case
)
_BULLET = re.compile(r"^\s*[-*•]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


def to_adf(text: str) -> dict[str, Any]:
    """Headings, paragraphs, bullet and numbered lists, code blocks, bold, inline code and links."""
    content: list[dict[str, Any]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            code = "\n".join(lines[i + 1 : end])
            content.append({"type": "codeBlock", "content": [{"type": "text", "text": code}] if code else []})
            i = end + 1
            continue
        if heading := _HEADING.match(line):
            level = len(heading.group(1))
            content.append({"type": "heading", "attrs": {"level": level}, "content": inline(heading.group(2))})
        elif _BULLET.match(line) or _NUMBERED.match(line):
            pattern = _BULLET if _BULLET.match(line) else _NUMBERED
            items = []
            while i < len(lines) and (item := pattern.match(lines[i])):
                items.append({"type": "listItem", "content": [{"type": "paragraph", "content": inline(item.group(1))}]})
                i += 1
            content.append({"type": "bulletList" if pattern is _BULLET else "orderedList", "content": items})
            continue
        elif line.strip():
            content.append({"type": "paragraph", "content": inline(line)})
        i += 1
    return {"type": "doc", "version": 1, "content": content or [{"type": "paragraph", "content": []}]}


def inline(text: str) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    at = 0
    for match in _INLINE.finditer(text):
        if match.start() > at:
            nodes.append({"type": "text", "text": text[at : match.start()]})
        bold, strong, code, label, url, slack_url, slack_label, italic = match.groups()
        if italic:
            nodes += [{**node, "marks": [*node.get("marks", []), {"type": "em"}]} for node in inline(italic)]
        elif bold or strong:
            nodes.append({"type": "text", "text": bold or strong, "marks": [{"type": "strong"}]})
        elif code:
            nodes.append({"type": "text", "text": code, "marks": [{"type": "code"}]})
        else:
            href, shown = (url, label) if url else (slack_url, slack_label)
            nodes.append({"type": "text", "text": shown, "marks": [{"type": "link", "attrs": {"href": href}}]})
        at = match.end()
    if at < len(text):
        nodes.append({"type": "text", "text": text[at:]})
    return nodes


def adf_text(node: Any) -> str:
    """Plain text of an Atlassian Document Format node (or a v2 wiki-markup string, returned as is), walked
    with a stack: a comment nested hundreds of levels deep is text, not a RecursionError."""
    if isinstance(node, str):
        return node
    parts: list[str] = []
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):  # a block's closing newline, queued behind its children
            parts.append(item)
            continue
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text":
            parts.append(str(item.get("text", "")))
        elif kind == "hardBreak":
            parts.append("\n")
        elif kind == "mention":
            parts.append(str((item.get("attrs") or {}).get("text", "")))
        else:
            if kind in ("paragraph", "heading", "listItem", "codeBlock", "blockquote", "rule"):
                stack.append("\n")
            children = item.get("content")
            stack.extend(reversed(children) if isinstance(children, list) else [])
    return "".join(parts)
