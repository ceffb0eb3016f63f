"""What the command groups share: exit codes, reading inputs, printing a run's outcome, the stores."""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from .. import inert
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..record import RunStatus

if TYPE_CHECKING:  # what only `run` uses loads with it: every command imports this module, --help included
    from ..approvals import Approver
    from ..files import FileStore
    from ..record import RunRecord
    from ..stores import RunStore
    from ..stores.base import Store

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

EXIT_CODES = {
    RunStatus.COMPLETED: 0,
    RunStatus.FAILED: 1,
    RunStatus.TOOL_CALL_LIMIT: 3,
    RunStatus.COST_LIMIT: 5,
    RunStatus.SUSPENDED: 4,
    RunStatus.AWAITING_APPROVAL: 4,
    RunStatus.STOPPED: 6,
}
EXIT_USAGE = 2
# Every exit code, its meaning and what stdout of `run` holds: the one table (docs/cli.md is made from it, and
# `run --help` says the short forms); a code returned without a row here fails tests/unit/test_cli_reference.py.
EXIT_MEANINGS: tuple[tuple[int, str, str, str], ...] = (
    (0, "completed", "completed; any other command: done (`eval`: the pass rate reached `--threshold`)", "the answer"),
    (
        1,
        "the run failed",
        "the run failed (the model endpoint failed after retries, a store conflict, an internal "
        "error): one line on stderr, never a traceback; the run record says why. Other commands: `eval` below "
        "`--threshold`, `sandbox run` code that raised, `runs stop` a run that has ended, `workflows webhook-token` "
        "no token yet",
        "nothing",
    ),
    (
        2,
        "bad usage or configuration",
        "bad usage or configuration: a flag, a workflow file (`workflows validate`: "
        "one with an error; warnings leave the code alone), a workflow name (a typo is said with the name meant), a "
        "window too small for the system prompt and tools, `serve`'s port in use",
        "nothing",
    ),
    (
        3,
        "tool-call limit reached",
        "stopped at the tool-call limit: the model was asked once more, without tools, and its answer is printed",
        "the last answer",
    ),
    (4, "suspended", "suspended at the deadline, or waiting for an approval", "nothing"),
    (
        5,
        "spend limit reached",
        "stopped at the spend limit (`limits.max_cost`, `max_cost_per_thread_day`): the "
        "model was asked once more, without tools, if that fit; `--thread ID --max-cost N` goes on",
        "the last answer, if any",
    ),
    (
        6,
        "stopped",
        "stopped by a person (Slack's *Stop*, `runs stop RUN_ID`, `POST /runs/{run_id}/stop`): the run "
        "ended at its next step and keeps its work",
        "the last answer, if any",
    ),
    (
        130,
        "Ctrl-C",
        "stopped by Ctrl-C: the same stop, at once (one line on stderr, the record says stopped, the "
        "thread goes on from it); a second Ctrl-C quits there and then",
        "the last answer, if any",
    ),
)


def exit_codes_line() -> str:
    """The exit codes in one line, for a command's --help."""
    return "exit codes: " + ", ".join(f"{code} {short}" for code, short, _, _ in EXIT_MEANINGS)


def load_files(paths: Sequence[str], store: FileStore) -> FileStore:
    from ..files import FileInputError

    for raw in paths:
        path = Path(raw)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise FileInputError(f"--file {raw}: {error.strerror or error}") from None
        store.put(data, name=path.name)
    return store


