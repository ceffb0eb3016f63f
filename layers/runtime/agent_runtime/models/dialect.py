"""What one OpenAI-compatible server accepts: learned from its host, its refusals, and kept per endpoint.

"OpenAI-compatible" servers differ in small ways, each of which fails a request:

* the output cap: OpenAI's reasoning models refuse ``max_tokens``; llama-cpp-python reads only ``max_tokens``
  (its ``CreateChatCompletionRequest`` has no ``max_completion_tokens``, so a cap sent only by that name is
  ignored). OpenAI's own hosts get ``max_completion_tokens``; every other server gets both.
* ``content: null`` on an assistant message that only calls tools: llama-cpp-python's schema types ``content``
  as a string (a 500, "Input should be a valid string"), Gemma's template raises "Invalid content type". Other
  servers get ``""``; one that refuses an empty string gets ``null`` back.
* roles that must alternate (Gemma's and Mistral's templates): late system messages become user messages and
  neighbours of one role are merged.
* templates that cannot render tool calls or results at all (Gemma 3's official template on llama.cpp: "Unable
  to generate parser for this template"): the history's calls and results are sent as text.
* an optional parameter a server refuses by name (``stream_options``, ``parallel_tool_calls``, one of the caps):
  it is no longer sent.

Each change is made once, after the refusal that calls for it, and kept for the endpoint and model in a warm
process (a cold one learns again, at the cost of one refused request).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import openai

from ..messages import Message, text_of, tool_names

OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")
CAPS = ("max_completion_tokens", "max_tokens")
# Parameters a request can do without (the caps only while the other one is still sent).
OPTIONAL = (*CAPS, "stream_options", "parallel_tool_calls", "return_progress")
_REFUSED_PARAMETER = re.compile(
    r"unsupported|not supported|unrecognized|unknown|not permitted|extra (inputs|fields)|not allowed|unexpected",
    re.IGNORECASE,
)
_CONTENT_NOT_NULL = re.compile(r"valid string|invalid content type|content.{0,60}(null|none)", re.IGNORECASE)
_CONTENT_NOT_EMPTY = re.compile(r"content.{0,60}(empty|at least 1 character)", re.IGNORECASE)
_ALTERNATE = re.compile(r"roles must alternate|alternate user/assistant", re.IGNORECASE)
_NO_TOOL_TEMPLATE = re.compile(
    r"unable to generate parser|does not support tool|tool.{0,40}not supported by .{0,20}template|"
    r"jinja exception|raise_exception|chat template",
    re.IGNORECASE,
)
_KNOWN: dict[str, Dialect] = {}
_LOCK = threading.Lock()


@dataclass(slots=True)
class Dialect:
    """The request shape one endpoint accepts (mutable: it learns; every change is a flag set once)."""

    caps: list[str]
    empty_content: str | None  # what an assistant message that only calls tools carries
    alternate: bool = False  # user/assistant/user/...: late system messages as user, neighbours merged
    tools_as_text: bool = False  # calls and results rendered as text (templates without tool support)
    stream: bool = True
    stream_usage: bool = True  # stream_options.include_usage: the usage of a streamed reply
    progress: bool = False  # llama.cpp's return_progress: prompt-processing progress while streaming
    dropped: set[str] = field(default_factory=set)  # optional parameters the server refused

    @classmethod
    def for_url(cls, base_url: str) -> Dialect:
        host = (urlsplit(base_url).hostname or "").lower()
        if host == OPENAI_HOSTS[0] or host.endswith(OPENAI_HOSTS[1]):
            return cls(caps=["max_completion_tokens"], empty_content=None)
        return cls(caps=list(CAPS), empty_content="")

    def body(self, model: str, request: Any) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``request`` (a ModelRequest)."""
        body: dict[str, Any] = {"model": model, "messages": self.messages(request.messages)}
        if request.tools:
            body["tools"] = request.tools
            body["parallel_tool_calls"] = request.parallel_tool_calls
            if request.tool_choice is not None:
                body["tool_choice"] = request.tool_choice
        if request.max_output_tokens:
            body |= {cap: request.max_output_tokens for cap in self.caps}
        if self.stream:
            body["stream"] = True
            if self.stream_usage:
                body["stream_options"] = {"include_usage": True}
        if self.progress and self.stream and "return_progress" not in self.dropped:
            body["extra_body"] = {"return_progress": True}
        for name in self.dropped:
            body.pop(name, None)
        return body

    def messages(self, messages: list[Message]) -> list[Message]:
        """The history as this server accepts it (the stored history never changes)."""
        out = [self._content(message) for message in messages]
        if self.tools_as_text:
            out = as_text(out)
        if self.alternate:
            out = alternating(out)
        return out

    def _content(self, message: Message) -> Message:
        if message["role"] == "assistant" and message.get("content") is None and self.empty_content is not None:
            return {**message, "content": self.empty_content}
        return message

    def adapt(self, error: openai.APIStatusError, body: dict[str, Any]) -> str | None:
        """Change what the refusal ``error`` of ``body`` calls for; a sentence saying what changed, or None when
        nothing here can help (the error is then the caller's)."""
        details = error.body if isinstance(error.body, dict) else {}
        text = f"{error.message} {json.dumps(details, default=str)[:4000]}"
        with _LOCK:
            return self._parameter(text, details, body) or self._shape(text, body)

    def _parameter(self, text: str, details: dict[str, Any], body: dict[str, Any]) -> str | None:
        named = str(details.get("param") or (details.get("error") or {}).get("param") or "")
        sent = set(body) | set(body.get("extra_body") or {})
        # The refused one is the one the error names, else the first it mentions ("Unsupported parameter:
        # 'max_tokens' ... Use 'max_completion_tokens' instead").
        mentioned = {name: found.start() for name in OPTIONAL if (found := re.search(rf"\b{name}\b", text))}
        refused = _REFUSED_PARAMETER.search(text) is not None
        for name in sorted(mentioned, key=mentioned.__getitem__) if named not in OPTIONAL else [named]:
            if name not in sent or name in self.dropped or not (refused or name == named):
                continue
            if name in CAPS and [cap for cap in self.caps if cap != name] == []:
                return None  # the only cap left: never send a request without one
            self.dropped.add(name)
            if name in CAPS:
                self.caps.remove(name)
            return f"the server refused {name}: not sent again"
        return None

    def _shape(self, text: str, body: dict[str, Any]) -> str | None:
        messages: list[Message] = body.get("messages", [])
        has_tools = any(m["role"] == "tool" or m.get("tool_calls") for m in messages)
        if _CONTENT_NOT_NULL.search(text) and self.empty_content is None and _null_content(messages):
            self.empty_content = ""
            return 'assistant messages that only call tools get content "" (the server refused null)'
        if _CONTENT_NOT_EMPTY.search(text) and self.empty_content == "" and _null_content(messages, ""):
            self.empty_content = None
            return 'assistant messages that only call tools get content null (the server refused "")'
        if has_tools and not self.tools_as_text and (_NO_TOOL_TEMPLATE.search(text) or _ALTERNATE.search(text)):
            self.tools_as_text, self.alternate = True, True
            return "the server's chat template cannot render tool calls: they are sent as text, roles alternating"
        if _ALTERNATE.search(text) and not self.alternate:
            self.alternate = True
            return "the server's chat template wants alternating roles: neighbours of one role are merged"
        if self.stream and re.search(r"\bstream", text, re.IGNORECASE) and _REFUSED_PARAMETER.search(text):
            self.stream = False
            return "the server refused streaming: whole replies are requested"
        return None


