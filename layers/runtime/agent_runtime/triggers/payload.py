"""Webhook bodies: the bytes as signed, and as JSON with their nesting bounded (a validly signed body can still be
hostile)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any

from .exceptions import RejectedRequest

MAX_DEPTH = 64  # Slack and JIRA payloads nest a dozen levels; ADF comments a few more
_LONE = re.compile("[\ud800-\udfff]")  # json.loads joins a pair into one character: what is left is half


def parse_json(body: bytes | str, what: str) -> Any:
    """The parsed body, or a 400 naming ``what``: not JSON, nested deeper than ``MAX_DEPTH``, or not text."""
    try:
        payload = json.loads(body)
    except RecursionError:  # the parser's own limit (~1,000 levels): a ValueError it is not
        raise RejectedRequest(400, f"{what} is nested too deeply") from None
    except ValueError:
        raise RejectedRequest(400, f"{what} is not JSON") from None
    if depth(payload) > MAX_DEPTH:
        raise RejectedRequest(400, f"{what} is nested too deeply (more than {MAX_DEPTH} levels)")
    if lone_surrogate(payload):
        raise RejectedRequest(400, f"{what} is not Unicode text (a \\u escape of half a character)")
    return payload


def depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value``, walked with a stack (no recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def lone_surrogate(value: Any) -> bool:
    """Whether a string in ``value`` (a key too) holds half a UTF-16 pair, as JSON's ``\\ud800`` escape writes:
    valid JSON, but no text — it cannot be encoded for the queue, a store or a log."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str) and _LONE.search(node):
            return True
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def raw_body(raw: Mapping[str, Any]) -> bytes:
    """The bytes the sender signed: API Gateway base64-encodes some bodies (Slack's form posts on HTTP APIs)."""
    body = raw.get("body") or ""
    if raw.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except ValueError:
            raise RejectedRequest(400, "the body is not valid base64") from None
    try:
        return body.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an escape in the event's JSON): no sender signed that
        raise RejectedRequest(400, "the body is not UTF-8") from None
