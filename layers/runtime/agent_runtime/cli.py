"""``agent-runtime``: run workflows locally and check workflow files.

Exit codes: 0 completed, 1 the run failed, 2 bad usage or configuration, 3 stopped at the tool-call limit,
4 suspended at the deadline.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from . import __version__, telemetry
from .approvals import Approver
from .approvals.approvers import FixedApprover, TerminalApprover
from .config import RuntimeConfig
from .errors import AgentRuntimeError, ConfigError
from .extract import ExtractionError, extract
from .files import FileInputError, FileStore
from .hooks import Hook
from .record import RunRecord, RunStatus, new_run_id
from .runtime import answer_footer, build_agent, default_tools, deployed, open_model
from .sandbox import LocalSandbox, SandboxClient, SandboxUnavailableError, open_sandbox
from .sandbox.outputs import save_files, written_since
from .skills import SkillLibrary, skill_content
from .stores import LocalStore, RunStore, StoreError, StoreFileStore, ThreadStore, VersionConflictError
from .stores.hook import new_turn
from .stores.runs import check_thread_id, run_partition, thread_partition
from .toolsets import ToolEnv, validate_tools
from .trace import TraceHook
from .workflows import Workflow, WorkflowError, available_workflows, load_workflow

EXIT_CODES = {
    RunStatus.COMPLETED: 0,
    RunStatus.FAILED: 1,
    RunStatus.TOOL_CALL_LIMIT: 3,
    RunStatus.SUSPENDED: 4,
    RunStatus.AWAITING_APPROVAL: 4,
}
EXIT_USAGE = 2

DESCRIPTION = """\
Serverless agent runtime: run LLM workflows with a context engine built for huge files.