def _null_content(messages: list[Message], value: str | None = None) -> bool:
    return any(m["role"] == "assistant" and m.get("tool_calls") and m.get("content") == value for m in messages)


def as_text(messages: list[Message]) -> list[Message]:
    """Tool calls and results as plain text: a call joins its assistant message's text, a result becomes a user
    message naming its call. Nothing is lost; pairing no longer matters to the server."""
    names = tool_names(messages)
    out: list[Message] = []
    for message in messages:
        if message["role"] == "tool":
            call_id = message.get("tool_call_id", "")
            out.append(
                {
                    "role": "user",
                    "content": f"[result of {names.get(call_id, 'a tool')} · call {call_id}]\n{text_of(message)}",
                }
            )
        elif message.get("tool_calls"):
            calls = [
                f"[called {c['function']['name']}({c['function']['arguments']}) · call {c['id']}]"
                for c in message.get("tool_calls", [])
            ]
            text = "\n".join([text_of(message), *calls]).strip()
            out.append({"role": "assistant", "content": text})
        else:
            out.append(message)
    return out


def alternating(messages: list[Message]) -> list[Message]:
    """System messages after the first non-system one become user messages; then neighbours of one role (user
    or assistant, text only) are merged, so roles alternate. Tool results stay where they are."""
    out: list[Message] = []
    leading = True
    for message in messages:
        leading = leading and message["role"] == "system"
        if not leading and message["role"] == "system":
            message = {"role": "user", "content": text_of(message)}
        previous = out[-1] if out else None
        if previous is not None and not leading and _mergeable(previous, message):
            out[-1] = {**previous, "content": f"{text_of(previous)}\n\n{text_of(message)}".strip()}
        else:
            out.append(message)
    return out


def _mergeable(a: Message, b: Message) -> bool:
    same = a["role"] == b["role"] and a["role"] in ("user", "assistant")
    plain = not a.get("tool_calls") and not b.get("tool_calls")
    return same and plain and not isinstance(a.get("content"), list) and not isinstance(b.get("content"), list)


def dialect_for(base_url: str, model: str) -> Dialect:
    """The endpoint's dialect, shared by every client of it in this process."""
    key = f"{model}@{base_url}"
    with _LOCK:
        if key not in _KNOWN:
            _KNOWN[key] = Dialect.for_url(base_url)
        return _KNOWN[key]


def forget() -> None:
    """Drop everything learned (tests: a scripted server on a reused port is another server)."""
    with _LOCK:
        _KNOWN.clear()
