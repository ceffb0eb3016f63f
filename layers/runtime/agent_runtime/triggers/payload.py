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
    deepest, lone = _walked(payload)
    if deepest > MAX_DEPTH:
        raise RejectedRequest(400, f"{what} is nested too deeply (more than {MAX_DEPTH} levels)")
    if lone:
        raise RejectedRequest(400, f"{what} is not Unicode text (a \\u escape of half a character)")
    return payload


def _walked(value: Any) -> tuple[int, bool]:
    """How deeply lists and objects nest in ``value``, and whether a string in it (a key too) holds half a UTF-16
    pair, as JSON's ``\\ud800`` escape writes: valid JSON, but no text — it cannot be encoded for the queue, a
    store or a log. Walked with a stack (no recursion)."""
    deepest, lone, stack = 0, False, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, str):
            lone = lone or _LONE.search(node) is not None
            continue
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node if isinstance(node, list) else ()
        deepest = max(deepest, level) if isinstance(node, dict | list) else deepest
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list | str))
    return deepest, lone


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
