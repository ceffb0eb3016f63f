"""Eval cases: YAML files beside the workflows (``evals/<workflow>.yaml`` or ``evals/<workflow>/*.yaml``).

A suite file holds ``cases:`` (and optional ``defaults:`` merged into each). A case gives what a person sends
(``message``, or ``turns`` of one thread), ``files``, the ``origin`` to simulate, ``stubs`` standing in for the
workflow's external tools, settings (``set``, ``matrix``), ``repeat``, and what must hold (``expect``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from ..sections import Report, check_keys, integer, text
from .approve import Approve, ApproveRule, parse_approve
from .exceptions import Problem, SuiteError
from .expect import Expect, Judge, ToolExpect, parse_expect, search, strings
from .stub_spec import Stub, StubRule, parse_stubs

__all__ = ["ApproveRule", "Case", "Expect", "Judge", "Stub", "StubRule", "ToolExpect", "search"]

CASE_KEYS = (
    "name",
    "message",
    "message_file",
    "turns",
    "files",
    "origin",
    "repeat",
    "set",
    "matrix",
    "stubs",
    "approve",
    "expect",
    "tags",
    "workflow",
)
ORIGINS = ("cli", "slack", "jira")
MAX_CELLS = 1_000  # cases a matrix may expand to (checked before any is built)
MAX_JOBS = 10_000  # attempts one eval may run: cases x repeat (checked before any runs)
MAX_NODES = 100_000  # values a suite's YAML may hold, aliases expanded (an alias bomb is refused, not walked)
MAX_FILE_BYTES = 100 << 20  # a file a case attaches
MAX_MESSAGE_BYTES = 5 << 20  # a message_file
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")


@dataclass(frozen=True)
class FileSpec:
    """An attachment: a file beside the suite (``path``), or one made for the case (``generate``)."""

    name: str
    path: Path | None = None
    generate: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Case:
    name: str
    workflow: str
    suite: Path
    turns: tuple[str, ...]
    expect: Expect
    files: tuple[FileSpec, ...] = ()
    origin: Mapping[str, str] = field(default_factory=lambda: {"source": "cli"})
    repeat: int = 1
    settings: Mapping[str, Any] = field(default_factory=dict)
    stubs: tuple[Stub, ...] = ()
    approve: Approve = "none"  # none, all, or the decisions call by call
    tags: tuple[str, ...] = ()
    variant: str = ""  # the matrix cell, such as "context.context_budget=8000"
    at: str = ""  # where it is in its suite file, such as "cases[2] (deploy-window)"

    @property
    def id(self) -> str:
        return f"{self.name}[{self.variant}]" if self.variant else self.name


def suite_files(workflow: str, evals_dir: Path) -> list[Path]:
    """A workflow's suite files: ``<workflow>.yaml`` and every YAML file in ``<workflow>/`` (sorted)."""
    found = [evals_dir / f"{workflow}{suffix}" for suffix in (".yaml", ".yml")]
    folder = evals_dir / workflow
    nested = sorted(p for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml")) if folder.is_dir() else []
    return [p for p in found if p.is_file()] + nested


def load_cases(workflow: str, paths: Sequence[Path]) -> list[Case]:
    """Every case of these suite files, matrices expanded; SuiteError lists every problem at once."""
    problems: list[Problem] = []
    cases: list[Case] = []
    for path in paths:
        cases += _load_file(path, workflow, problems)
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            problems.append(Problem(str(case.suite), f"cases.{case.name}", "two cases have this name"))
        seen.add(case.id)
    if problems:
        raise SuiteError(problems)
    return cases


def _load_file(path: Path, workflow: str, problems: list[Problem]) -> list[Case]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        problems.append(Problem(str(path), "(file)", f"cannot read: {error}"))
        return []
    except yaml.YAMLError as error:
        problems.append(Problem(str(path), "(file)", f"invalid YAML: {getattr(error, 'problem', None) or error}"))
        return []
    if not _bounded(data, MAX_NODES):
        problems.append(Problem(str(path), "(file)", f"more than {MAX_NODES:,} values once its aliases are expanded"))
        return []
    if not isinstance(data, Mapping) or not isinstance(data.get("cases"), list):
        problems.append(Problem(str(path), "cases", "a suite is a mapping with a list of cases under 'cases'"))
        return []
    check_keys("", data, ("workflow", "defaults", "cases"), lambda k, w: problems.append(Problem(str(path), k, w)))
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        problems.append(Problem(str(path), "defaults", "must be a mapping of case keys"))
        defaults = {}
    out: list[Case] = []
    for index, raw in enumerate(data["cases"]):
        if not isinstance(raw, Mapping):
            problems.append(Problem(str(path), f"cases[{index}]", "must be a mapping"))
            continue
        merged = {**defaults, **raw}
        where = f"cases[{index}]" + (f" ({raw['name']})" if isinstance(raw.get("name"), str) else "")

        def report(key: str, why: str, where: str = where) -> None:
            problems.append(Problem(str(path), f"{where}.{key}" if key else where, why))

        case = parse_case(merged, path, _workflow_ref(data.get("workflow"), path, workflow), report)
        if case is not None:
            out += expand_matrix(replace(case, at=where), merged.get("matrix"), report)
    return out


def _bounded(data: Any, limit: int) -> bool:
    """At most ``limit`` values, counting each use of a shared (aliased) one: stops counting at the limit."""
    stack, seen = [data], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > limit:
            return False
        if isinstance(node, Mapping):
            stack.extend(node.values())
            stack.extend(node.keys())
        elif isinstance(node, list):
            stack.extend(node)
    return True


def root_of(suite: Path) -> Path:
    """The folder a suite's file references must stay in: its project — the nearest folder above it with
    ``.git``, a ``pyproject.toml``, or both a ``workflows`` and an ``evals`` folder — else the folder above the
    suite's (``../examples`` beside an evals folder)."""
    for folder in suite.resolve().parents:
        marked = (folder / ".git").exists() or (folder / "pyproject.toml").is_file()
        if marked or ((folder / "workflows").is_dir() and (folder / "evals").is_dir()):
            return folder
    return suite.resolve().parent.parent


def inside(suite: Path, relative: str, key: str, report: Report, limit: int) -> Path | None:
    """``relative`` resolved from the suite's folder, if it names a regular file of at most ``limit`` bytes inside
    the suite's project; else None, with the reason reported (an absolute path, ``../../etc/passwd``, a device, a
    FIFO, a symlink out: all refused before anything is read)."""
    if Path(relative).is_absolute():
        report(key, f"{relative!r}: give a path relative to the suite file, not an absolute one")
        return None
    path, root = (suite.parent / relative).resolve(), root_of(suite)
    if not path.is_relative_to(root):
        report(key, f"{relative!r} is outside the suite's project ({root})")
        return None
    if not path.is_file():
        report(key, f"no such file: {path}" if not path.exists() else f"{path} is not a regular file")
        return None
    if path.stat().st_size > limit:
        report(key, f"{path} is {path.stat().st_size:,} bytes; at most {limit:,}")
        return None
    return path


def _workflow_ref(value: Any, suite: Path, default: str) -> str:
    """A suite's ``workflow:``: a name in the workflows folder, or a YAML path relative to the suite file."""
    if not isinstance(value, str) or not value:
        return default
    return str((suite.parent / value).resolve()) if value.endswith((".yaml", ".yml")) else value


def parse_case(data: Mapping[str, Any], suite: Path, workflow: str, report: Report) -> Case | None:
    before = _Counter(report)
    check_keys("", data, CASE_KEYS, before)
    name = text("", data, "name", before) or ""
    if name and not NAME.fullmatch(name):
        before("name", "use letters, digits, '.', '_' and '-' (at most 80)")
    turns = _turns(data, suite, before)
    case = Case(
        name=name,
        workflow=str(data.get("workflow") or workflow),
        suite=suite,
        turns=turns,
        expect=parse_expect(data.get("expect") or {}, before),
        files=tuple(_files(data.get("files") or [], suite, before)),
        origin=_origin(data.get("origin", "cli"), before),
        repeat=integer("", data, "repeat", 1, before, low=1, high=100),
        settings=_settings(data.get("set") or {}, "set", before),
        stubs=tuple(parse_stubs(data.get("stubs") or {}, before)),
        approve=parse_approve(data.get("approve"), before),
        tags=tuple(strings(data.get("tags") or [], "tags", before)),
    )
    return None if before.count else case


def expand_matrix(case: Case, matrix: Any, report: Report) -> list[Case]:
    """One case per combination of the matrix's values (``{key: [values…]}``), each with those settings."""
    if matrix is None:
        return [case]
    if not isinstance(matrix, Mapping) or not matrix or not all(isinstance(v, list) and v for v in matrix.values()):
        report("matrix", "must map dotted workflow keys to non-empty lists of values")
        return []
    keys = list(matrix)
    count = math.prod(len(v) for v in matrix.values())
    if count > MAX_CELLS:
        report("matrix", f"expands to {count:,} cases; at most {MAX_CELLS:,}")
        return []
    cells = []
    for values in itertools.product(*(matrix[k] for k in keys)):
        cell = dict(zip(keys, values, strict=True))
        variant = ",".join(f"{k}={v}" for k, v in cell.items())
        cells.append(replace(case, settings={**case.settings, **cell}, variant=variant))
    return cells


class _Counter:
    """Counts the problems a case reports (to drop the case) while passing them on."""

    def __init__(self, report: Report) -> None:
        self.report, self.count = report, 0

    def __call__(self, key: str, why: str) -> None:
        self.count += 1
        self.report(key, why)


def _turns(data: Mapping[str, Any], suite: Path, report: Report) -> tuple[str, ...]:
    if sum(key in data for key in ("message", "message_file", "turns")) != 1:
        report("message", "give one of message, message_file (a file beside the suite) or turns (one thread)")
        return ()
    if "message" in data:
        return (text("", data, "message", report) or "",)
    if "message_file" in data:
        relative = text("", data, "message_file", report) or ""
        path = inside(suite, relative, "message_file", report, MAX_MESSAGE_BYTES) if relative else None
        try:
            return (path.read_text(encoding="utf-8"),) if path else ()
        except (OSError, UnicodeDecodeError) as error:
            report("message_file", f"cannot read {path}: {error}")
            return ()
    turns = data["turns"]
    if not isinstance(turns, list) or not turns:
        report("turns", "must be a non-empty list of messages")
        return ()
    said = [_turn(turn, f"turns[{i}]", report) for i, turn in enumerate(turns)]
    return tuple(t for t in said if t) if all(said) else ()


def _turn(turn: Any, where: str, report: Report) -> str:
    """A message, or ``{message, generate}``: the message followed by a generated text (a long paste)."""
    from .generate import check_generator, generate

    if isinstance(turn, str) and turn.strip():
        return turn
    if isinstance(turn, Mapping) and isinstance(turn.get("message"), str) and isinstance(turn.get("generate"), Mapping):
        found = check_generator(turn["generate"])
        if turn["generate"].get("format", "txt") == "pdf":
            found.append("a message is text: format txt or md")
        for problem in found:
            report(f"{where}.generate", problem)
        return "" if found else turn["message"] + "\n" + generate(turn["generate"]).decode("utf-8")
    report(where, "must be a non-empty message, or {message, generate}")
    return ""


def _settings(value: Any, key: str, report: Report) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
        report(key, "must map dotted workflow keys (such as context.context_budget) to values")
        return {}
    return dict(value)


def _origin(value: Any, report: Report) -> dict[str, str]:
    """``cli``, ``slack`` or ``jira``, or a mapping with ``source`` and what a trigger would carry (channel,
    thread_ts, issue_key): the built-in tools default to that thread or issue."""
    found = {"source": value} if isinstance(value, str) else value
    if not isinstance(found, Mapping) or found.get("source") not in ORIGINS:
        report("origin", f"must be one of {', '.join(ORIGINS)}, or a mapping with source: one of them")
        return {"source": "cli"}
    if not all(isinstance(k, str) and isinstance(v, str | int | float | bool) for k, v in found.items()):
        report("origin", "its values are ids and names: strings or numbers, not lists or mappings")
        return {"source": "cli"}
    return {k: str(v) for k, v in found.items()}


def _files(value: Any, suite: Path, report: Report) -> list[FileSpec]:
    from .generate import check_generator  # the generators' own rules

    if not isinstance(value, list):
        report("files", "must be a list of paths (relative to the suite file) or {name, generate}")
        return []
    specs = []
    for i, item in enumerate(value):
        where = f"files[{i}]"
        if isinstance(item, str):
            path = inside(suite, item, where, report, MAX_FILE_BYTES)
            if path is not None:
                specs.append(FileSpec(path.name, path=path))
        elif (
            isinstance(item, Mapping)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("generate"), Mapping)
        ):
            problems = check_generator(item["generate"])
            for problem in problems:
                report(f"{where}.generate", problem)
            if not problems:
                specs.append(FileSpec(item["name"], generate=dict(item["generate"])))
        else:
            report(where, "must be a path, or a mapping with name and generate")
    return specs
