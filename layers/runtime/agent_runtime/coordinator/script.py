"""A code coordinator (``coordinator: script``): your Python function drives the run instead of the model, calling
the workflow's tools — the same registry, so approvals, the mutating-call journal, secrets, the tool-call cap and
the spend limit apply unchanged — and asking a model only where it chooses.

``def review(run: Script) -> str``: ``run.message``, ``run.files``, ``run.call(tool, step=..., **arguments)`` (a
tool's result, as text), ``run.ask(prompt, schema=..., step=...)`` (a model's answer: text, or JSON checked
against ``schema``), ``run.progress(text)`` (what it is doing, in the chat); the return value is the run's answer.

Python's semantics: a call that gives no result raises a ``ToolCallError`` the script may catch — ``ToolDenied``
(a person said no, or nobody said yes in time), ``InvalidArguments`` (no such tool, or arguments it refuses: nothing
was called), ``ToolFailed`` (it ran and failed) — and an ask whose answer is not the JSON asked for raises
``InvalidAnswer``. What a model would be told stays in the history for the thread's later turns. An exception the
script lets out ends the run ``failed``, its stop reason the script's file, line and message.

Steps (_steps_journal.py): each call and ask is journalled in the run's state under what it is, so a run resumed
after the deadline or an approval runs the function again from the top and a step made before returns (or raises)
what it did then, without running again. The script runs in a thread of its own (_script_thread.py), bounded by the
run's deadline and stop; a step that waits for a person, the deadline, a stop or a limit ends this invocation.
The script's words that reach people — its answer, its progress, its error — lose every secret value the process
used (``redaction.scrub``), whole, before any cut."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import jsonschema

from .. import messages as msgs
from ..errors import AgentRuntimeError, RunError, ToolError
from ..files import FileStore
from ..loop import Agent, call_id_for, remember_ids, stopped
from ..models import ModelError, ModelRequest, ToolCall
from ..models.reasoning import visible
from ..record import RunStatus
from ..redaction import scrub
from ..spend import request_cap
from ..steps import Final, RanTools, Run, StepResult, Stopped, Suspended
from ..stopping import asked_now
from ._script_thread import POLL_SECONDS, Raised, Request, Returned, ScriptThread, failure_location
from ._steps_journal import Entry, Journal, StepKeys, settled

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
JSON_NOTE = "\n\nAnswer with JSON only, matching this JSON Schema:\n"  # the demo model answers asks that end so


class ScriptFailed(RunError):
    """The coordinator script raised: the run fails with its message and where."""


class ToolCallError(AgentRuntimeError):
    """A ``run.call`` that gave no result: ``tool`` (its name), ``reason`` (what happened), ``step`` (its name)."""

    def __init__(self, tool: str, reason: str, step: str) -> None:
        super().__init__(f"{tool}: {reason}")
        self.tool, self.reason, self.step = tool, reason, step


class ToolDenied(ToolCallError):
    """A person denied the call, or its approval expired before anyone decided: it did not run."""


class InvalidArguments(ToolCallError):
    """The workflow has no such tool, or the arguments do not fit its parameters: nothing was called."""


class ToolFailed(ToolCallError):
    """The tool ran and failed: it raised or timed out, or an interruption left its outcome unknown."""


class InvalidAnswer(AgentRuntimeError, ValueError):
    """``run.ask(..., schema=...)``: the model's answer (``answer``) is not JSON matching the schema."""

    def __init__(self, reason: str, answer: str) -> None:
        super().__init__(reason)
        self.answer = answer


class _Ended(Exception):
    """Control flow: a step ended this invocation (a wait, the deadline, a stop, a limit)."""

    def __init__(self, result: StepResult) -> None:
        self.result = result


