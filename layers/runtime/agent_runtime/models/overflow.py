"""Context overflow as each server says it: OpenAI's error code, or only words and numbers in the message."""

from __future__ import annotations

import re
from typing import Any

import openai

# Servers without OpenAI's error code only say it in words: vLLM ("maximum context length is N tokens. However,
# you requested M tokens", "maximum model length"), llama.cpp (type exceed_context_size_error: "request (M tokens)
# exceeds the available context size (N tokens)"), LiteLLM (ContextWindowExceededError), Anthropic-style gateways.
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|context[_ ]length[_ ]exceeded|context window|prompt is too long|"
    r"too many (input )?tokens|exceeds? the available context size|exceed_context_size|maximum model length|"
    r"input tokens exceed|ContextWindowExceeded",
    re.IGNORECASE,
)
# The server's own numbers, when its message says them: (prompt tokens, window).
_PROMPT_TOKENS = re.compile(
    r"resulted in (\d+) tokens|request \((\d+) tokens\)|\((\d+) in the messages|request has (\d+) input tokens|"
    r"prompt \(length (\d+)\)",
    re.IGNORECASE,
)
_WINDOW_TOKENS = re.compile(
    r"maximum context length is (\d+)|context size \((\d+) tokens\)|limit of (\d+) tokens|"
    r"maximum model length of (\d+)",
    re.IGNORECASE,
)


def is_context_overflow(error: openai.APIStatusError) -> bool:
    if error.status_code == 413:
        return True
    if error.status_code not in (400, 500):  # some servers answer an overflow with a 500
        return False
    if getattr(error, "code", None) in ("context_length_exceeded", "exceed_context_size_error"):
        return True
    body = error.body if isinstance(error.body, dict) else {}
    return bool(_OVERFLOW_TEXT.search(f"{error.message} {body.get('type', '')}"))


def overflow_numbers(error: openai.APIStatusError) -> tuple[int | None, int | None]:
    """(prompt tokens, window) as the server counted them, from llama.cpp's fields or the message's words."""
    body: dict[str, Any] = error.body if isinstance(error.body, dict) else {}
    nested = body.get("error")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else body
    prompt, window = inner.get("n_prompt_tokens"), inner.get("n_ctx")
    if isinstance(prompt, int) and isinstance(window, int):
        return prompt, window
    return _first_number(_PROMPT_TOKENS, error.message), _first_number(_WINDOW_TOKENS, error.message)


def _first_number(pattern: re.Pattern[str], text: str) -> int | None:
    found = pattern.search(text or "")
    return None if found is None else int(next(group for group in found.groups() if group))
