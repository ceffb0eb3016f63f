"""The scripted server dressed as a real one: the routes where llama.cpp, vLLM, LM Studio and Ollama say their
window and count tokens, with their field names, and the overflow error each gives for a request over it.

Shapes (from each server's API): llama.cpp ``GET /props`` → ``default_generation_settings.n_ctx``,
``POST /apply-template`` → ``{"prompt"}``, ``POST /tokenize`` → ``{"tokens"}``, overflow 400
``exceed_context_size_error`` with ``n_prompt_tokens``/``n_ctx``; vLLM ``GET /v1/models`` → ``max_model_len``,
``POST /tokenize`` → ``{"count"}``; LM Studio ``GET /api/v0/models`` → ``loaded_context_length``; Ollama
``POST /api/show`` → ``parameters`` ("num_ctx N") and ``model_info`` (``<arch>.context_length``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

KINDS = ("llama.cpp", "vllm", "lmstudio", "ollama")
Route = tuple[int, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ServerKind:
    """Which server to look like, with what window. ``ollama_num_ctx`` False: the model sets no num_ctx."""

    kind: str
    window: int
    ollama_num_ctx: bool = True

    def route(
        self, method: str, path: str, body: dict[str, Any], model: str, count: Callable[[dict[str, Any]], int]
    ) -> Route | None:
        """The answer to a describing route of this kind, or None (not one of its routes)."""
        path = path.rstrip("/")
        window = self.window
        if (self.kind, method, path) == ("llama.cpp", "GET", "/props"):
            return 200, {"default_generation_settings": {"n_ctx": window}}
        if (self.kind, method, path) == ("llama.cpp", "POST", "/apply-template"):
            return 200, {"prompt": json.dumps(body)}
        if (self.kind, method, path) == ("llama.cpp", "POST", "/tokenize"):
            return 200, {"tokens": [0] * _tokens(body, count)}
        if (self.kind, method, path) == ("vllm", "GET", "/v1/models"):
            return 200, {"object": "list", "data": [{"id": model, "object": "model", "max_model_len": window}]}
        if (self.kind, method, path) == ("vllm", "POST", "/tokenize"):
            return 200, {"count": count(body), "max_model_len": window}
        if (self.kind, method, path) == ("lmstudio", "GET", "/api/v0/models"):
            entry = {"id": model, "max_context_length": 131_072, "loaded_context_length": window}
            return 200, {"data": [entry]}
        if (self.kind, method, path) == ("ollama", "POST", "/api/show"):
            parameters = f"num_ctx {window}\nstop <eos>" if self.ollama_num_ctx else "stop <eos>"
            return 200, {"parameters": parameters, "model_info": {"llama.context_length": 131_072}}
        return None

    def overflow(self, prompt: int, cap: int) -> Route | None:
        """The server's refusal of a prompt that leaves no room in its window, or None."""
        if prompt + (cap if self.kind == "vllm" else 0) <= self.window:
            return None
        if self.kind == "llama.cpp":
            return 400, {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": prompt,
                    "n_ctx": self.window,
                    "message": f"request ({prompt} tokens) exceeds the "
                    f"available context size ({self.window} tokens), try increasing it",
                }
            }
        if self.kind == "vllm":
            return 400, {
                "error": {
                    "type": "BadRequestError",
                    "code": 400,
                    "message": f"This model's maximum context "
                    f"length is {self.window} tokens. However, you requested {prompt + cap} tokens "
                    f"({prompt} in the messages, {cap} in the completion).",
                }
            }
        return None  # LM Studio and Ollama cut the prompt silently


def _tokens(body: dict[str, Any], count: Callable[[dict[str, Any]], int]) -> int:
    """llama.cpp's /tokenize of a prompt /apply-template rendered (here: the request's JSON)."""
    try:
        return count(json.loads(str(body.get("content", ""))))
    except ValueError:
        return max(1, len(str(body.get("content", ""))) // 4)