class Script:
    """What the coordinator function gets: the run's message, files, tools and a model. Its methods are called in
    the script's thread; each step is done in the run's."""

    def __init__(self, agent: ScriptAgent, run: Run, thread: Callable[[Callable[[], Any]], Any]) -> None:
        self._agent, self._run, self._do, self._keys = agent, run, thread, StepKeys()
        self.message = next((msgs.text_of(m) for m in reversed(run.state.messages) if m["role"] == "user"), "")
        self.files: FileStore = run.context.files

    def call(self, tool: str, *, step: str | None = None, **arguments: Any) -> str:
        """Run ``tool`` (approved first if it asks): its result as text, or a ``ToolCallError``. A step made before
        in this run returns (or raises) what it did then."""
        name = step or tool
        raw, digest = self._agent.checked(tool, arguments, name)
        keys = self._keys.next(name, tool, digest, step)
        entry: Entry = self._do(partial(self._agent.call_step, self._run, keys, name, tool, raw))
        if "error" not in entry:
            return entry.get("value", "")
        kind = ToolDenied if entry["error"] == "denied" else ToolFailed
        raise kind(tool, entry.get("reason", ""), name)

    def ask(self, prompt: str, *, schema: Mapping[str, Any] | None = None, step: str | None = None) -> Any:
        """A model's answer to ``prompt`` (the workflow's prompt as its system message, a window of its own):
        text, or the JSON it returned checked against ``schema`` (else ``InvalidAnswer``). Priced and limited like
        the run's calls."""
        if schema is not None:  # a schema that is not one is the script's mistake, raised where it wrote it
            jsonschema.validators.validator_for(schema).check_schema(schema)
        name = step or "ask"
        digest = json.dumps([prompt, schema], sort_keys=True, default=str)
        entry: Entry = self._do(
            partial(self._agent.ask_step, self._run, self._keys.next(name, "ask", digest, step), name, prompt, schema)
        )
        if "error" in entry:
            raise InvalidAnswer(entry.get("reason", ""), entry.get("value", ""))
        return json.loads(entry["value"]) if schema is not None else entry.get("value", "")

    def progress(self, text: str) -> None:
        """Say what the script is doing, in the chat's "working…" message (not a step: never journalled); like its
        answer, without a secret."""
        self._do(partial(self._agent.hooks.on_status, self._run, scrub(str(text))))


