"""Run a suite: each case (times ``repeat``) as normal stored runs, in parallel, then its checks.

Every attempt's runs are ordinary runs in the local store (``runs show``/``runs chart`` work on them); a case with
``turns`` is one thread. Nothing here knows the model: the demo model, a hosted one or a local server are the same.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..config import RuntimeConfig
from ..context.counter import estimate_usage
from ..errors import AgentRuntimeError, ConfigError
from ..events import Compaction, Masking
from ..files import FileStore
from ..hooks import Hook
from ..messages import Message
from ..models import ModelRequest, ModelResponse
from ..models.prices import Prices, prices_for
from ..record import EVAL_RUN_PREFIX, RunRecord, RunState, new_run_id
from ..runtime import Services, build_agent, deployed, open_model, workflow_sandbox
from ..skills import SkillLibrary
from ..stores import LocalStore, RunStore, StoreFileStore, ThreadStore
from ..stores.hook import new_turn
from ..stores.runs import run_partition, thread_partition
from ..tools import Tool, ToolOutcome
from ..toolsets import ToolEnv
from ..workflows import Workflow, load_workflow
from .approve import CaseApprover
from .cases import MAX_JOBS, Case, Judge
from .checks import CheckResult, Observed, evaluate, judge_messages, parse_verdict
from .exceptions import Problem, SuiteError
from .generate import generate
from .stubs import known_tools, stub_problems, stub_tools, without_stubbed

MAX_PARALLEL = 64  # attempts at once (each holds a model connection and a run's memory)


@dataclass(frozen=True)
class EvalOptions:
    parallel: int = 4
    repeat: int | None = None  # every case this many times (default: each case's own)
    model: str | None = None  # instead of the workflow's model (and AGENT_MODEL)
    settings: Mapping[str, Any] = field(default_factory=dict)  # dotted workflow keys, over each case's
    judge_model: str | None = None  # instead of each judge's own, else the workflow's model


@dataclass
class Attempt:
    """One run of a case (all its turns): what it did, what it cost, and its checks."""

    case: Case
    index: int
    run_ids: list[str] = field(default_factory=list)
    status: str = "failed"
    answer: str | None = None
    stop_reason: str | None = None
    model: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    found: list[str] = field(default_factory=list)  # deferred tools its searches found (toolsearch)
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None
    seconds: float = 0.0
    compactions: int = 0
    maskings: int = 0
    judge_calls: int = 0  # the judge's model calls: reported apart from what the case's runs cost
    judge_cost_usd: float | None = None
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None  # the case could not run (its workflow, a stub, a file)

    @property
    def passed(self) -> bool:
        return self.error is None and all(check.passed for check in self.checks)

    def add(self, record: RunRecord) -> None:
        usage = record.usage_totals()
        cost = record.cost_usd()
        self.run_ids.append(record.run_id)
        self.status, self.answer, self.stop_reason = str(record.status), record.final_answer, record.stop_reason
        self.model = record.model
        self.model_calls += len(record.model_calls)
        self.prompt_tokens += usage["prompt_tokens"]
        self.completion_tokens += usage["completion_tokens"]
        self.cached_tokens += usage["cached_tokens"]
        self.cost_usd = None if cost is None else (self.cost_usd or 0.0) + cost
        self.compactions += len(record.events_of(Compaction))
        self.maskings += len(record.events_of(Masking))
        self.found += [name for e in record.events if e["type"] == "tools_found" for name in e["found"]]
        ran = {call.get("id") for call in record.tool_calls if call.get("executed")}
        for call in self.tool_calls:  # this run's: a call denied (or refused by a limit) was asked, never run
            if "ran" not in call:
                call["ran"] = call.pop("id", None) in ran

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case.id,
            "name": self.case.name,
            "variant": self.case.variant,
            "attempt": self.index,
            "passed": self.passed,
            "error": self.error,
            "run_ids": self.run_ids,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "answer": self.answer,
            "model": self.model,
            "tool_calls": [
                {"name": c["name"], "error": c["error"], "ran": c.get("ran", True)} for c in self.tool_calls
            ],
            "tools_found": self.found,
            "model_calls": self.model_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "seconds": round(self.seconds, 2),
            "compactions": self.compactions,
            "maskings": self.maskings,
            "checks": [check.to_dict() for check in self.checks],
            "judge": {"calls": self.judge_calls, "cost_usd": _rounded(self.judge_cost_usd)},
        }


class _Calls(Hook):
    """Every tool call with its arguments (the run record keeps names only), for the tools_called checks."""

    def __init__(self, sink: list[dict[str, Any]]) -> None:
        self.sink = sink

    def on_tool_result(self, run: Any, outcome: ToolOutcome) -> ToolOutcome:
        try:
            arguments = json.loads(outcome.call.arguments or "{}")
        except ValueError:
            arguments = {"(unparsed)": outcome.call.arguments}
        call = {"id": outcome.call.id, "name": outcome.call.name, "arguments": arguments, "error": outcome.is_error}
        self.sink.append(call)  # whether it ran: from the run's record (Attempt.add)
        return outcome


class Runner:
    def __init__(
        self, config: RuntimeConfig, options: EvalOptions, *, progress: Callable[[Attempt], None] | None = None
    ):
        self.options = options
        self.config = dataclasses.replace(config, model_override=options.model) if options.model else config
        self.skills = SkillLibrary(config.skills_dir)
        self.store = LocalStore(self.config.state_dir)
        self.progress = progress
        self._generated: dict[str, bytes] = {}
        self._generating = threading.Lock()  # a matrix's cells start together: the 300-page PDF is made once

    def run(self, cases: Sequence[Case]) -> list[Attempt]:
        """Every case ``repeat`` times, ``parallel`` at a time; the count is checked before anything runs, and
        the jobs are made as the pool takes them."""
        total = sum(self.options.repeat or case.repeat for case in cases)
        if total > MAX_JOBS:
            raise ConfigError(f"{total:,} attempts ({len(cases):,} cases with their repeats); at most {MAX_JOBS:,}")
        if not 1 <= self.options.parallel <= MAX_PARALLEL:
            raise ConfigError(f"--parallel is 1 to {MAX_PARALLEL}")
        self.check_stubs(cases)
        jobs = ((case, i) for case in cases for i in range(self.options.repeat or case.repeat))
        with ThreadPoolExecutor(max_workers=self.options.parallel) as pool:
            return list(pool.map(lambda job: self._attempt(*job), jobs))

    def check_stubs(self, cases: Sequence[Case]) -> None:
        """Before anything runs: every stub names a tool of its case's workflow (else a SuiteError naming the one
        meant). A case whose workflow cannot be loaded is left to its attempt, which says why it cannot run."""
        problems: dict[str, Problem] = {}
        for case in cases:
            try:
                workflow = self._workflow(case)
                known = known_tools(workflow, ToolEnv.from_env(origin=case.origin), self.skills)
            except AgentRuntimeError:
                continue
            for name, why in stub_problems(workflow, case.stubs, known).items():
                problem = Problem(str(case.suite), f"{case.at or case.name}.stubs.{name}", why)
                problems.setdefault(str(problem), problem)  # a matrix's cells say it once
        if problems:
            raise SuiteError(list(problems.values()))

    def _attempt(self, case: Case, index: int) -> Attempt:
        attempt = Attempt(case, index)
        started = time.monotonic()
        try:
            workflow = self._workflow(case)
            self._turns(case, workflow, attempt)
        except AgentRuntimeError as error:  # the case could not run: said in the report, the suite goes on
            attempt.error = str(error).splitlines()[0][:500] if str(error) else type(error).__name__
        attempt.seconds = time.monotonic() - started
        if attempt.error is None:
            seen = Observed(attempt.status, attempt.answer, case.turns[-1], attempt.tool_calls)
            seen.model_calls, seen.cost_usd, seen.seconds = attempt.model_calls, attempt.cost_usd, attempt.seconds
            seen.found = attempt.found
            attempt.checks = evaluate(case.expect, seen, self._judge(workflow, attempt))
        if self.progress:
            self.progress(attempt)
        return attempt

    def _workflow(self, case: Case) -> Workflow:
        settings = {**case.settings, **self.options.settings}
        loaded = load_workflow(
            case.workflow, self.config.workflows_dir, skill_names=self.skills.names(), overrides=settings
        )
        return deployed(loaded, self.config)

    def _turns(self, case: Case, workflow: Workflow, attempt: Attempt) -> None:
        threads = ThreadStore(self.store)
        thread = f"eval-{_slug(case.id)}-{attempt.index}-{uuid.uuid4().hex[:8]}" if len(case.turns) > 1 else None
        first = new_run_id(EVAL_RUN_PREFIX)
        files = StoreFileStore(self.store, thread_partition(thread) if thread else run_partition(first))
        self._attach(case, files)
        env = ToolEnv.from_env(origin=case.origin)
        tools = stub_tools(workflow, case.stubs, env=env, skills=self.skills)
        workflow = without_stubbed(workflow, case.stubs)  # the sources the stubs cover are never connected
        for number, message in enumerate(case.turns):
            run_id = first if number == 0 else new_run_id(EVAL_RUN_PREFIX)
            state, version = threads.load(thread) if thread else (None, None)
            record = self._one_run(workflow, message, files, state, run_id, thread, tools, env, attempt)
            attempt.add(record)
            if thread and record.state is not None:
                threads.save(thread, record.state, expected_version=version)

    def _one_run(
        self,
        workflow: Workflow,
        message: str,
        files: FileStore,
        state: RunState | None,
        run_id: str,
        thread: str | None,
        tools: list[Tool],
        env: ToolEnv,
        attempt: Attempt,
    ) -> RunRecord:
        approver = CaseApprover(attempt.case.approve)
        with (
            open_model(workflow, self.config, notice=io.StringIO()) as model,
            workflow_sandbox(workflow, self.config) as sandbox,
        ):
            agent = build_agent(
                workflow,
                model,
                Services(
                    skills=self.skills,
                    config=self.config,
                    runs=RunStore(self.store),
                    sandbox=sandbox,
                    tool_env=env,
                    approver=approver,
                    thread_id=thread,
                ),
                files=files,
                hooks=[_Calls(attempt.tool_calls)],
                tools=tools,
            )
            return agent.run(message, state=new_turn(state, run_id), run_id=run_id)

    def _attach(self, case: Case, files: FileStore) -> None:
        for spec in case.files:
            if spec.path is not None:
                try:
                    data = spec.path.read_bytes()
                except OSError as error:
                    raise ConfigError(f"{spec.path}: {error.strerror or error}") from None
            else:
                key = json.dumps(spec.generate, sort_keys=True)
                with self._generating:  # a matrix's cells and repeats share one generated file
                    if key not in self._generated:
                        self._generated[key] = generate(spec.generate or {})
                    data = self._generated[key]
            files.put(data, name=spec.name)

    def _judge(self, workflow: Workflow, attempt: Attempt) -> Callable[[Judge, str, str], tuple[bool, str]]:
        def judge(spec: Judge, request: str, answer: str) -> tuple[bool, str]:
            name = self.options.judge_model or spec.model or workflow.model.name
            judged = dataclasses.replace(workflow, model=dataclasses.replace(workflow.model, name=name))
            messages = judge_messages(spec, request, answer)
            try:
                with open_model(
                    judged, dataclasses.replace(self.config, model_override=None), notice=io.StringIO()
                ) as model:
                    response = model.complete(ModelRequest(messages, max_output_tokens=400))
            except AgentRuntimeError as error:
                return False, f"the judge ({name}) failed: {error}"[:300]
            own = workflow.model.prices if name == workflow.model.name else None
            _charge_judge(attempt, response, messages, prices_for(name, own), name)
            return parse_verdict(response.text)

        return judge


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _charge_judge(
    attempt: Attempt, response: ModelResponse, messages: list[Message], prices: Prices | None, model: str
) -> None:
    """The judge's call, priced the way a run's calls are (RunRecord.add_call: estimated when the endpoint reports
    no usage or usage that is not valid), on the attempt's judge line, apart from the case's cost."""
    attempt.judge_calls += 1
    judged = RunRecord("judge", "judge", model, prices=prices)
    judged.add_call(
        response.to_record(), estimate=partial(estimate_usage, messages, response.text, response.tool_calls, model)
    )
    cost = judged.cost_usd()
    if cost is not None:
        attempt.judge_cost_usd = (attempt.judge_cost_usd or 0.0) + cost


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text)[:60].strip("-") or "case"
