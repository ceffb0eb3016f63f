"""A code coordinator (``coordinator: script``): your Python function drives the run instead of the model, calling
the workflow's tools — the same registry, so approvals, the mutating-call journal, secrets, the tool-call cap and
the spend limit apply unchanged — and asking a model only where it chooses.

``def review(run: Script) -> str``: ``run.message``, ``run.files``, ``run.call(tool, step=..., **arguments)`` (a
tool's result, as text), ``run.ask(prompt, schema=..., step=...)`` (a model's answer: text, or JSON checked
against ``schema``), ``run.progress(text)`` (what it is doing, in the chat); the return value is the run's answer.
Each call and ask is a step, journalled in the run's state by its name (``step=``, else the tool's name and its
count): a run resumed after the Lambda deadline or an approval runs the function again from the top, and finished
steps return what they returned then, without running again. So a script must call in the same order each time it
runs (it may branch on what the calls returned).
A step that waits for a person, the deadline, a stop or a limit ends this invocation there; an exception in the
script is the run's failure with the script's own message. The script's words that reach people — its answer, its
progress, its error — lose every secret value the process used (``redaction.scrub``), whole, before any cut."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema

from . import messages as msgs
from .errors import ConfigError, RunError
from .files import FileStore
from .loop import Agent, stopped
from .models import ModelRequest, ToolCall
from .record import RunStatus
from .redaction import scrub
from .spend import request_cap
from .state import Slot
from .steps import Final, RanTools, Run, StepResult, Stopped, Suspended

# The run's steps: {"run": run id, "steps": {step name: result}, "calls": {call id: step name}}. Keyed by the run:
# a thread's next turn (a new run over the same state) runs its steps afresh.
JOURNAL: Slot[dict[str, Any]] = Slot("script_journal", dict, owner=__name__)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class ScriptFailed(RunError):
    """The coordinator script raised: the run fails with its message."""


class _Ended(Exception):
    """Control flow: a step ended this invocation (a wait, the deadline, a stop, a limit)."""

    def __init__(self, result: StepResult) -> None:
        self.result = result


class _Fault(Exception):
    """The runtime's own error inside a step (an approver, a model): the run's, not the script's."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class Script:
    """What the coordinator function gets: the run's message, files, tools and a model."""

    def __init__(self, agent: ScriptAgent, run: Run) -> None:
        self._agent, self._run, self._counts = agent, run, Counter[str]()
        self.message = next((msgs.text_of(m) for m in reversed(run.state.messages) if m["role"] == "user"), "")
        self.files: FileStore = run.context.files

    def call(self, tool: str, *, step: str | None = None, **arguments: Any) -> str:
        """Run ``tool`` (approved first if it asks): its result as text. A finished step returns its result."""
        key = self._key(step, tool)
        journal = _journal(self._run)
        if key in journal:
            return journal[key]
        self._before(key)
        call = ToolCall(f"script-{hashlib.sha256(key.encode()).hexdigest()[:16]}", tool, json.dumps(arguments))
        _journal(self._run, "calls")[call.id] = key
        self._run.state.messages.append(msgs.assistant(None, [call.to_dict()]))
        self._run.state.turn += 1
        try:
            result = self._agent.calls.run(self._run, [call])
            self._agent.hooks.after_step(self._run)  # checkpointed after each step
        except Exception as error:
            raise _Fault(error) from error
        if not isinstance(result, RanTools):
            raise _Ended(result)
        return journal.setdefault(key, _result_of(self._run, call.id))

    def ask(self, prompt: str, *, schema: Mapping[str, Any] | None = None, step: str | None = None) -> Any:
        """A model's answer to ``prompt`` (the workflow's prompt as its system message, a window of its own):
        text, or the JSON it returned checked against ``schema``. Priced and limited like the run's calls."""
        key = self._key(step, "ask")
        journal = _journal(self._run)
        if key not in journal:
            self._before(key)
            try:
                journal[key] = self._agent.answer(self._run, prompt, schema)
                self._agent.hooks.after_step(self._run)
            except (_Ended, ScriptFailed):
                raise
            except Exception as error:  # a model error: the run's, as in a model-driven run
                raise _Fault(error) from error
        return json.loads(journal[key]) if schema is not None else journal[key]

    def progress(self, text: str) -> None:
        """Say what the script is doing, in the chat's "working…" message (not a step: never journalled)."""
        self._agent.hooks.on_status(self._run, scrub(text))  # the script's words, as its answer: no secret

    def _key(self, step: str | None, kind: str) -> str:
        self._counts[kind] += 1
        return step or f"{kind}#{self._counts[kind]}"

    def _before(self, key: str) -> None:
        """A new step may start: not after a stop or the deadline."""
        if (asked := self._run.context.stop()) is not None:
            raise _Ended(stopped(self._run, asked))
        if self._run.deadline.expired():
            raise _Ended(Suspended(f"the deadline was reached before step {key!r}"))


