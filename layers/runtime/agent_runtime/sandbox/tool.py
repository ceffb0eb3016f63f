"""The ``python`` tool: code (and run files) in, a short report out; files the code writes become run files."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import PurePath
from typing import TYPE_CHECKING

from ..config import RuntimeConfig
from ..errors import AgentRuntimeError, ToolError
from ..run_context import RunContext
from ..workflows.sandbox import SandboxSettings
from .aws import LambdaSandbox
from .client import SandboxClient, SandboxFile, SandboxResult
from .exceptions import SandboxCancelled, SandboxError
from .local import LocalSandbox
from .outputs import SOURCE

if TYPE_CHECKING:  # the tools (pydantic) load with the agent that gets this tool: the worker's init needs sandbox_for
    from ..tools import Tool

MAX_INPUT_BYTES = 3 * 1024 * 1024  # base64 grows it to 4 MB: the function's request cap

DESCRIPTION = """Run Python 3 (Pyodide: the standard library only, no pip, no network) in an isolated sandbox.

Use it for exact arithmetic, statistics, dates and parsing data instead of guessing. Every call starts fresh: no
variables, imports or files survive between calls. The value of the last expression is returned as JSON, with
what the code printed. Files passed in by id are in the working directory under their names; files the code writes
there come back as new file ids. Limits per call: {seconds} s, {memory} MB."""


SkillFiles = Callable[[RunContext, str], tuple[str, bytes]]
SKILL_FILES = """ A loaded skill's scripts run by reference: pass skill_files=["<skill>/scripts/<file>.py"] and
they are in the working directory under skills/<skill>/ (run one with runpy.run_path, or exec its text)."""


def python_tool(sandbox: SandboxClient, settings: SandboxSettings, read_skill: SkillFiles | None = None) -> Tool:
    from ..tools import tool

    def python(ctx: RunContext, code: str, files: list[str] | None = None, skill_files: list[str] | None = None) -> str:
        """Run Python code in the sandbox.

        Args:
            code: The Python source. End with an expression to get its value back.
            files: Ids of run files to put in the working directory (by their names).
            skill_files: Files of loaded skills, as "<skill>/<path>" (for example a skill's scripts/ file).
        """
        inputs = _inputs(ctx, files or []) + _skill_inputs(ctx, skill_files or [], read_skill)
        try:
            result = sandbox.run(
                code,
                files=inputs,
                time_limit_seconds=settings.time_limit_seconds,
                memory_mb=settings.memory_mb,
                cancelled=lambda: ctx.stop() is not None,  # a stop ends the call now, not at its time limit
            )
        except SandboxCancelled:
            raise ToolError("not finished: the run was stopped during this call (the code was ended)") from None
        except SandboxError as error:
            raise ToolError(f"the sandbox is unavailable: {error}") from None
        if result.status in ("crashed", "invalid_request"):
            raise ToolError(f"the sandbox could not run this code ({result.status}): {result.error}")
        return report(result, [_store(ctx, item) for item in result.files], settings)

    text = DESCRIPTION.format(seconds=settings.time_limit_seconds, memory=settings.memory_mb)
    # A run's output cannot be read again without running the code again: it stays until compaction.
    return tool(python, description=text + (SKILL_FILES if read_skill else ""), maskable=False)


def _skill_inputs(ctx: RunContext, refs: Sequence[str], read: SkillFiles | None) -> list[SandboxFile]:
    if not refs:
        return []
    if read is None:
        raise ToolError("this workflow has no skills to take files from")
    try:
        return [SandboxFile(*read(ctx, ref)) for ref in dict.fromkeys(refs)]
    except AgentRuntimeError as error:
        raise ToolError(str(error)) from None


def _inputs(ctx: RunContext, ids: Sequence[str]) -> list[SandboxFile]:
    if ctx.files is None:
        raise ToolError("this run has no files")
    inputs: list[SandboxFile] = []
    names: set[str] = set()
    total = 0
    for file_id in dict.fromkeys(ids):
        meta = ctx.files.meta(file_id)
        total += meta.size_bytes
        if total > MAX_INPUT_BYTES:
            raise ToolError(
                f"the files passed in are over {MAX_INPUT_BYTES // 2**20} MB together: pass fewer, or cut what the "
                "code needs with file_regex/file_read and put it in the code"
            )
        name = PurePath(meta.name.replace("\\", "/")).name or meta.id
        name = f"{meta.id}-{name}" if name in names else name  # two attachments with one name both arrive
        names.add(name)
        inputs.append(SandboxFile(name, ctx.files.read(file_id)))
    return inputs


def _store(ctx: RunContext, item: SandboxFile) -> str:
    assert ctx.files is not None
    meta = ctx.files.put(item.data, name=item.name, source=SOURCE)
    return f"{item.name} -> {meta.id} ({meta.size_bytes:,} bytes)"


def report(result: SandboxResult, stored: Sequence[str], settings: SandboxSettings) -> str:
    """The tool result the model reads: status first, then the value, the output and the files."""
    run_ms = result.timings.get("run_ms")
    head = f"[python: {result.status}" + (f", {run_ms:.0f} ms" if isinstance(run_ms, (int, float)) else "") + "]"
    parts = [head]
    if result.status == "timeout":
        parts.append(f"Killed after the time limit ({settings.time_limit_seconds} s): do less per call.")
    elif result.status == "memory_limit":
        parts.append(f"Stopped at the memory limit ({settings.memory_mb} MB): process the data in smaller parts.")
    elif result.status == "error":
        parts.append((result.traceback or result.error or "").rstrip())
    elif result.result is not None:
        label = "result (repr)" if result.result_repr else "result"
        value = result.result if isinstance(result.result, str) else json.dumps(result.result, ensure_ascii=False)
        parts.append(f"{label}: {value}" + (" [truncated]" if result.result_truncated else ""))
    streams = (("stdout", result.stdout, result.stdout_truncated), ("stderr", result.stderr, result.stderr_truncated))
    for name, text, cut in streams:
        if text:
            parts.append(f"{name}:\n{text.rstrip()}" + ("\n[truncated]" if cut else ""))
    if stored:
        parts.append("files written (read them with file_read / file_regex):\n" + "\n".join(stored))
    if result.files_skipped:
        skipped = ", ".join(f"{f.get('name')} ({f.get('size', 0):,} bytes)" for f in result.files_skipped)
        parts.append(f"files not returned (over the size caps): {skipped}")
    return "\n".join(parts)


def sandbox_for(config: RuntimeConfig) -> SandboxClient | None:
    """The configured sandbox (``AGENT_SANDBOX``): the Lambda function, local Node, or none (``off``)."""
    if config.sandbox_mode == "lambda" and config.sandbox_function:
        return LambdaSandbox(config.sandbox_function)
    if config.sandbox_mode == "local":
        return LocalSandbox(config.sandbox_dir)
    return None


@contextmanager
def open_sandbox(config: RuntimeConfig) -> Iterator[SandboxClient | None]:
    """:func:`sandbox_for`, closed afterwards (a local sandbox's Node process ends)."""
    client = sandbox_for(config)
    try:
        yield client
    finally:
        if client is not None:
            client.close()
