"""What a server says about itself, asked once per endpoint and model before the first request.

A workflow names a model and its window; a local server runs that model with a window of its own (llama.cpp's
``-c``, vLLM's ``--max-model-len``, Ollama's ``num_ctx``), usually much smaller. Each says it somewhere:

* llama.cpp: ``GET /props`` → ``default_generation_settings.n_ctx`` (a slot's window); it also counts with the
  model's own tokenizer (``POST /apply-template`` then ``POST /tokenize``) and reports prompt progress while
  streaming (``return_progress``).
* vLLM: ``GET /v1/models`` → ``max_model_len``; ``POST /tokenize`` with the messages counts them.
* LM Studio: ``GET /api/v0/models`` → ``loaded_context_length`` (else ``max_context_length``).
* Ollama: ``POST /api/show`` → ``num_ctx`` among its parameters; without it the OpenAI endpoint runs at Ollama's
  default (4,096 tokens) and cuts longer prompts silently, so that is the window.

OpenAI's own hosts are not asked: the workflow's number is right there. Nothing here fails a run: a server that
answers none of these is used with the workflow's window, and the engine still learns from its errors.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from ..messages import Message
from .dialect import OPENAI_HOSTS

logger = logging.getLogger(__name__)
PROBE_TIMEOUT = 3.0  # per request; a server that is slower than this to describe itself is asked nothing more
PROBE_BYTES = 1 << 20  # a describing answer (a model list, props) at most
COUNT_BYTES = 32 << 20  # a counting answer (a templated prompt, its tokens) at most
OLLAMA_DEFAULT_CTX = 4096
_KNOWN: dict[str, ServerInfo] = {}
_LOCK = threading.Lock()


class SlowServer(Exception):
    """A describing request got no answer within PROBE_TIMEOUT."""


@dataclass(frozen=True, slots=True)
class ServerInfo:
    kind: str  # llama.cpp | vllm | lmstudio | ollama | openai | unknown
    window: int | None = None  # the server's real window for this model, when it said
    source: str = ""  # where the window was read (for the record and the trace)


def probe(client: openai.OpenAI, model: str) -> ServerInfo:
    """The server behind ``client`` for ``model``, asked once per process (later calls are free)."""
    key = f"{model}@{client.base_url}"
    with _LOCK:
        known = _KNOWN.get(key)
    if known is not None:
        return known
    info = _ask(client, model)
    with _LOCK:
        _KNOWN[key] = info
    return info


def count_tokens(client: openai.OpenAI, info: ServerInfo, model: str, messages: list[Message], tools: list[Any]) -> int:
    """The prompt tokens of a request, counted by the server with the model's own tokenizer and chat template;
    0 when it cannot count."""
    root = _root(str(client.base_url))
    try:
        if info.kind == "llama.cpp":
            body: dict[str, Any] = {"messages": messages} | ({"tools": tools} if tools else {})
            prompt = _fetch(client, "POST", f"{root}/apply-template", body, limit=COUNT_BYTES)["prompt"]
            tokens = _fetch(client, "POST", f"{root}/tokenize", {"content": prompt}, limit=COUNT_BYTES)
            return len(tokens["tokens"])
        if info.kind == "vllm":
            body = {"model": model, "messages": messages} | ({"tools": tools} if tools else {})
            return int(_fetch(client, "POST", f"{root}/tokenize", body, limit=COUNT_BYTES)["count"])
    except (openai.APIError, SlowServer, ValueError, KeyError, TypeError) as error:
        logger.debug("error=<%s> | the server could not count a request", type(error).__name__)
    return 0


def _ask(client: openai.OpenAI, model: str) -> ServerInfo:
    base = str(client.base_url).rstrip("/")
    host = (urlsplit(base).hostname or "").lower()
    if host == OPENAI_HOSTS[0] or host.endswith(OPENAI_HOSTS[1]):
        return ServerInfo("openai")
    root = _root(base)
    for ask in (_llama_cpp, _models_list, _lm_studio, _ollama):
        try:
            found = ask(client, root, base, model)
        except (openai.APITimeoutError, SlowServer):
            break  # a server this slow to describe itself is not asked more
        except (openai.APIError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if found is not None:
            return found
    return ServerInfo("unknown")


def _llama_cpp(client: openai.OpenAI, root: str, base: str, model: str) -> ServerInfo | None:
    props = _fetch(client, "GET", f"{root}/props")
    window = props["default_generation_settings"]["n_ctx"]
    return ServerInfo("llama.cpp", int(window), "GET /props default_generation_settings.n_ctx")


def _models_list(client: openai.OpenAI, root: str, base: str, model: str) -> ServerInfo | None:
    entries = _fetch(client, "GET", f"{base}/models").get("data") or []
    entry = next((e for e in entries if e.get("id") == model), entries[0] if len(entries) == 1 else None)
    if isinstance(entry, dict) and isinstance(entry.get("max_model_len"), int):
        return ServerInfo("vllm", entry["max_model_len"], "GET /v1/models max_model_len")
    return None


def _lm_studio(client: openai.OpenAI, root: str, base: str, model: str) -> ServerInfo | None:
    entries = _fetch(client, "GET", f"{root}/api/v0/models").get("data") or []
    entry = next((e for e in entries if e.get("id") == model), entries[0] if len(entries) == 1 else None)
    if not isinstance(entry, dict):
        return None
    for field in ("loaded_context_length", "max_context_length"):
        if isinstance(entry.get(field), int):
            return ServerInfo("lmstudio", entry[field], f"GET /api/v0/models {field}")
    return None


def _ollama(client: openai.OpenAI, root: str, base: str, model: str) -> ServerInfo | None:
    shown = _fetch(client, "POST", f"{root}/api/show", {"model": model})
    if not isinstance(shown, dict) or not ("model_info" in shown or "parameters" in shown):
        return None
    for line in str(shown.get("parameters") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit():
            return ServerInfo("ollama", int(parts[1]), "POST /api/show parameters num_ctx")
    trained = next((v for k, v in (shown.get("model_info") or {}).items() if k.endswith(".context_length")), None)
    window = min(OLLAMA_DEFAULT_CTX, trained) if isinstance(trained, int) else OLLAMA_DEFAULT_CTX
    return ServerInfo("ollama", window, "Ollama's default num_ctx (the model sets none)")


def _root(base: str) -> str:
    """The server's root: the base URL without its trailing ``/v1`` (llama.cpp, Ollama and LM Studio serve
    their own routes there)."""
    parts = urlsplit(base.rstrip("/"))
    path = parts.path[:-3] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path.rstrip("/"), "", ""))


def _fetch(client: openai.OpenAI, method: str, url: str, body: Any = None, *, limit: int = PROBE_BYTES) -> Any:
    """One describing request through the client's own HTTP connection pool and headers, its body read up to
    ``limit`` bytes: a server that answers with an endless stream or a huge page is not read whole (ValueError,
    as for any answer that is not the JSON asked for). A slow one is ``SlowServer``."""
    from openai._httpx2 import request_exceptions, timeout_exceptions  # the client's own transport errors

    headers = {k: v for k, v in client.default_headers.items() if isinstance(v, str)}
    try:
        with client._client.stream(method, url, json=body, headers=headers, timeout=PROBE_TIMEOUT) as response:
            if response.status_code != 200:
                raise ValueError(f"{method} {url}: HTTP {response.status_code}")
            data, until = bytearray(), time.monotonic() + PROBE_TIMEOUT  # the whole answer, not each read
            for piece in response.iter_bytes():
                data += piece
                if len(data) > limit:
                    raise ValueError(f"{method} {url}: the answer passed {limit:,} bytes")
                if time.monotonic() > until:
                    raise SlowServer(f"{method} {url}: the answer took over {PROBE_TIMEOUT:g}s")
    except timeout_exceptions() as error:
        raise SlowServer(f"{method} {url}: no answer in {PROBE_TIMEOUT:g}s") from error
    except request_exceptions() as error:
        raise ValueError(f"{method} {url}: {type(error).__name__}") from error
    return json.loads(bytes(data))


def forget() -> None:
    """Drop what was learned (tests: a scripted server on a reused port is another server)."""
    with _LOCK:
        _KNOWN.clear()