def message_text(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@") and len(value) > 1:
        try:
            data = Path(value[1:]).read_bytes()
        except OSError as error:
            raise ConfigError(f"--message {value}: {error.strerror or error}") from None
        return _text_of(value, data)
    return value


def _text_of(value: str, data: bytes) -> str:
    """A message file's text; a binary file (a program, an image, a PDF) is refused, as the file tools refuse one
    attached with --file, not sent as 100k tokens of replacement characters."""
    from ..files.readable import TEXT_SAMPLE, looks_like_text

    if not looks_like_text(data[:TEXT_SAMPLE], whole=len(data) <= TEXT_SAMPLE):
        raise ConfigError(f"--message {value}: not text (binary); a document (PDF, DOCX...) goes with --file")
    return data.decode("utf-8", errors="replace")


def approver(choice: str | None) -> Approver:
    from ..approvals.approvers import FixedApprover, TerminalApprover

    if choice is not None:
        return FixedApprover(choice == "all", f"--approve {choice}")
    if sys.stdin.isatty():
        return TerminalApprover(sys.stderr, sys.stdin)
    return FixedApprover(False, "nobody: not interactive (pass --approve all to run such calls)")


def save_outputs(files: FileStore, before: set[str], folder: Path) -> None:
    from ..sandbox.outputs import save_files, written_since

    outputs = [(meta.name, files.read(meta.id)) for meta in written_since(files, before)]
    written, refused = save_files(outputs, folder)
    for path in written:
        print(f"agent-runtime: wrote {path} ({path.stat().st_size:,} bytes)", file=sys.stderr)
    for name in refused:
        print(f"agent-runtime: warning: not written, outside {folder}: {name!r}", file=sys.stderr)


def print_outcome(
    record: RunRecord,
    *,
    as_json: bool,
    footer: str | None = None,
    told: bool = False,
    answer: bool = True,
    thread: str | None = None,
) -> None:
    """The answer (inert on a terminal: a tool's result may have steered the model into an escape sequence; as it
    is into a pipe), or the record; why it did not complete on stderr, inert and without the process's secrets —
    unless ``told`` already (Ctrl-C). Not ``answer``: a failed run's answer stays in its record only. ``thread``: the
    thread the run was a turn of (in the JSON, for the next turn's -t)."""
    from ..redaction import scrub, scrubbed

    if as_json:
        print(inert.json_text(scrubbed(record.to_dict() | ({"thread_id": thread} if thread else {}))))
    elif answer and record.final_answer is not None:
        shown = record.final_answer + (f"\n\n{footer}" if footer else "")
        print(inert.terminal(shown) if sys.stdout.isatty() else shown)
    if told:
        return
    why = inert.terminal(scrub(str(record.stop_reason)))
    if record.status is not RunStatus.COMPLETED:
        print(f"agent-runtime: run {record.status}: {why}", file=sys.stderr)
    elif record.stop_reason:
        print(f"agent-runtime: warning: {why}", file=sys.stderr)


def runs_store(config: RuntimeConfig) -> RunStore:
    """The local store, or S3 + DynamoDB when AGENT_TABLE and AGENT_BUCKET are set."""
    from ..stores import RunStore

    return RunStore(store_here(config))


def store_here(config: RuntimeConfig) -> Store:
    """The store this process reads: S3 + DynamoDB when AGENT_TABLE and AGENT_BUCKET are set, else the local one,
    its folder checked first (a file as AGENT_STATE_DIR is one line, as every command that opens it says)."""
    from ..stores.opening import open_store
    from ..triggers.config import TriggerConfig

    triggers = TriggerConfig.from_env()
    if not (triggers.table and triggers.bucket):
        config.usable_state_dir()
    return open_store(table=triggers.table, bucket=triggers.bucket, state_dir=config.state_dir)


def program() -> str:
    """How to run this command again from any directory: the script's absolute path (``.venv/bin/agent-runtime``
    is not on a newcomer's PATH), or ``python -m agent_runtime`` with this interpreter."""
    import shlex

    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is None or script.name in ("__main__.py", "-c") or not script.exists():
        return f"{shlex.quote(sys.executable)} -m agent_runtime"
    return shlex.quote(str(script.resolve())) if "/" in sys.argv[0] else script.name


def store_location(config: RuntimeConfig) -> str:
    """Which store the CLI reads and writes: the local one depends on AGENT_STATE_DIR (default: ./.agent-runtime,
    where the command runs), so the path is said: an empty list elsewhere is not a mystery."""
    from ..triggers.config import TriggerConfig

    triggers = TriggerConfig.from_env()
    if triggers.table and triggers.bucket:
        return f"DynamoDB {triggers.table} + S3 {triggers.bucket}"
    return f"{config.state_dir.resolve()} (AGENT_STATE_DIR)"


def check_workflow(name: str, config: RuntimeConfig, *, strict: bool = True) -> None:
    """A workflow name taken on the command line: a typo is said with the name it likely meant ("no such
    workflow 'incident-helpr'; did you mean 'incident-helper'?"). ``strict``: the name must be a workflow here
    (eval); else (webhook-token, runs stats, which read a store a deployed stack writes too) only a likely typo
    of a workflow here is an error."""
    from ..workflows.loader import meant_workflow, resolve_workflow_path, unknown_workflow

    if strict:
        resolve_workflow_path(name, config.workflows_dir)
    elif meant_workflow(name, config.workflows_dir) is not None:
        raise ConfigError(unknown_workflow(name, config.workflows_dir))


def login() -> str:
    """You, as a person: ``local:<login>`` — who a stop from here (``runs stop``, Ctrl-C) is by, whom a CLI run acts
    for (its connections) and is counted for (``runs stats --by person``); one name for all of them. Records
    written before say ``cli:<login>`` for a stop: shown as they were written."""
    try:
        return f"local:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name for this uid (a container): still someone
        return "local:someone"
