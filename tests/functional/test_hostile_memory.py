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
