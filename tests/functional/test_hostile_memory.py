"""Hostile input under an address-space limit: the test fails, not the machine, when a bound is missing.

Each attack runs in a child process under RLIMIT_AS (1 GiB, the worker's documented budget), through the tool
the model would call.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

LIMIT = 1 << 30

PRELUDE = """
import resource
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from agent_runtime import RunContext, ToolRegistry
from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.models import ToolCall
import json
files = InMemoryFileStore()
tools = ToolRegistry(FILE_TOOLS)
ctx = RunContext("run-x", "wf", files)
def call(name, **args):
    return tools.execute(ToolCall("c1", name, json.dumps(args)), ctx).content
"""


def run_limited(code: str) -> subprocess.CompletedProcess[str]:
    script = PRELUDE.format(limit=LIMIT) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.mark.parametrize("pattern", ["(?:(?:a{1000}){1000}){1000}", "(?:(?:a{200}){200}){200}", "(?:x{300}){300}"])
def test_a_regex_that_is_expensive_to_compile_is_refused_before_compiling(pattern: str) -> None:
    """Was: 23.7 GB (killed) for the first, 2.2 GB in 4 s for the second: compilation ran outside every limit."""
    result = run_limited(
        f"""
        meta = files.put(b"aaaa\\n" * 10, name="a.txt")
        print(call("file_regex", id=meta.id, pattern={pattern!r}))
        """
    )
    assert result.returncode == 0, result.stderr[-800:]
    assert result.stdout.startswith("ERROR: the pattern's counted repeats multiply to about")


def test_ordinary_patterns_still_compile_and_match() -> None:
    result = run_limited(
        """
        meta = files.put(b"id 1,234 TODO\\nnothing\\n" * 10, name="a.txt")
        print(call("file_regex", id=meta.id, pattern=r"\\d{1,3}(?:,\\d{3})+|TODO|\\p{Lu}{4}", max_matches=2))
        """
    )
    assert result.returncode == 0, result.stderr[-800:]
    assert "2 matching line(s)" in result.stdout


@pytest.mark.parametrize(
    "read",
    [
        'call("file_read", id=meta.id)',
        'call("file_read", id=meta.id, start_byte=0)',
        'call("load_file", id=meta.id)',
        'call("file_read", id=one.id)',
        'call("file_regex", id=one.id, pattern="needle")',
    ],
)
def test_whole_file_reads_of_an_86_mb_log_stay_bounded(read: str) -> None:
    """Was: refused correctly, after loading the whole file: 1.4-1.5 GB against 227 MB for a 5-line read."""
    result = run_limited(
        f"""
        from agent_runtime.extract.tools import DOCUMENT_TOOLS
        for t in DOCUMENT_TOOLS:
            tools.register(t)
        row = b"2026-11-20T10:00:00Z INFO worker-3 delivered webhook id=wh-12345 latency=87ms status=200\\n"
        meta = files.put(row * (86 * 2**20 // len(row)), name="big.log")
        one = files.put(b"x" * (40 * 2**20) + b" needle", name="one-line.json")
        import resource
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = {read}
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(len(out), out[:200].splitlines()[0], grown // 1024)
        """
    )
    assert result.returncode == 0, result.stderr[-800:]
    size, *_, grown_mb = result.stdout.split()
    assert int(size) < 400_000 and int(grown_mb) < 300, result.stdout
