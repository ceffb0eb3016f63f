"""``agent-runtime sandbox run FILE.py``: the python tool's path, from the command line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import RuntimeConfig
from ..errors import ConfigError
from .common import Commands

if TYPE_CHECKING:
    from ..sandbox.client import SandboxResult


def add(commands: Commands) -> None:
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
    sb_run.set_defaults(handler=run_file)


def run_file(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..sandbox import SandboxError, SandboxFile, open_sandbox  # the sandbox's clients load when code runs

    code = _read(Path(args.path)).decode("utf-8", errors="replace")
    inputs = [SandboxFile(Path(raw).name, _read(Path(raw))) for raw in args.files]
    with open_sandbox(config) as sandbox:
        if sandbox is None:
            raise ConfigError("AGENT_SANDBOX=off: no sandbox to run code in")
        try:
            result = sandbox.run(
                code, files=inputs, time_limit_seconds=args.time_limit_seconds, memory_mb=args.memory_mb
            )
        except SandboxError as error:
            raise ConfigError(str(error)) from None
    if args.out_dir:
        _save(result, Path(args.out_dir))
    _print(result, as_json=args.json)
    if result.status in ("crashed", "invalid_request"):
        return 2
    return 0 if result.ok else 1


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: {error.strerror or error}") from None


def _save(result: SandboxResult, folder: Path) -> None:
    from ..sandbox.outputs import save_files

    _, refused = save_files(((item.name, item.data) for item in result.files), folder)
    if refused:
        raise ConfigError(f"refusing to write {refused[0]!r} outside {folder}")


def _print(result: SandboxResult, *, as_json: bool) -> None:
    if as_json:
        data = dataclasses.asdict(result)
        data["files"] = [{"name": f.name, "size": len(f.data)} for f in result.files]
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.ok and result.result is not None:
        print(result.result if isinstance(result.result, str) else json.dumps(result.result, ensure_ascii=False))
    if not result.ok:
        print(f"agent-runtime: sandbox {result.status}: {result.traceback or result.error}", file=sys.stderr)
    for item in result.files:
        print(f"agent-runtime: wrote {item.name} ({len(item.data):,} bytes)", file=sys.stderr)