With neither OPENAI_API_KEY nor OPENAI_BASE_URL set, runs use the embedded demo model (a scripted
OpenAI-compatible server on 127.0.0.1). Set OPENAI_BASE_URL (and OPENAI_API_KEY if the endpoint needs
one) to use OpenAI, Azure-compatible gateways, Ollama, vLLM or LiteLLM."""

ENV_HELP = """\
environment:
  OPENAI_BASE_URL, OPENAI_API_KEY   the model endpoint (read by the openai client)
  AGENT_WORKFLOWS_DIR               where workflow names are looked up (default: the repo's workflows/)
  AGENT_STATE_DIR                   the local store: threads, checkpoints, run records, files (./.agent-runtime)
  AGENT_SKILLS_DIR                  the skills folder (default: the repo's skills/)
  AGENT_WORKFLOWS_URL               browsable URL of the workflows folder, for the prompt link in replies
  AGENT_LOG_PAYLOADS=1              show tool arguments in the trace (off by default)
  AGENT_MODEL_MAX_ATTEMPTS          attempts per model call on 429/5xx/timeouts (default: 4)
  AGENT_MODEL_TIMEOUT_SECONDS       timeout of one model call attempt (default: 120)
  AGENT_DEADLINE_MARGIN_SECONDS     in Lambda, suspend this long before the invocation ends (default: 30)
  AGENT_MODEL                       overrides every workflow's model.name (empty: each workflow's own)
  AGENT_SANDBOX                     where the python tool runs code: local (default), lambda, off
  AGENT_SANDBOX_FUNCTION            the sandbox Lambda function (name or ARN); implies AGENT_SANDBOX=lambda
  AGENT_SANDBOX_DIR                 the local sandbox (default: the repo's functions/sandbox)"""

RUN_EPILOG = """\
examples:
  agent-runtime run document-feedback --message "Review this" --file spec.md --file old-spec.md
  agent-runtime run ./my-workflow.yaml --message "hello" --json
  agent-runtime run document-feedback --thread PROJ-123 --message "and now?"
  agent-runtime run document-feedback --message "chart the latencies" --file log.txt --out-dir out/

exit codes: 0 completed, 1 run failed, 2 bad usage or configuration, 3 tool-call limit reached (the model's
last answer, made without tools, is printed), 4 suspended at the deadline"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-runtime",
        description=DESCRIPTION,
        epilog=ENV_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _add_run_command(commands)
    _add_workflows_commands(commands)
    _add_skills_commands(commands)
    _add_extract_command(commands)
    _add_runs_commands(commands)
    _add_sandbox_commands(commands)
    serve = commands.add_parser(
        "serve",
        help="serve the Slack/JIRA/runs webhooks locally, with the worker in-process",
        description="Serve /slack/events, /slack/interactivity, /jira/webhook and /runs on HOST:PORT with the worker "
        "in-process on the local store (AGENT_STATE_DIR). Secrets come from SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN, "
        "JIRA_WEBHOOK_SECRET, JIRA_SHARED_SECRET, JIRA_BASE_URL/JIRA_EMAIL/JIRA_API_TOKEN and API_KEY.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
    serve.add_argument("--port", type=int, default=8080, help="default: 8080")
    serve.set_defaults(handler=_cmd_serve)
    return parser


def _add_run_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "run",
        help="run a workflow on a message and print the final answer",
        description="Run a workflow on a message and print the final answer on stdout. "
        "A live trace (turns, tokens used/available, tool calls) goes to stderr.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("workflow", metavar="WORKFLOW", help="a workflow name in the workflows folder, or a YAML path")
    run.add_argument(
        "-m",
        "--message",
        required=True,
        help="the user's message; '-' reads it from stdin, '@FILE' from a file (a pasted log can be longer than a "
        "command line may hold)",
    )
    run.add_argument(
        "-f", "--file", dest="files", action="append", default=[], metavar="PATH", help="attach a file (repeatable)"
    )
    run.add_argument(
        "-t", "--thread", metavar="ID", help="continue (or start) a conversation thread stored under AGENT_STATE_DIR"
    )
    run.add_argument("--json", action="store_true", help="print the run record as JSON instead of the answer")
    run.add_argument("--out-dir", metavar="DIR", help="save the files the run's Python wrote here")
    run.add_argument("-q", "--quiet", action="store_true", help="no live trace on stderr")
    run.add_argument(
        "--footer",
        action="store_true",
        help="end the answer with the line a Slack or JIRA reply ends with, citing the workflow "
        "(a link with AGENT_WORKFLOWS_URL, else the workflow file)",
    )
    run.add_argument(
        "--approve",
        choices=("all", "none"),
        help="calls that need approval (the workflow's tools.approval): run them all, or deny them all; "
        "default: ask y/n in a terminal, deny when not interactive",
    )
    run.set_defaults(handler=_cmd_run)


def _add_workflows_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    workflows = commands.add_parser(
        "workflows", help="list or validate workflow files", description="List or validate workflow files."
    )
    wf_commands = workflows.add_subparsers(dest="workflows_command", metavar="COMMAND", required=True)
    wf_list = wf_commands.add_parser(
        "list",
        help="list the workflows in the workflows folder",
        description="List the workflows in the workflows folder (AGENT_WORKFLOWS_DIR) with their descriptions.",
    )
    wf_list.set_defaults(handler=_cmd_workflows_list)
    wf_validate = wf_commands.add_parser(
        "validate",
        help="validate workflows; exit 2 with one line per problem (file: key: why)",
        description="Validate workflow files. With no argument, validates every workflow in the workflows folder. "
        "Prints one line per problem (file: key: why) on stderr and exits 2 if any workflow is invalid.",
    )
    wf_validate.add_argument("refs", nargs="*", metavar="WORKFLOW", help="workflow names or YAML paths")
    wf_validate.add_argument(
        "--offline",
        action="store_true",
        help="check the tools section without reaching MCP servers or fetching remote OpenAPI documents",
    )
    wf_validate.set_defaults(handler=_cmd_workflows_validate)


def _add_extract_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    extract = commands.add_parser(
        "extract",
        help="print a document (PDF, DOCX, PPTX, XLSX, HTML, CSV, text) as Markdown-like text",
        description="Print a document as the extract_file tool sees it. Exits 2 with a clear message if the "
        "document cannot be read (corrupt, encrypted, hostile, unsupported).",
    )
    extract.add_argument("path", metavar="PATH", help="the document")
    extract.set_defaults(handler=_cmd_extract)


def _add_runs_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    runs = commands.add_parser(
        "runs", help="inspect stored runs", description="Inspect runs stored in AGENT_STATE_DIR."
    )
    runs_commands = runs.add_subparsers(dest="runs_command", metavar="COMMAND", required=True)
    runs_show = runs_commands.add_parser(
        "show", help="print a stored run record as JSON", description="Print a stored run record as JSON."
    )
    runs_show.add_argument("run_id", metavar="RUN_ID", help="the run id (printed in the trace and in --json)")
    runs_show.set_defaults(handler=_cmd_runs_show)
    runs_chart = runs_commands.add_parser(
        "chart",
        help="draw how a run used its window (SVG, or PNG when FILE ends in .png)",
        description="Draw a stored run: tokens by part of the request per model call (stacked), the window and the "
        "compaction point, compactions and maskings, tool calls per turn. SVG; PNG when FILE ends in .png (needs "
        "rsvg-convert or ImageMagick on the PATH).",
    )
    runs_chart.add_argument("run_id", metavar="RUN_ID")
    runs_chart.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write the chart")
    runs_chart.set_defaults(handler=_cmd_runs_chart)
    runs_list = runs_commands.add_parser(
        "list",
        help="list stored runs, newest first",
        description="List stored runs, newest first: id, workflow, status, model calls, tokens, cost estimate, "
        "started. Reads the local store, or S3 + DynamoDB when AGENT_TABLE and AGENT_BUCKET are set.",
    )
    runs_list.add_argument("--thread", metavar="ID", help="only this thread's runs")
    runs_list.add_argument("--status", choices=[str(s) for s in RunStatus], help="only runs that ended so")
    runs_list.add_argument("--limit", type=int, default=20, metavar="N", help="at most N runs (default 20)")
    runs_list.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    runs_list.set_defaults(handler=_cmd_runs_list)


def _add_sandbox_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sandbox = commands.add_parser(
        "sandbox", help="run Python in the sandbox", description="Sandboxed Python (AGENT_SANDBOX: local or lambda)."
    )
    sb_commands = sandbox.add_subparsers(dest="sandbox_command", metavar="COMMAND", required=True)
    sb_run = sb_commands.add_parser(
        "run",
        help="run a Python file through the same path the python tool uses",
        description="Run a Python file in the sandbox. Prints what it printed, then the value of its last "
        "expression. Exits 0 when it ran to the end, 1 on an error, timeout or memory limit, 2 if the sandbox "
        "is unavailable.",
    )
    sb_run.add_argument("path", metavar="FILE.py", help="the Python source")
    sb_run.add_argument(
        "-f", "--file", dest="files", action="append", default=[], metavar="PATH", help="an input file (repeatable)"
    )
    sb_run.add_argument("--out-dir", metavar="DIR", help="save the files the code wrote here")
    sb_run.add_argument("--time-limit-seconds", type=int, default=30, metavar="S", help="default: 30")
    sb_run.add_argument("--memory-mb", type=int, default=256, metavar="MB", help="default: 256")
    sb_run.add_argument("--json", action="store_true", help="print the whole result as JSON")
    sb_run.set_defaults(handler=_cmd_sandbox_run)


def _add_skills_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    skills = commands.add_parser(
        "skills",
        help="list, validate or show Agent Skills",
        description="Agent Skills (agentskills.io) in the skills folder (AGENT_SKILLS_DIR).",
    )
    sk_commands = skills.add_subparsers(dest="skills_command", metavar="COMMAND", required=True)
    sk_list = sk_commands.add_parser("list", help="list the skills", description="List the skills and what they do.")
    sk_list.add_argument("--json", action="store_true", help="print name, description and path as JSON")
    sk_list.set_defaults(handler=_cmd_skills_list)
    sk_validate = sk_commands.add_parser(
        "validate",
        help="check skills against the spec; exit 2 with one line per problem (file: field: why)",
        description="Check every skill folder strictly against the Agent Skills spec (frontmatter fields, name "
        "rules, description and compatibility lengths, links inside the skill). Exits 2 if anything is wrong.",
    )
    sk_validate.add_argument("dir", nargs="?", metavar="DIR", help="a skills folder (default: AGENT_SKILLS_DIR)")
    sk_validate.set_defaults(handler=_cmd_skills_validate)
    sk_show = sk_commands.add_parser(
        "show", help="print a skill as load_skill returns it", description="Print a skill as load_skill returns it."
    )
    sk_show.add_argument("name", metavar="NAME", help="the skill's name")
    sk_show.set_defaults(handler=_cmd_skills_show)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    try:
        config = RuntimeConfig.from_env()
        return int(args.handler(args, config))
    except ConfigError as error:
        print(f"agent-runtime: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except AgentRuntimeError as error:  # every error of the package is one line and an exit code, never a traceback
        print(f"agent-runtime: error: {error}", file=sys.stderr)
        return EXIT_CODES[RunStatus.FAILED]


def _load_files(paths: Sequence[str], store: FileStore) -> FileStore:
    for raw in paths:
        path = Path(raw)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise FileInputError(f"--file {raw}: {error.strerror or error}") from None
        store.put(data, name=path.name)
    return store


def _cmd_run(args: argparse.Namespace, config: RuntimeConfig) -> int:
    args.message = _message_text(args.message)
    if not args.message.strip():
        raise ConfigError("--message is empty: say what the workflow should do")
    skills = SkillLibrary(config.skills_dir)
    workflow = deployed(load_workflow(args.workflow, config.workflows_dir, skill_names=skills.names()), config)
    store = LocalStore(config.state_dir)
    threads, runs = ThreadStore(store), RunStore(store)
    state, version = threads.load(check_thread_id(args.thread)) if args.thread else (None, None)
    run_id = new_run_id()
    if args.thread:  # a turn killed mid-run is not lost: the thread goes on from its last checkpoint
        state = threads.unfinished(args.thread, runs) or state
        threads.mark_active(args.thread, run_id)
    # A thread keeps its files (attachments, virtual files, archives) with it, so ids in its history resolve.
    files = _load_files(
        args.files, StoreFileStore(store, thread_partition(args.thread) if args.thread else run_partition(run_id))
    )
    before = {meta.id for meta in files.list()}
    # The trace's last line leaves out why the run stopped: _print_outcome says it, once.
    trace = TraceHook(sys.stderr, show_payloads=config.log_payloads, reason=False)
    hooks: list[Hook] = [] if args.quiet else [trace]
    with open_model(workflow, config) as model, _sandbox_for(workflow, config) as sandbox:
        agent = build_agent(
            workflow,
            model,
            files=files,
            hooks=hooks,
            skills=skills,
            config=config,
            runs=runs,
            sandbox=sandbox,
            approver=_approver(args.approve),
            thread_id=args.thread,
        )
        record = agent.run(args.message, state=new_turn(state, run_id), run_id=run_id)
    telemetry.flush()
    footer = answer_footer(workflow, config.workflows_url, config.workflows_dir) if args.footer else None
    _print_outcome(record, as_json=args.json, footer=footer)  # the answer is shown even if the thread cannot keep it
    if args.thread and record.state is not None:
        try:
            threads.save(args.thread, record.state, expected_version=version)
        except VersionConflictError:
            raise StoreError(
                f"thread {args.thread!r} was updated by another run meanwhile; run again to continue from it"
            ) from None
        threads.mark_active(args.thread, None)
    if args.out_dir:
        _save_outputs(files, before, Path(args.out_dir))
    return EXIT_CODES.get(record.status, 1)


def _message_text(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@") and len(value) > 1:
        try:
            return Path(value[1:]).read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            raise ConfigError(f"--message {value}: {error.strerror or error}") from None
    return value


def _approver(choice: str | None) -> Approver:
    if choice is not None:
        return FixedApprover(choice == "all", f"--approve {choice}")
    if sys.stdin.isatty():
        return TerminalApprover(sys.stderr, sys.stdin)
    return FixedApprover(False, "nobody: not interactive (pass --approve all to run such calls)")


def _save_outputs(files: FileStore, before: set[str], folder: Path) -> None:
    outputs = [(meta.name, files.read(meta.id)) for meta in written_since(files, before)]
    written, refused = save_files(outputs, folder)
    for path in written:
        print(f"agent-runtime: wrote {path} ({path.stat().st_size:,} bytes)", file=sys.stderr)
    for name in refused:
        print(f"agent-runtime: warning: not written, outside {folder}: {name!r}", file=sys.stderr)


@contextmanager
def _sandbox_for(workflow: Workflow, config: RuntimeConfig) -> Iterator[SandboxClient | None]:
    """The sandbox when the workflow uses one; a missing local install drops the tool with a warning."""
    if not workflow.sandbox.enabled:
        yield None
        return
    with open_sandbox(config) as sandbox:
        if isinstance(sandbox, LocalSandbox):
            try:
                sandbox.check()
            except SandboxUnavailableError as error:
                print(f"agent-runtime: warning: the python tool is not offered: {error}", file=sys.stderr)
                sandbox = None
        yield sandbox


def _print_outcome(record: RunRecord, *, as_json: bool, footer: str | None = None) -> None:
    if as_json:
        print(json.dumps(record.to_dict(), indent=2, ensure_ascii=False))
    elif record.final_answer is not None:
        print(record.final_answer + (f"\n\n{footer}" if footer else ""))
    if record.status is not RunStatus.COMPLETED:
        print(f"agent-runtime: run {record.status}: {record.stop_reason}", file=sys.stderr)
    elif record.stop_reason:
        print(f"agent-runtime: warning: {record.stop_reason}", file=sys.stderr)


def _cmd_workflows_list(args: argparse.Namespace, config: RuntimeConfig) -> int:
    names = SkillLibrary(config.skills_dir).names()
    for name in available_workflows(config.workflows_dir):
        try:
            description = load_workflow(name, config.workflows_dir, skill_names=names).description
        except WorkflowError:
            description = "(invalid: run 'agent-runtime workflows validate')"
        print(f"{name:<24} {description}")
    return 0


def _cmd_workflows_validate(args: argparse.Namespace, config: RuntimeConfig) -> int:
    refs = args.refs or available_workflows(config.workflows_dir)
    if not refs:
        raise ConfigError(f"no workflows found in {config.workflows_dir}")
    failed = 0
    library = SkillLibrary(config.skills_dir)
    names = library.names()
    for ref in refs:
        try:
            workflow = load_workflow(ref, config.workflows_dir, skill_names=names)
        except WorkflowError as error:
            failed += 1
            print(error, file=sys.stderr)
            continue
        taken = [*default_tools(workflow, library).names(), "python", "subagent"]  # the runtime's own tool names
        problems = validate_tools(workflow, ToolEnv.from_env(), taken, offline=args.offline)
        for problem in problems:
            print(f"{workflow.path}: {problem}", file=sys.stderr)
        if problems:
            failed += 1
            continue
        print(f"ok  {workflow.path}")
    return EXIT_USAGE if failed else 0


def _cmd_skills_list(args: argparse.Namespace, config: RuntimeConfig) -> int:
    library = SkillLibrary(config.skills_dir)
    if args.json:
        rows = [{"name": s.name, "description": s.description, "path": str(s.path)} for s in library.skills.values()]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for skill in library.skills.values():
        print(f"{skill.name:<20} {skill.description}")
    return 0


def _cmd_skills_validate(args: argparse.Namespace, config: RuntimeConfig) -> int:
    library = SkillLibrary(Path(args.dir) if args.dir else config.skills_dir)
    problems = library.validate()
    for problem in problems:
        print(problem, file=sys.stderr)
    bad = {Path(p.file).parent.name for p in problems}
    for name in library.names():
        if name not in bad:
            print(f"ok  {name}")
    return EXIT_USAGE if problems else 0


def _cmd_skills_show(args: argparse.Namespace, config: RuntimeConfig) -> int:
    library = SkillLibrary(config.skills_dir)
    if args.name not in library.skills:
        raise ConfigError(f"no skill named {args.name!r}; available: {', '.join(library.names()) or 'none'}")
    print(skill_content(library, args.name))
    return 0


def _runs_store(config: RuntimeConfig) -> RunStore:
    from .triggers.config import TriggerConfig, store_for

    return RunStore(store_for(TriggerConfig.from_env(), config))


def _cmd_runs_show(args: argparse.Namespace, config: RuntimeConfig) -> int:
    record = _runs_store(config).load_record(args.run_id)
    if record is None:
        raise ConfigError(f"no stored run {args.run_id!r} in {config.state_dir}")
    print(json.dumps(record, indent=2, ensure_ascii=False))
    return 0


def _cmd_runs_chart(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from .chart import run_chart

    record = _runs_store(config).load_record(args.run_id)
    if record is None:
        raise ConfigError(f"no stored run {args.run_id!r}")
    try:
        svg = run_chart(record)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    target = Path(args.output)
    if target.suffix.lower() == ".png":
        _write_png(svg, target)
    else:
        target.write_text(svg, encoding="utf-8")
    print(f"agent-runtime: wrote {target}", file=sys.stderr)
    return 0


def _write_png(svg: str, target: Path) -> None:
    import shutil
    import subprocess
    import tempfile

    tool = shutil.which("rsvg-convert") or shutil.which("magick") or shutil.which("convert")
    if tool is None:
        raise ConfigError("a PNG needs rsvg-convert or ImageMagick on the PATH; write an .svg instead")
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as handle:
        handle.write(svg)
    command = (
        [tool, handle.name, "-o", str(target)] if tool.endswith("rsvg-convert") else [tool, handle.name, str(target)]
    )
    try:
        subprocess.run(command, check=True, capture_output=True, timeout=60)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        raise ConfigError(f"{Path(tool).name} could not convert the chart: {error}") from None
    finally:
        Path(handle.name).unlink(missing_ok=True)


def _cmd_runs_list(args: argparse.Namespace, config: RuntimeConfig) -> int:
    runs = _runs_store(config)
    rows = runs.list_runs(limit=max(1, args.limit), thread_id=args.thread, status=args.status)
    for row in rows:  # what people said of each answer (Slack's feedback buttons): +good/-bad
        verdicts = [item["verdict"] for item in runs.feedback(row["run_id"])]
        row["feedback"] = {"good": verdicts.count("good"), "bad": verdicts.count("bad")}
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    print(f"{'run':<30} {'workflow':<20} {'status':<17} {'calls':>5} {'tokens':>9} {'cost':>8} {'rated':>6}  started")
    for row in rows:
        cost = "-" if row.get("cost_usd") is None else f"${row['cost_usd']:.4f}"
        rated = f"+{row['feedback']['good']}/-{row['feedback']['bad']}" if any(row["feedback"].values()) else "-"
        print(f"{row['run_id']:<30} {row['workflow'][:20]:<20} {row['status']:<17} {row['model_calls']:>5} "
              f"{row['tokens']:>9,} {cost:>8} {rated:>6}  {row['started_at'][:19].replace('T', ' ')}")  # fmt: skip
    return 0


def _cmd_sandbox_run(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from .sandbox.cli import run_file  # Lambda handlers never load the command's imports

    return run_file(args, config)


def _cmd_serve(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from .service.serve import LocalServer
    from .triggers.config import TriggerConfig

    server = LocalServer(config, TriggerConfig.from_env(), host=args.host, port=args.port).start()
    routes = "/slack/events, /slack/interactivity, /jira/webhook and /runs"
    print(f"agent-runtime: serving {server.url}{routes} (Ctrl-C stops)", file=sys.stderr)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def _cmd_extract(args: argparse.Namespace, config: RuntimeConfig) -> int:
    path = Path(args.path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{args.path}: {error.strerror or error}") from None
    try:
        result = extract(data, path.name)
    except ExtractionError as error:
        raise ConfigError(f"{args.path}: {error}") from None
    sys.stdout.write(result.text)
    return 0