class ScriptAgent(Agent):
    """An agent whose steps are a Python function's: built by ``build_agent`` for ``coordinator: script``."""

    def __init__(self, *args: Any, function: Callable[[Script], Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.function = function

    def _drive(self, run: Run) -> StepResult:
        if (asked := run.context.stop()) is not None:
            return stopped(run, asked)
        pending = [ToolCall.from_dict(call) for call in msgs.pending_tool_calls(run.state.messages)]
        if pending:  # resumed: the step that waited (an approval) or was cut (the deadline) finishes first
            result = self.calls.run(run, pending)
            self.hooks.after_step(run)
            if not isinstance(result, RanTools):
                return result
            steps, journal = _journal(run, "calls"), _journal(run)
            for call in pending:
                journal.setdefault(steps.get(call.id, call.id), _result_of(run, call.id))
        try:
            answer = self.function(Script(self, run))
        except _Ended as ended:
            return ended.result
        except _Fault as fault:
            raise fault.error from None
        except RunError:
            raise
        except Exception as error:  # the script's own words, never its traceback, in the thread
            raise ScriptFailed(scrub(f"the script failed: {type(error).__name__}: {error}")[:1_000]) from None
        text = scrub(answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False))  # goes to people
        run.state.messages.append(msgs.assistant(text))
        return Final(text)

    def answer(self, run: Run, prompt: str, schema: Mapping[str, Any] | None) -> str:
        """One model call for ``ask``: the spend limit reserves its reply first; JSON checked when asked for."""
        messages = [msgs.system(run.workflow.prompt), msgs.user(prompt + _json_note(schema))]
        cap = request_cap(run.record, messages, run.workflow.model.max_output_tokens)
        if isinstance(cap, str):
            raise _Ended(Stopped(RunStatus.COST_LIMIT, f"Stopped: {cap}."))
        run.state.turn += 1
        timeout = None if run.deadline.at is None else max(run.deadline.remaining(), 0.001)
        request = ModelRequest(messages=messages, max_output_tokens=cap, timeout=timeout)
        response = self.complete(run, request, source="script")  # priced as the run's calls are
        text = response.text or ""
        if schema is None:
            return text
        try:
            value = json.loads(_FENCE.sub("", text.strip()))
            jsonschema.validate(value, dict(schema))
        except (ValueError, jsonschema.ValidationError) as error:
            raise ScriptFailed(f"the model's answer is not the JSON asked for: {str(error)[:300]}") from None
        return json.dumps(value)


def _journal(run: Run, part: str = "steps") -> dict[str, str]:
    """This run's journal (``steps`` by name, or ``calls``: call id to step name); another run's is dropped."""
    stored = JOURNAL.use(run.state.context)
    if stored.get("run") != run.state.run_id:
        stored.clear()
        stored.update({"run": run.state.run_id, "steps": {}, "calls": {}})
    found: dict[str, str] = stored[part]
    return found


def _json_note(schema: Mapping[str, Any] | None) -> str:
    if schema is None:
        return ""
    return "\n\nAnswer with JSON only, matching this JSON Schema:\n" + json.dumps(schema)


def _result_of(run: Run, call_id: str) -> str:
    for message in reversed(run.state.messages):
        if message["role"] == "tool" and message.get("tool_call_id") == call_id:
            return msgs.text_of(message)
    raise ConfigError(f"no result for the script's call {call_id}")  # a bug: every call is answered
