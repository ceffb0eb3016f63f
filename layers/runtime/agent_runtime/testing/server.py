"""A real OpenAI-compatible HTTP server on 127.0.0.1 that replays a script of assistant turns.

Tests and the demo reach it through the real ``openai`` client, never a mock. It records every request, answers
an unscripted request with a loud 400, rejects histories with orphaned tool calls or results exactly as the real
API does, and :meth:`ScriptedServer.assert_complete` fails on unused steps or on anything unexpected.
"""

from __future__ import annotations

import itertools
import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai

from ..messages import find_orphans
from .kinds import ServerKind
from .steps import Fail, Paced, Raw, Reply, ScriptedRequest, Step

Answer = tuple[int, dict[str, Any] | bytes, dict[str, str]]


class ScriptError(AssertionError):
    """The conversation did not follow the script."""


def rough_token_count(body: dict[str, Any]) -> int:
    """A deterministic stand-in for the prompt's token count (about four characters a token)."""
    text = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))
    return max(1, len(text) // 4)


class ScriptedServer:
    """Serve ``script`` on ``http://127.0.0.1:<port>/v1``. Use as a context manager."""

    def __init__(
        self,
        script: Iterable[Step],
        *,
        model: str = "scripted-model",
        token_counter: Callable[[dict[str, Any]], int] = rough_token_count,
        intercept: Callable[[ScriptedRequest], Reply | Fail | None] | None = None,
        kind: ServerKind | None = None,
        usage: bool | Callable[[dict[str, Any]], Any] = True,
    ) -> None:
        """``intercept`` sees every request first; when it answers, the script is not consumed (use it for side
        calls such as compaction summaries, whose timing depends on token counts rather than on turns).
        ``usage``: False for an endpoint that never reports usage; a function to report something else instead
        (negative counts, fractions, text: what broken gateways send)."""
        self.usage = usage
        self.model = model
        self.kind = kind  # dressed as llama.cpp, vLLM, LM Studio or Ollama: their describing routes and window
        self.overflowed: list[int] = []  # requests refused as over the kind's window (index into requests)
        self.described: list[str] = []  # the describing routes asked ("GET /props", ...)
        self.intercepted: list[ScriptedRequest] = []
        self._intercept = intercept
        self.requests: list[ScriptedRequest] = []
        self.problems: list[str] = []
        self.abandoned: list[int] = []  # requests whose client went away mid-stream (index into requests)
        self._local = threading.local()  # per request thread: the pacing of the reply being played
        self._steps: deque[Step] = deque(script)
        self._count_tokens = token_counter
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._previous: list[str] = []  # the last request's messages, for prefix caching
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._serve, name="scripted-model", daemon=True)

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=0.02)  # short poll: close() returns fast

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def client(self, **kwargs: Any) -> openai.OpenAI:
        """An ``openai.OpenAI`` client pointed at this server (its own retries off)."""
        return openai.OpenAI(base_url=self.base_url, api_key="scripted", max_retries=0, **kwargs)

    def add(self, *steps: Step) -> None:
        with self._lock:
            self._steps.extend(steps)

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def assert_complete(self) -> None:
        """Raise if a step was never used or a request was unexpected or malformed."""
        problems = list(self.problems)
        if self._steps:
            problems.append(f"{len(self._steps)} scripted step(s) were never requested")
        if problems:
            raise ScriptError("; ".join(problems))

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for serve_forever and would hang if it never ran
            self._httpd.shutdown()
        self._httpd.server_close()

    # Called on the server thread.
    def _answer(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> Answer:
        self._local.paced = None
        with self._lock:
            request = ScriptedRequest(index=len(self.requests), body=body, headers=headers or {})
            self.requests.append(request)
            orphans = find_orphans(body.get("messages", []))
            if orphans:
                return self._reject(request, "invalid history: " + "; ".join(orphans))
        cap = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        refusal = self.kind.overflow(self._count_tokens(body), cap) if self.kind else None
        if refusal is not None:
            self.overflowed.append(request.index)
            return refusal[0], refusal[1], {}
        if self._intercept is not None:
            try:
                answer = self._intercept(request)
            except Exception as error:  # a broken intercept is a test bug: report it loudly
                return self._reject(request, f"intercept raised {type(error).__name__}: {error}")
            if answer is not None:
                self.intercepted.append(request)
                return self._play(request, answer)
        with self._lock:
            if not self._steps:
                return self._reject(request, "the script has no step left for this request")
            step = self._steps.popleft()
        return self._play(request, step)

    def _reject(self, request: ScriptedRequest, why: str) -> Answer:
        message = f"scripted model: request #{request.index + 1}: {why}"
        self.problems.append(message)
        return 400, _error_body(message, "invalid_request_error", None), {}

    def _play(self, request: ScriptedRequest, step: Step) -> Answer:
        while callable(step):
            try:
                step = step(request)
            except Exception as error:  # a broken responder is a test bug: report it loudly
                return self._reject(request, f"responder raised {type(error).__name__}: {error}")
        self._local.paced, self._local.index = (step, request.index) if isinstance(step, Paced) else (None, None)
        if isinstance(step, Paced):
            step = step.reply
        if isinstance(step, Fail):
            return step.status, _error_body(step.message, step.error_type, step.code), step.headers
        if isinstance(step, Raw):
            return step.status, step.body, {"content-type": step.content_type}
        return 200, self._completion(request, step), {}

    def _completion(self, request: ScriptedRequest, step: Reply) -> dict[str, Any]:
        tool_calls = [
            {
                "id": scripted.id or f"call_{next(self._ids)}",
                "type": "function",
                "function": {"name": scripted.name, "arguments": scripted.raw_arguments()},
            }
            for scripted in step.calls
        ]
        prompt = self._count_tokens(request.body)
        completion = step.completion_tokens or max(1, len(json.dumps([step.text, tool_calls])) // 4)
        cap = request.body.get("max_tokens") or request.body.get("max_completion_tokens")
        if step.completion_tokens is None and step.finish_reason == "length" and isinstance(cap, int):
            completion = cap  # cut off at the output limit: a real server has written that many
        cached = min(prompt, self._cached(request.body))
        message: dict[str, Any] = {"role": "assistant", "content": step.text}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return {
            "id": f"chatcmpl-{request.index + 1}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": step.finish_reason or ("tool_calls" if tool_calls else "stop"),
                }
            ],
        } | self._usage(
            {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
            }
        )

    def _usage(self, usage: dict[str, Any]) -> dict[str, Any]:
        if self.usage is True:
            return {"usage": usage}
        return {} if self.usage is False else {"usage": self.usage(usage)}

    def _cached(self, body: dict[str, Any]) -> int:
        """OpenAI's prefix caching: the tools and the messages this request shares with the previous one, from
        1,024 tokens, in 128-token steps."""
        messages = body.get("messages", [])
        keys = [json.dumps(message, sort_keys=True) for message in messages]
        with self._lock:
            previous, self._previous = self._previous, keys
        common = next(
            (i for i, (a, b) in enumerate(zip(keys, previous, strict=False)) if a != b), min(len(keys), len(previous))
        )
        if not common:
            return 0
        shared = self._count_tokens({"messages": messages[:common], "tools": body.get("tools", [])})
        return (shared // 128) * 128 if shared >= 1024 else 0


def sse_chunks(completion: dict[str, Any], *, usage: bool) -> list[dict[str, Any]]:
    """A completion as the chunks a streaming server sends: the role, the text in word-sized deltas, each tool
    call's id and name then its arguments in pieces (keyed by index), the finish reason, and the usage last
    (with empty choices), when asked for."""
    choice, head = completion["choices"][0], {k: completion[k] for k in ("id", "created", "model")}
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": None})]
    text = message.get("content") or ""
    chunks += [chunk({"content": piece}) for piece in re.findall(r"\S*\s*", text) if piece]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": function["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        arguments = function["arguments"]
        for start in range(0, len(arguments), 8):
            piece = {"index": index, "function": {"arguments": arguments[start : start + 8]}}
            chunks.append(chunk({"tool_calls": [piece]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if usage and "usage" in completion:
        chunks.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": completion["usage"]})
    return chunks


def _error_body(message: str, error_type: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def _stream(handler: BaseHTTPRequestHandler, server: ScriptedServer, completion: dict[str, Any], body: Any) -> None:
    """Server-sent events as OpenAI streams them; pacing, stalls and a client going away as a real server meets
    them (it stops generating when the connection closes)."""
    paced: Paced | None = getattr(server._local, "paced", None)
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.end_headers()
    usage = bool((body.get("stream_options") or {}).get("include_usage"))
    for number, chunk in enumerate(sse_chunks(completion, usage=usage)):
        try:
            if paced is not None and not _wait(handler.connection, paced, number):
                raise ConnectionResetError
            handler.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            handler.wfile.flush()
        except OSError:  # the client went away: stop generating
            server.abandoned.append(getattr(server._local, "index", None) or 0)
            return
    handler.wfile.write(b"data: [DONE]\n\n")
    handler.wfile.flush()
    handler.close_connection = True


def _wait(connection: socket.socket, paced: Paced, number: int) -> bool:
    """Sleep before chunk ``number``; False when the client closed the connection meanwhile."""
    seconds = paced.interval if number else 0.0
    if paced.stall_after is not None and number == paced.stall_after:
        seconds += paced.stall
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        readable, _, _ = select.select([connection], [], [], max(0.0, min(left, 0.05)))
        try:
            if readable and not connection.recv(1, socket.MSG_PEEK):
                return False  # end of stream: the client closed its side
        except OSError:  # reset: gone as well
            return False
        if left <= 0:
            return True


def _described(handler: BaseHTTPRequestHandler, server: ScriptedServer, method: str) -> tuple[int, Any] | None:
    """The answer of a describing route of the server's kind (its window, its token count), or None."""
    if server.kind is None:
        return None
    body: dict[str, Any] = {}
    if method == "POST" and handler.path.rstrip("/") != "/v1/chat/completions":
        body = json.loads(handler.rfile.read(int(handler.headers.get("content-length") or 0)) or b"{}")
    answer = server.kind.route(method, handler.path, body, server.model, server._count_tokens)
    if answer is not None:
        server.described.append(f"{method} {handler.path.rstrip('/')}")
    return answer


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            described = _described(self, server, "POST")
            if described is not None:
                self._send(*described, {})
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, _error_body(f"no route for POST {self.path}", "invalid_request_error", None), {})
                return
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError as error:
                self._send(400, _error_body(f"request body is not JSON: {error}", "invalid_request_error", None), {})
                return
            answer = server._answer(body, {k.lower(): v for k, v in self.headers.items()})
            status, payload, _ = answer
            if status == 200 and body.get("stream") and isinstance(payload, dict) and "choices" in payload:
                _stream(self, server, payload, body)
            else:
                self._send(*answer)

        def do_GET(self) -> None:
            described = _described(self, server, "GET")
            if described is not None:
                self._send(*described, {})
                return
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]}, {})
            else:
                self._send(404, _error_body(f"no route for GET {self.path}", "invalid_request_error", None), {})

        def _send(self, status: int, payload: dict[str, Any] | bytes, headers: dict[str, str]) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            headers = {"content-type": "application/json", **headers}
            self.send_response(status)
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            return

    return Handler
