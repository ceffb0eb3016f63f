"""What the command groups share: exit codes, reading inputs, printing a run's outcome, the stores."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

from ..approvals import Approver
from ..approvals.approvers import FixedApprover, TerminalApprover
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..files import FileInputError, FileStore
from ..record import RunRecord, RunStatus
from ..sandbox.outputs import save_files, written_since
from ..stores import RunStore

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


def load_files(paths: Sequence[str], store: FileStore) -> FileStore:
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
            return Path(value[1:]).read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            raise ConfigError(f"--message {value}: {error.strerror or error}") from None
    return value


def approver(choice: str | None) -> Approver:
    if choice is not None:
        return FixedApprover(choice == "all", f"--approve {choice}")
    if sys.stdin.isatty():
        return TerminalApprover(sys.stderr, sys.stdin)
    return FixedApprover(False, "nobody: not interactive (pass --approve all to run such calls)")


def save_outputs(files: FileStore, before: set[str], folder: Path) -> None:
    outputs = [(meta.name, files.read(meta.id)) for meta in written_since(files, before)]
    written, refused = save_files(outputs, folder)
    for path in written:
        print(f"agent-runtime: wrote {path} ({path.stat().st_size:,} bytes)", file=sys.stderr)
    for name in refused:
        print(f"agent-runtime: warning: not written, outside {folder}: {name!r}", file=sys.stderr)


def print_outcome(record: RunRecord, *, as_json: bool, footer: str | None = None, told: bool = False) -> None:
    """The answer (or the record) on stdout, why the run ended on stderr unless ``told`` already (Ctrl-C)."""
    if as_json:
        print(json.dumps(record.to_dict(), indent=2, ensure_ascii=False))
    elif record.final_answer is not None:
        print(record.final_answer + (f"\n\n{footer}" if footer else ""))
    if told:
        return
    if record.status is not RunStatus.COMPLETED:
        print(f"agent-runtime: run {record.status}: {record.stop_reason}", file=sys.stderr)
    elif record.stop_reason:
        print(f"agent-runtime: warning: {record.stop_reason}", file=sys.stderr)


def runs_store(config: RuntimeConfig) -> RunStore:
    """The local store, or S3 + DynamoDB when AGENT_TABLE and AGENT_BUCKET are set."""
    from ..stores.opening import open_store
    from ..triggers.config import TriggerConfig

    triggers = TriggerConfig.from_env()
    return RunStore(open_store(table=triggers.table, bucket=triggers.bucket, state_dir=config.state_dir))


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
