"""Exact token counts for Chat Completions requests, cached per message.

Per-message overhead follows the OpenAI cookbook ("How to count tokens with tiktoken"): 3 tokens per
message, 1 per name, 3 to prime the reply; tool schemas use its ``num_tokens_for_tools`` recipe. The API's
``usage`` is the ground truth: the engine records the drift between the two on every call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import tiktoken

from ..files.images import data_url_tokens
from ..messages import Message
from .encodings import encoding_for_model, load_encoding

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3


class TokenCounter:
    """Counts with the model's encoding. Message counts are cached by identity: messages are never mutated
    after they join the history (changes replace the dict), so a turn costs O(new tokens), not O(window)."""

    def __init__(self, model: str, *, encoding: tiktoken.Encoding | None = None) -> None:
        self.model = model
        self.encoding = encoding or encoding_for_model(model)
        self._cache: dict[int, tuple[Message, int]] = {}

    def text(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def truncate(self, text: str, tokens: int) -> str:
        """The longest prefix of ``text`` that is at most ``tokens`` tokens."""
        encoded = self.encoding.encode(text, disallowed_special=())
        return text if len(encoded) <= tokens else self.encoding.decode(encoded[:tokens])

    def message(self, message: Message) -> int:
        key = id(message)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is message:
            return hit[1]
        count = self._count_message(message)
        self._cache[key] = (message, count)
        return count

    def messages(self, messages: Iterable[Message]) -> int:
        return sum(self.message(m) for m in messages) + REPLY_PRIMING

    def forget_except(self, live: Sequence[Message]) -> None:
        """Drop cache entries of messages no longer in the window (after compaction)."""
        keep = {id(m) for m in live}
        self._cache = {k: v for k, v in self._cache.items() if k in keep}

    def _count_message(self, message: Message) -> int:
        total = TOKENS_PER_MESSAGE + self.text(message["role"])
        content = message.get("content")
        if isinstance(content, str):
            total += self.text(content)
        elif isinstance(content, list):
            total += sum(self.text(part.get("text", "")) for part in content if part.get("type") == "text")
            for part in content:  # images cost tokens by their size, not by the length of their base64
                if part.get("type") == "image_url":
                    image = part.get("image_url", {})
                    total += data_url_tokens(image.get("url", ""), image.get("detail", "high"))
        if "name" in message:
            total += TOKENS_PER_NAME + self.text(message["name"])
        for call in message.get("tool_calls", []):
            function = call["function"]
            total += TOKENS_PER_MESSAGE + self.text(function["name"]) + self.text(function["arguments"])
        return total

    def tools(self, specs: Sequence[dict[str, Any]]) -> int:
        """Tokens the tool definitions add to every request (cookbook recipe for gpt-4o-family models)."""
        if not specs:
            return 0
        total = 12  # func_end, once
        for spec in specs:
            function = spec["function"]
            total += 7 + self.text(f"{function['name']}:{function.get('description', '').rstrip('.')}")
            properties = function.get("parameters", {}).get("properties", {})
            if properties:
                total += 3
                for name, prop in properties.items():
                    total += 3 + self.text(f"{name}:{_type_of(prop)}:{prop.get('description', '').rstrip('.')}")
                    for item in prop.get("enum", []):
                        total += 3 + self.text(str(item))
        return total


def _type_of(prop: dict[str, Any]) -> str:
    if "type" in prop:
        return str(prop["type"])
    return json.dumps(prop.get("anyOf", "object"))


def estimate_usage(
    messages: Sequence[Message],
    text: str | None,
    calls: Sequence[Any],
    model: str,
    tokenizer: str | None = None,
    tools: Sequence[dict[str, Any]] = (),
) -> dict[str, int]:
    """What a call would have reported: the prompt (its messages and its tools' schemas) and the reply counted
    with the model's encoding, as the context engine counts them (an estimate, marked as one)."""
    counter = _counter(model, tokenizer)
    prompt = counter.messages(messages) + counter.tools(tools)
    reply = counter.text(text or "") + sum(3 + counter.text(f"{c.name}{c.arguments}") for c in calls)
    return {"prompt_tokens": prompt, "completion_tokens": reply, "total_tokens": prompt + reply, "cached_tokens": 0}


def _counter(model: str, tokenizer: str | None) -> TokenCounter:
    """A fresh counter (its cache holds the messages it counted; a worker lives long), on the cached encoding."""
    return TokenCounter(model, encoding=load_encoding(tokenizer) if tokenizer else encoding_for_model(model))
