"""The context engine's invariant as a property, shared by the test (make test) and the grid (make bench).

One case is a whole run through the real ``openai`` client and the scripted server on 127.0.0.1: a window, an
output reserve, thresholds, a message (one line or many, up to ~60k tokens), an attachment with a planted
identifier, a server whose tokenizer counts ``drift`` times tiktoken and refuses what passes its window (as
OpenAI does, numbers in the message), and a model that reads ranges, loads, peeks and greps, in parallel
batches, then greps for the planted identifiers and answers with what it found.

The invariant: the run completes; no request the server accepted passed its window; at most one request is
refused, and only while the engine has not yet seen the server's count (drift > 1); no orphaned call or result
ever reaches the server; both planted identifiers are found. The server refuses every request over its
window, so "sent over the window" is counted by its refusals.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from agent_runtime import Agent, ConfigError, RunStatus, ToolRegistry
from agent_runtime.context import ContextEngine, ContextSettings, TokenCounter, budget
from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.documents import DOCUMENT_TOOLS
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.messages import system_prompt, text_of
from agent_runtime.models import dialect, probe
from agent_runtime.testing import Fail, ScriptedCall, ScriptedRequest, ScriptedServer, ServerKind, call, reply
from agent_runtime.testing.steps import Reply

from tests.conftest import make_workflow, model_for

COUNTER = TokenCounter("gpt-4o")
MAX_FILE_WORDS = 150_000  # ~1 MB: sizes beyond change nothing for the window, only the time a case takes
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "error",
    "retry",
    "queue",
    "webhook",
    "latency",
    "p95",
    "customer",
    "endpoint",
    "timeout",
]


@dataclass(frozen=True)
class Case:
    window: int
    output: int
    threshold: float  # compaction_threshold
    offload_at: int  # virtual_file_threshold_tokens
    preview: int
    message_tokens: int
    message_line_words: int  # words per line; 0: the whole message is one line
    file_lines: int
    file_line_words: int
    drift: float
    actions: tuple[tuple[str, ...], ...]  # batches of actions: read, read_all, range, load, peek, grep
    seed: int
    configured: int = 0  # the workflow's window when larger than the server's (0: the same as the server's)
    kind: str = ""  # the server as which the scripted one answers its describing routes ("": none of them)


@dataclass
class Outcome:
    status: str
    reason: str | None
    refused: int  # requests sent over the server's window (it refuses every one of them)
    problems: list[str]  # what the server rejected besides (orphans, unscripted requests)
    found: bool  # both planted identifiers were found by the model's greps
    feasible: bool = True  # the prompt and the tools fit the server's window with room to talk, at its count


TOO_SMALL = ("too small for this workflow", "leave no room", "take too much of it")


def text_of_size(tokens: int, words_per_line: int, rng: random.Random, tag: str) -> str:
    words = [rng.choice(WORDS) + str(rng.randint(0, 99)) for _ in range(max(1, tokens // 2))]
    if words_per_line <= 0:
        body = " ".join(words)
    else:
        body = "\n".join(" ".join(words[i : i + words_per_line]) for i in range(0, len(words), words_per_line))
    cut = rng.randint(0, len(body))
    return body[:cut] + f" {tag} " + body[cut:]


def exact(body: dict[str, Any]) -> int:
    return COUNTER.messages(body["messages"]) + COUNTER.tools(body.get("tools", []))


class Model:
    """The scripted model: follows the case's batches, then greps for the plants and answers."""

    def __init__(self, case: Case, attachment: str, plants: tuple[str, str], rng: random.Random) -> None:
        self.case, self.attachment, self.plants, self.rng = case, attachment, plants, rng
        self.batches = list(case.actions)
        self.phase = "work"
        self.found: set[str] = set()
        self.message_file: str | None = None
        self.retried = False

    def __call__(self, request: ScriptedRequest) -> Reply:
        if request.is_compaction():
            return reply("## Current work\nReading the attachment and the message; then searching for the plants.")
        if self.message_file is None:
            match = re.search(r"\[virtual file (file-[0-9a-f]+): user message", text_of(request.messages[1]))
            self.message_file = match.group(1) if match else ""
        for result in request.tool_results().values():
            self.found |= {plant for plant in self.plants if plant in result}
        if self.batches:
            return Reply(calls=tuple(self._action(kind) for kind in self.batches.pop(0)))
        retry = self._retry(request)
        if retry is not None:
            return retry
        if self.phase == "work":
            self.phase = "grep"
            greps = [ScriptedCall("file_regex", {"id": self.attachment, "pattern": r"PLANT-\d+", "max_matches": 1})]
            if self.message_file:
                greps.append(ScriptedCall("file_regex", {"id": self.message_file, "pattern": r"TICKET-\d+"}))
            return Reply(calls=tuple(greps))
        inline = " ".join(text_of(m) for m in request.messages)
        self.found |= {plant for plant in self.plants if plant in inline}
        moved = [
            m.group(1) for m in re.finditer(r"virtual file (file-[0-9a-f]+)", " ".join(request.tool_results().values()))
        ]
        if self.found != set(self.plants) and moved and self.phase != "followed":
            self.phase = "followed"  # a result too big for the window went to a file: search it, as a model would
            pattern = r"PLANT-\d+|TICKET-\d+"
            return Reply(calls=tuple(ScriptedCall("file_regex", {"id": fid, "pattern": pattern}) for fid in moved))
        return reply("found " + " ".join(sorted(self.found)))

    def _retry(self, request: ScriptedRequest) -> Reply | None:
        """A search for the plants refused for room is made again, alone and with no context lines, as the
        refusal advises (a model that follows the runtime's advice is what the invariant is about)."""
        if self.phase != "grep" or self.retried:
            return None
        calls = {c["id"]: c for m in request.messages for c in m.get("tool_calls", [])}
        refused = [calls[i] for i, text in request.tool_results().items()
                   if i in calls and ("not read:" in text or "only the first 0 of" in text)]  # fmt: skip
        searches = [c for c in refused if c["function"]["name"] == "file_regex"]
        if not searches:
            return None
        self.retried = True
        args = [{**json.loads(c["function"]["arguments"]), "context": 0, "max_matches": 1} for c in searches]
        return Reply(calls=(ScriptedCall("file_regex", args[0]),))

    def _action(self, kind: str) -> ScriptedCall:
        lines = max(1, self.case.file_lines)
        start = self.rng.randint(1, lines)
        args: dict[str, Any] = {"id": self.attachment}
        if kind == "range":
            args |= {"start_line": start, "end_line": min(lines, start + self.rng.choice([5, 50, 400, 3000]))}
        elif kind == "read":
            args |= {"start_line": start}
        elif kind == "bytes":
            args |= {"start_byte": self.rng.randint(0, 1000), "end_byte": self.rng.randint(1000, 400_000)}
        elif kind == "grep":
            return ScriptedCall("file_regex", {**args, "pattern": self.rng.choice(WORDS), "max_matches": 50})
        elif kind == "peek":
            return ScriptedCall("peek_file", {**args, "start": 0, "stop": 4096})
        name = "load_file" if kind == "load" else "file_read"
        return call(name, args).calls[0]