class ScriptAgent(Agent):
    """An agent whose steps are a Python function's: built by ``build_agent`` for ``coordinator: script``."""

    def __init__(self, *args: Any, function: Callable[[Script], Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.function = function

    def _drive(self, run: Run) -> StepResult:
        result = self._script(run)
        self.hooks.after_step(run)  # every ending checkpointed: the answer, a stop's answered calls, a wait
        return result

    def _script(self, run: Run) -> StepResult:
        if (asked := asked_now(run.context.stop)) is not None:
            return stopped(run, asked)
        journal = Journal.of(run)
        made = len(journal.steps)
        pending = [ToolCall.from_dict(call) for call in msgs.pending_tool_calls(run.state.messages)]
        if pending:  # resumed: the step that waited (an approval) or was cut (the deadline) finishes first
            result = self.calls.run(run, pending)
            if not isinstance(result, RanTools):
                return result
            for call in pending:
                journal.finished(call.id, partial(settled, run, call, result))
            self.hooks.after_step(run)
        thread = ScriptThread(self.function)
        thread.start(Script(self, run, thread.request))
        try:
            return self._follow(run, thread, made)
        finally:
            thread.abandon()  # whatever it does now never reaches the run

    def _follow(self, run: Run, thread: ScriptThread, made: int) -> StepResult:
        """Do the script's steps as it asks for them, until it returns, raises, or the run must end."""
        while True:
            left = run.deadline.remaining()  # past it, one more poll: a step asked for now ends the run before it
            item = thread.next(min(POLL_SECONDS, left) if left > 0 else POLL_SECONDS)
            if isinstance(item, Request):
                try:
                    item.reply.set_result(item.work())
                except BaseException as error:  # the step ended the run (a wait, a stop), or failed it
                    thread.abandon(item)
                    if isinstance(error, _Ended):
                        return error.result
                    raise
                continue
            if isinstance(item, Raised):
                where = failure_location(item.error)
                text = f"the script failed: {type(item.error).__name__}: {item.error}"
                text += f" (at {where})" if where else ""
                raise ScriptFailed(scrub(text)[:1_000]) from None  # its own words and where, never its traceback
            if (asked := asked_now(run.context.stop)) is not None:  # while it computed, or as it returned
                return stopped(run, asked)
            if isinstance(item, Returned):
                value = item.value
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
                text = scrub(text)  # goes to people
                run.state.messages.append(msgs.assistant(text))
                return Final(text)
            if run.deadline.expired():
                return self._out_of_time(thread.where(), progressed=len(Journal.of(run).steps) > made)

    def _out_of_time(self, where: str | None, *, progressed: bool) -> StepResult:
        """The deadline passed while the script ran its own code: the run suspends there if this invocation got on
        with it; one that finished no step would do the same again, so it fails."""
        at = f" (at {where})" if where else ""
        if progressed:
            return Suspended(f"the deadline was reached while the script ran its own code{at}")
        raise ScriptFailed(f"the script's own code ran past the run's deadline without finishing a step{at}")

    def checked(self, tool: str, arguments: dict[str, Any], step: str) -> tuple[str, str]:
        """The call's arguments as JSON, and as its step is known by; or InvalidArguments (nothing is called)."""
        item = self.tools.get(tool)
        if item is None:
            reason = f"the workflow has no tool named {tool!r} (it has {', '.join(self.tools.names()) or 'none'})"
            raise InvalidArguments(tool, reason, step)
        try:
            raw, digest = json.dumps(arguments), json.dumps(arguments, sort_keys=True)
            item.check(arguments)
        except (TypeError, ValueError, ToolError) as error:
            raise InvalidArguments(tool, str(error), step) from None
        return raw, digest

    def call_step(self, run: Run, keys: tuple[str, str], name: str, tool: str, raw: str) -> Entry:
        """In the run's thread: the call's entry (made before, or now)."""
        return self._made(run, keys, name, partial(self._call, run, keys[0], name, tool, raw))

    def ask_step(self, run: Run, keys: tuple[str, str], name: str, prompt: str, schema: Any) -> Entry:
        """In the run's thread: the ask's entry (made before, or now)."""

        def ask(journal: Journal) -> Entry:
            entry = journal.steps[keys[0]] = self.answer(run, name, prompt, schema)
            return entry

        return self._made(run, keys, name, ask)

    def _made(self, run: Run, keys: tuple[str, str], name: str, make: Callable[[Journal], Entry]) -> Entry:
        """A step made before in this run gives what it gave; a new one is made (not after a stop or the deadline),
        journalled, and checkpointed."""
        journal = Journal.of(run)
        found = journal.find(*keys)
        if found is not None:
            return found
        self._before(run, name)
        entry = make(journal)
        self.hooks.after_step(run)
        return entry

    def _call(self, run: Run, key: str, name: str, tool: str, raw: str, journal: Journal) -> Entry:
        call = ToolCall(call_id_for(run.state, key), tool, raw)
        journal.started(call.id, key, name)
        run.state.messages.append(msgs.assistant(None, [call.to_dict()]))
        remember_ids(run.state, [call])
        run.state.turn += 1
        result = self.calls.run(run, [call])
        if not isinstance(result, RanTools):
            raise _Ended(result)  # it waits for a person, or a limit or the deadline came first
        return journal.finished(call.id, partial(settled, run, call, result))

    def _before(self, run: Run, name: str) -> None:
        """A new step may start: not after a stop or the deadline."""
        if (asked := asked_now(run.context.stop)) is not None:
            raise _Ended(stopped(run, asked))
        if run.deadline.expired():
            raise _Ended(Suspended(f"the deadline was reached before step {name!r}"))

    def answer(self, run: Run, name: str, prompt: str, schema: Mapping[str, Any] | None) -> Entry:
        """One model call for ``ask``: the spend limit reserves its reply first; a stop closes it; JSON checked when
        asked for (an answer that is not is journalled as such: the script gets ``InvalidAnswer``)."""
        messages = [msgs.system(run.workflow.prompt), msgs.user(prompt + _json_note(schema))]
        cap = request_cap(run.record, messages, run.workflow.model.max_output_tokens)
        if isinstance(cap, str):
            raise _Ended(Stopped(RunStatus.COST_LIMIT, f"Stopped: {cap}."))
        run.state.turn += 1
        timeout = None if run.deadline.at is None else max(run.deadline.remaining(), 0.001)
        request = ModelRequest(
            messages=messages, max_output_tokens=cap, timeout=timeout, cancelled=lambda: run.context.stop() is not None
        )
        try:
            text = visible(self.complete(run, request, source="script").text or "")  # priced as the run's calls are
        except ModelError:
            if (asked := run.context.stop()) is not None:
                raise _Ended(stopped(run, asked)) from None
            if run.deadline.expired():  # cut off by our own deadline: asked again when the run resumes
                run.state.turn -= 1
                raise _Ended(Suspended(f"the deadline was reached during step {name!r}")) from None
            raise
        return _checked_answer(name, text, schema)


def _checked_answer(name: str, text: str, schema: Mapping[str, Any] | None) -> Entry:
    if schema is None:
        return {"name": name, "tool": "ask", "value": text}
    try:
        value = json.loads(_FENCE.sub("", text.strip()))
        jsonschema.validate(value, dict(schema))
    except (ValueError, jsonschema.ValidationError) as error:
        reason = f"the model's answer is not the JSON asked for: {str(error)[:300]}"
        return {"name": name, "tool": "ask", "error": "invalid_answer", "reason": reason, "value": text}
    return {"name": name, "tool": "ask", "value": json.dumps(value)}


def _json_note(schema: Mapping[str, Any] | None) -> str:
    return "" if schema is None else JSON_NOTE + json.dumps(schema)
