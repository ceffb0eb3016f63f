"""``agent-runtime eval WORKFLOW [CASES…]`` and ``agent-runtime eval add WORKFLOW --from-run RUN_ID``."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import RuntimeConfig
from ..errors import ConfigError
from ..ids import check_run_id
from .common import Commands, check_workflow, store_here

if TYPE_CHECKING:  # the evals pull in the whole runtime (openai): loaded when `eval` runs, not for `--help`
    from ..evals import Attempt, EvalOptions

ENV_EVALS_DIR = "AGENT_EVALS_DIR"
EPILOG = """\
examples:
  agent-runtime eval document-feedback
  agent-runtime eval jira-triage duplicate-* --repeat 3 --json before.json
  agent-runtime eval document-feedback --set context.context_budget=8000 --json after.json --compare before.json
  agent-runtime eval knowledge-answers --model gpt-4.1 --junit report.xml --threshold 0.9
  agent-runtime eval add document-feedback --from-run run-3f2a9c1d0e4b5a6f7c8d9e0f

Cases live in evals/<workflow>.yaml or evals/<workflow>/*.yaml (AGENT_EVALS_DIR). Each case is a normal run
in the local store: 'agent-runtime runs show RUN_ID' and 'runs chart' work on the run ids the report lists.

exit codes: 0 the pass rate reached --threshold, 1 it did not, 2 bad usage, suite or workflow"""


def add(commands: Commands) -> None:
    cmd = commands.add_parser(
        "eval",
        help="run a workflow's eval cases and report pass rates, tokens, cost and time",
        description="Run a workflow's eval cases (each a normal stored run, in parallel), check the answers and "
        "what the run did, and print a table; write JSON (to keep and --compare) and JUnit XML (for CI). "
        "'eval add WORKFLOW --from-run RUN_ID' turns a stored run into a case to edit.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmd.add_argument("workflow", metavar="WORKFLOW", help="the workflow whose cases to run (or 'add')")
    cmd.add_argument("cases", nargs="*", metavar="CASE", help="only these cases (names or globs, such as dup-*)")
    cmd.add_argument(
        "--dir",
        metavar="DIR",
        help=f"the evals folder (default: {ENV_EVALS_DIR}, else evals/ beside the workflows folder)",
    )
    cmd.add_argument("--parallel", type=int, default=4, metavar="N", help="cases run at once (default 4, at most 64)")
    cmd.add_argument(
        "--repeat", type=int, metavar="N", help="run every case N times (default: each case's repeat; at most 1,000)"
    )
    cmd.add_argument("--model", metavar="NAME", help="use this model instead of the workflow's (an A/B run)")
    cmd.add_argument("--judge-model", metavar="NAME", help="the model of every LLM-judge check")
    cmd.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a workflow key for every case, without editing the file (repeatable; the value is YAML): "
        "--set context.context_budget=8000 --set limits.max_tool_calls=10; a key or value the workflow refuses "
        "is bad usage, said before any case runs",
    )
    cmd.add_argument(
        "--tag", dest="tags", action="append", default=[], metavar="TAG", help="only cases with this tag (repeatable)"
    )
    cmd.add_argument("--json", metavar="FILE", help="write the report as JSON (keep it to --compare later)")
    cmd.add_argument("--junit", metavar="FILE", help="write JUnit XML (one test per case and attempt)")
    cmd.add_argument("--compare", metavar="REPORT", help="a stored JSON report to put beside this one")
    cmd.add_argument(
        "--threshold", type=float, default=1.0, metavar="X", help="exit 1 below this pass rate (default 1.0)"
    )
    cmd.add_argument("--list", action="store_true", help="list the cases and exit")
    cmd.add_argument("--from-run", metavar="RUN_ID", help="with 'add': the stored run to turn into a case")
    cmd.add_argument("--name", metavar="NAME", help="with 'add': the new case's name (default: from the run id)")
    cmd.add_argument("-q", "--quiet", action="store_true", help="no progress lines or warnings on stderr")
    cmd.set_defaults(handler=_cmd_eval)


def evals_dir(args: argparse.Namespace, config: RuntimeConfig) -> Path:
    """--dir, else AGENT_EVALS_DIR, else evals/ beside the workflows folder (the repo's, or yours)."""
    return Path(args.dir or os.environ.get(ENV_EVALS_DIR) or config.workflows_dir.parent / "evals")


def _cmd_eval(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..evals import EvalOptions, Runner, build_report, compare, load_cases, load_report, suite_files, table

    if args.workflow == "add":
        return _cmd_add(args, config)
    if args.from_run or args.name:
        raise ConfigError("--from-run and --name go with 'eval add WORKFLOW --from-run RUN_ID'")
    folder = evals_dir(args, config)
    paths = suite_files(args.workflow, folder)
    if not paths:
        raise _no_suite(args.workflow, folder, config)
    cases = [c for c in load_cases(args.workflow, paths) if _selected(c.name, c.id, c.tags, args)]
    if not cases:
        raise ConfigError(f"no case of {args.workflow!r} matches {' '.join(args.cases + args.tags)}")
    if args.list:
        for case in cases:
            print(f"{case.id:<48} {len(case.turns)} turn(s), {len(case.files)} file(s), repeat {case.repeat}")
        return 0
    if not 0 <= args.threshold <= 1:
        raise ConfigError("--threshold is a pass rate from 0 to 1")
    if args.repeat is not None and not 1 <= args.repeat <= MAX_REPEAT:
        raise ConfigError(f"--repeat is 1 to {MAX_REPEAT}")
    options = EvalOptions(args.parallel, args.repeat, args.model, _settings(args.settings), args.judge_model)
    _check_settings(args.settings, options.settings, {case.workflow for case in cases}, config)
    config.usable_state_dir(create=True)  # each case's threads and records: said once, before any case runs
    attempts = Runner(config, options, progress=None if args.quiet else _progress).run(cases)
    report = build_report(args.workflow, attempts, _meta(options, config, attempts))
    print(table(report))
    _write(args, report)
    if args.compare:
        print("\n" + compare(load_report(Path(args.compare)), report))
    return 0 if report["summary"]["pass_rate"] >= args.threshold else 1


def _no_suite(name: str, folder: Path, config: RuntimeConfig) -> ConfigError:
    """A workflow without cases is asked for them; a name that is neither a workflow nor a suite (a suite may
    name its workflow itself, as context-fidelity does) is said to be a typo, with the name it likely meant."""
    from ..workflows import available_workflows
    from ..workflows.loader import closest

    workflows = available_workflows(config.workflows_dir)
    if name in workflows:
        return ConfigError(f"no eval cases for {name!r}: write {folder / name}.yaml (see docs/evals.md)")
    suites = [p.stem for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml")]  # evals/<name>/: a workflow's
    meant = closest(name, [*workflows, *suites])
    if meant is not None:
        return ConfigError(f"no such workflow {name!r}; did you mean {meant!r}?")
    known = ", ".join(sorted({*workflows, *suites})) or "none"
    return ConfigError(f"no such workflow {name!r} (nor eval suite in {folder}); available: {known}")


MAX_REPEAT = 1_000  # attempts of one case (cases x repeat is bounded again by the runner)


def _selected(name: str, case_id: str, tags: tuple[str, ...], args: argparse.Namespace) -> bool:
    named = not args.cases or any(
        case_id == p or fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(case_id, p) for p in args.cases
    )
    return named and (not args.tags or bool(set(args.tags) & set(tags)))


def _settings(items: list[str]) -> dict[str, Any]:
    import yaml

    settings = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: use KEY=VALUE, such as context.context_budget=8000")
        try:
            settings[key.strip()] = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError as error:
            raise ConfigError(f"--set {item!r}: the value is not YAML: {error}") from None
    return settings


def _check_settings(given: list[str], settings: Mapping[str, Any], workflows: set[str], config: RuntimeConfig) -> None:
    """--set over each workflow its cases run, before any case does: a key the file does not take, or a value it
    refuses, is bad usage named by its --set (not every case failed "could not run"). A file refused without any
    --set is left to its cases, which say why they cannot run."""
    from ..errors import AgentRuntimeError
    from ..skills import SkillLibrary
    from ..workflows import WorkflowError, load_workflow

    skills = SkillLibrary(config.skills_dir).names()
    for name in sorted(workflows) if settings else []:
        try:
            load_workflow(name, config.workflows_dir, skill_names=skills, overrides=settings)
        except WorkflowError as error:
            try:
                load_workflow(name, config.workflows_dir, skill_names=skills)
            except AgentRuntimeError:
                continue
            problem = next((p for p in error.problems if _set_by(p.key, settings)), error.problems[0])
            key = _set_by(problem.key, settings)
            item = next((i for i in reversed(given) if i.partition("=")[0].strip() == key), " ".join(given))
            raise ConfigError(f"--set {item}: {problem.key}: {problem.why}") from None


def _set_by(key: str, settings: Mapping[str, Any]) -> str | None:
    """The --set key a problem at ``key`` is of: the same key, one inside it, or one it cannot be set inside."""
    return next((k for k in settings if key == k or key.startswith(f"{k}.") or k.startswith(f"{key}.")), None)


def _meta(options: EvalOptions, config: RuntimeConfig, attempts: list[Attempt]) -> dict[str, Any]:
    from ..evals.report import DEMO_ENDPOINT

    models = sorted({a.model for a in attempts if a.model})
    return {
        "model": ", ".join(models) or options.model or config.model_override or "(the workflow's)",
        "endpoint": DEMO_ENDPOINT if config.use_demo_model else os.environ.get("OPENAI_BASE_URL", "OpenAI"),
        "settings": dict(options.settings),
        "repeat": options.repeat,
    }


def _progress(attempt: Attempt) -> None:
    mark = "ok  " if attempt.passed else "FAIL"
    runs = ", ".join(attempt.run_ids) or attempt.error or ""
    print(f"{mark} {attempt.case.id} #{attempt.index + 1} ({attempt.seconds:.1f}s) {runs}", file=sys.stderr)


def _write(args: argparse.Namespace, report: dict[str, Any]) -> None:
    from ..evals import junit

    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"agent-runtime: wrote {args.json}", file=sys.stderr)
    if args.junit:
        Path(args.junit).write_text(junit(report), encoding="utf-8")
        print(f"agent-runtime: wrote {args.junit}", file=sys.stderr)


def _warn(text: str) -> None:
    print(f"agent-runtime: warning: {text}", file=sys.stderr)


def _cmd_add(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..evals.from_run import case_from_run

    if len(args.cases) != 1 or not args.from_run:
        raise ConfigError("usage: agent-runtime eval add WORKFLOW --from-run RUN_ID [--name NAME]")
    check_run_id(args.from_run)
    check_workflow(args.cases[0], config)
    store_here(config)  # its folder checked: a file as AGENT_STATE_DIR is one line
    path = case_from_run(args.cases[0], args.from_run, evals_dir(args, config), config, name=args.name, warn=_warn)
    print(
        f"agent-runtime: wrote {path}: edit its expect section, then: agent-runtime eval {args.cases[0]}",
        file=sys.stderr,
    )
    return 0
