"""``agent-runtime eval add WORKFLOW --from-run RUN_ID``: a stored run becomes a case to edit.

What the person sent (every turn of the thread), the files they attached, what the workflow's external tools
answered (as stubs, so the case replays offline), and the answer with its feedback as comments: a thumbs-down in
Slack becomes a regression case in one step; its ``expect`` is what the person edits.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..config import RuntimeConfig
from ..errors import ConfigError
from ..files import FileStore
from ..messages import text_of
from ..runtime import default_tools
from ..skills import SkillLibrary
from ..stores import RunStore, StoreFileStore
from ..stores.runs import run_partition, thread_partition
from ..views.run import StoredRun
from ..workflows import load_workflow
from .approve import Decided, approve_setting, decisions
from .expect import argument_text
from .stubs import Known, known_tools, source_of

POINTER = re.compile(r"^\[virtual file (file-[0-9a-f]+): user message")
KEY = re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b")


ONLY_STATUS = (
    "its expect checks only that the run completes (the run called none of the workflow's declared tools and "
    "its answer names no issue key of the request): it passes whatever the answer says until you add what a "
    "good answer holds (contains, identifiers, matches) or a judge rubric"
)


def case_from_run(
    workflow: str,
    run_id: str,
    evals_dir: Path,
    config: RuntimeConfig,
    *,
    name: str | None = None,
    warn: Callable[[str], None] = lambda _: None,
) -> Path:
    """The case written (``warn``: told when the checks it could derive from the run hold nothing of its answer)."""
    from ..stores.opening import open_store  # the local store, or S3 + DynamoDB when configured
    from ..triggers.config import TriggerConfig

    triggers = TriggerConfig.from_env()
    runs = RunStore(open_store(table=triggers.table, bucket=triggers.bucket, state_dir=config.state_dir))
    record, checkpoint = runs.load_run(run_id), runs.load_checkpoint(run_id)
    if record is None or checkpoint is None:
        raise ConfigError(f"no stored run {run_id!r} with a checkpoint in {config.state_dir}")
    if record.workflow != workflow:
        raise ConfigError(f"run {run_id} ran workflow {record.workflow!r}, not {workflow!r}")
    row = runs.summary(run_id)
    thread = row.thread_id if row is not None else None
    files = StoreFileStore(runs.store, thread_partition(thread) if thread else run_partition(run_id))
    name = name or f"from-{run_id}"
    folder = evals_dir / workflow
    target = folder / f"{name}.yaml"
    if target.exists():
        raise ConfigError(f"{target} exists: pass --name for another case name")
    messages = checkpoint[0].messages
    case: dict[str, Any] = {"name": name, **_turns(messages, files)}
    attached = _attachments(record, files, folder / "files" / name)
    if attached:
        case["files"] = [str(path.relative_to(folder)) for path in attached]
    own, known = _runtime_tools(workflow, config)
    decided = decisions(messages, checkpoint[0].context)
    stubs = _stubs(messages, own, decided, known, _mutating(runs, record, thread))
    if stubs:
        case["stubs"] = stubs
    if decided:
        case["approve"] = approve_setting(decided)
    case["expect"] = _expect(record, case, own, messages)
    only_status = set(case["expect"]) == {"status"}
    folder.mkdir(parents=True, exist_ok=True)
    target.write_text(_header(record, run_id, only_status) + _dump({"cases": [case]}), encoding="utf-8")
    if only_status:
        warn(f"{target}: {ONLY_STATUS}")
    return target


def _turns(messages: list[Any], files: FileStore) -> dict[str, Any]:
    from ..context.history import STATUS_MARK

    said = []
    for message in messages:
        if message["role"] != "user":
            continue
        text = text_of(message).split("\n\n" + STATUS_MARK, 1)[0]
        if text.startswith(STATUS_MARK):
            continue
        pointer = POINTER.match(text)
        if pointer:  # a long message the context engine kept as a file: the case gets it whole
            text = files.read(pointer.group(1)).decode("utf-8", errors="replace")
        said.append(text)
    if not said:
        raise ConfigError("the run's checkpoint holds no message from a person")
    return {"message": said[0]} if len(said) == 1 else {"turns": said}


def _attachments(record: StoredRun, files: FileStore, folder: Path) -> list[Path]:
    written = []
    for meta in record.files:
        if meta.source != "attachment":
            continue
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / Path(meta.name).name
        path.write_bytes(files.read(meta.id))
        written.append(path)
    return written


def _runtime_tools(workflow: str, config: RuntimeConfig) -> tuple[set[str], Known]:
    """The runtime's own tool names (never stubbed), and the workflow's tools as a stub finds them."""
    library = SkillLibrary(config.skills_dir)
    loaded = load_workflow(workflow, config.workflows_dir, skill_names=library.names())
    return {*default_tools(loaded, library).names(), "python", "subagent"}, known_tools(loaded, skills=library)


def _mutating(runs: RunStore, record: StoredRun, thread: str | None) -> dict[str, bool]:
    """Whether each tool called in the thread's runs was mutating, as the run saw it (a server's hint)."""
    records = [record] + [
        found for row in (runs.list_runs(thread_id=thread) if thread else []) if (found := runs.load_run(row.run_id))
    ]
    return {call.name: call.mutating for stored in records for call in stored.tool_calls if call.executed}


def _stubs(
    messages: list[Any], own: set[str], decided: dict[str, Decided], known: Known, mutating: dict[str, bool]
) -> dict[str, Any]:
    """Each external tool's answers in this run, keyed by its exact arguments (a call that never ran, denied or
    expired, has none). A tool the workflow defines is stubbed by its answers alone; a source's (an MCP
    server's) gets the parameters and ``mutating`` the run saw; one the workflow no longer has is ``extra``."""
    results = {m.get("tool_call_id"): text_of(m) for m in messages if m["role"] == "tool"}
    stubs: dict[str, Any] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            name = call["function"]["name"]
            if name in own or call["id"] not in results:
                continue
            try:
                args = json.loads(call["function"]["arguments"] or "{}")
            except ValueError:
                continue
            stub = stubs.setdefault(name, _defined(name, known, mutating))
            if "parameters" in stub:
                stub["parameters"]["properties"].update({k: {"type": _json_type(v)} for k, v in args.items()})
            if call["id"] in decided and decided[call["id"]].decision != "approved":
                continue
            when = {k: f"^{re.escape(argument_text(v))}$" for k, v in args.items()}
            rule = {"when": when, "returns": results[call["id"]]} if when else {"returns": results[call["id"]]}
            stub["rules"].append(rule)
    for stub in stubs.values():  # every call of it was refused: it answers none (the approve rules refuse them)
        stub["rules"] = stub["rules"] or [{"returns": "the run this case came from never ran this call", "error": True}]
    return stubs