def run_case(case: Case) -> Outcome:
    # Each case is another server (a port reused by the next case must not inherit what this one taught).
    budget._LEARNED.clear()
    dialect.forget()
    probe.forget()
    rng = random.Random(case.seed)
    files = InMemoryFileStore()
    plants = (f"PLANT-{rng.randint(10_000, 99_999)}", f"TICKET-{rng.randint(10_000, 99_999)}")
    words = min(case.file_lines * case.file_line_words, MAX_FILE_WORDS)
    body = text_of_size(words * 2, case.file_line_words, rng, plants[0])
    attachment = files.put(body.encode(), name="attachment.log")
    message = "Review the attachment. " + text_of_size(case.message_tokens, case.message_line_words, rng, plants[1])
    model = Model(case, attachment.id, plants, rng)
    refused: list[int] = []

    def server_count(request_body: dict[str, Any]) -> int:
        return int(exact(request_body) * case.drift)

    def intercept(request: ScriptedRequest) -> Any:
        counted = server_count(request.body)
        if counted + int(request.body.get("max_completion_tokens") or 0) > case.window:
            refused.append(counted)
            return Fail(
                400,
                f"This model's maximum context length is {case.window} tokens. However, your messages resulted "
                f"in {counted} tokens.",
                code="context_length_exceeded",
                error_type="invalid_request_error",
            )
        return model(request)

    settings = ContextSettings(
        virtual_file_threshold_tokens=case.offload_at,
        virtual_file_preview_tokens=case.preview,
        compaction_threshold=case.threshold,
    )
    window = max(case.window, case.configured)
    workflow = make_workflow(window=window, output=case.output, context=settings, max_tool_calls=60)
    registry = ToolRegistry([*FILE_TOOLS, *DOCUMENT_TOOLS])
    kind = ServerKind(case.kind, case.window) if case.kind else None
    feasible = _feasible(case, registry, files)
    with ScriptedServer([], token_counter=server_count, intercept=intercept, kind=kind) as server:
        agent_model = model_for(server, attempts=1)
        engine = ContextEngine(workflow, registry, model=agent_model)
        agent = Agent(workflow, agent_model, tools=registry, hooks=[engine], files=files)
        try:
            record = agent.run(message)
        except ConfigError as error:  # said before any request: the window cannot hold the prompt and the tools
            return Outcome("too_small", str(error), len(refused), list(server.problems), False, feasible)
    found = record.final_answer is not None and all(plant in record.final_answer for plant in plants)
    overflowed = len(refused) + len(server.overflowed)
    return Outcome(str(record.status), record.stop_reason, overflowed, list(server.problems), found, feasible)