def _defined(name: str, known: Known, mutating: dict[str, bool]) -> dict[str, Any]:
    if name in known.tools or name in known.made_in_run:
        return {"rules": []}
    schema = {"parameters": {"type": "object", "properties": {}}}
    extra = {} if source_of(known.sources, name) else {"extra": True}
    return {**extra, **schema, **({"mutating": mutating[name]} if name in mutating else {}), "rules": []}


def _json_type(value: Any) -> str:
    """The JSON Schema type of an argument the model sent (the stub's schema is inferred from its calls)."""
    kinds = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"))
    return next((kind for cls, kind in kinds if isinstance(value, cls)), "object")


def _expect(record: StoredRun, case: dict[str, Any], own: set[str], messages: list[Any]) -> dict[str, Any]:
    """What held in this run, to edit: its status, the keys of the request the answer named, the external tools it
    used. A run rated bad gets no content checks: say what a good answer does (contains, judge…)."""
    answer = record.final_answer or ""
    asked = " ".join(case.get("turns") or [case.get("message", "")])
    expect: dict[str, Any] = {"status": "completed"}
    bad = any(rating.verdict == "bad" for rating in record.feedback)
    keys = sorted({k for k in KEY.findall(asked) if k in answer})
    if keys and not bad:
        expect["identifiers"] = keys
    used = sorted({c["function"]["name"] for m in messages for c in m.get("tool_calls") or []} - own)
    if used:
        expect["tools_called"] = used
    return expect


def _header(record: StoredRun, run_id: str, only_status: bool) -> str:
    verdicts = ", ".join(f"{rating.verdict} by {rating.by}" for rating in record.feedback) or "none"
    answer = (record.final_answer or "(no answer)").splitlines()
    lines = [
        f"# A case made from run {run_id} ({record.workflow}, {record.model}, {record.status}).",
        f"# Feedback on its answer: {verdicts}. Its answer was:",
    ]
    lines += [f"#   {line}" for line in answer[:60]] + (["#   […]"] if len(answer) > 60 else [])
    lines += ["# Edit expect: what a good answer contains (contains, matches, identifiers) or a judge rubric."]
    lines += textwrap.wrap(f"Until then {ONLY_STATUS}.", 108, initial_indent="# ", subsequent_indent="# ") * only_status
    return "\n".join(lines) + "\n"


class _Dumper(yaml.SafeDumper):
    pass


def _block(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _block)


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)