def _feasible(case: Case, registry: ToolRegistry, files: InMemoryFileStore) -> bool:
    """Clearly room to talk: the system prompt, the tools and a status (~250 tokens), at the server's count, with
    a quarter of what a request may take (400 tokens at least) to spare. Closer cases may end "too small"."""
    prompt = system_prompt(make_workflow(), files.list())
    base = COUNTER.text(prompt) + COUNTER.tools(registry.specs()) + 250
    reserve = case.output if not case.configured else min(case.output, max(256, case.window // 8))
    usable = case.window - reserve
    return base * case.drift + max(400, usable // 4) <= usable


def holds(case: Case, outcome: Outcome) -> list[str]:
    """What broke the invariant (empty: it held). A window that cannot hold the prompt and the tools may end
    the run with that reason, at once or after the one refused request that teaches the server's count; a
    window that clearly can must never."""
    broken = []
    too_small = outcome.reason is not None and any(words in outcome.reason for words in TOO_SMALL)
    if not outcome.feasible:  # a tight window: any clean ending (the plants may be out of reach), nothing sent over
        ended = outcome.status == str(RunStatus.COMPLETED) or too_small
        return [] if ended and outcome.refused <= 1 and not outcome.problems else [f"tight window: {outcome}"]
    if outcome.status != str(RunStatus.COMPLETED):
        broken.append(f"run {outcome.status}: {outcome.reason}")
    unknown = case.drift > 1.0 or (case.configured and not case.kind)  # what the server counts, or its window
    if outcome.refused > (1 if unknown else 0):
        broken.append(f"{outcome.refused} request(s) sent over the window")
    if outcome.problems:
        broken.append("server: " + "; ".join(outcome.problems))
    if not outcome.found:
        broken.append("a planted identifier was not found")
    return broken
