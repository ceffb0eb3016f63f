"""The context engine in a real loop: what the scripted server receives is exactly what would be sent."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import Agent, ToolRegistry, tool
from agent_runtime.context import ContextEngine, ContextSettings, TokenCounter
from agent_runtime.files import InMemoryFileStore, grep
from agent_runtime.files import tools as file_tools
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, calls, reply

from tests.conftest import make_workflow, model_for

Start = Callable[..., ScriptedServer]
COUNTER = TokenCounter("gpt-4o")


def exact_usage(body: dict[str, Any]) -> int:
    """What a server with the same tokenizer would report."""
    return COUNTER.messages(body["messages"]) + COUNTER.tools(body.get("tools", []))


def big_text(lines: int, marker_every: int = 0) -> str:
    rows = []
    for n in range(1, lines + 1):
        tag = " MARKER-" + str(n) if marker_every and n % marker_every == 0 else ""
        rows.append(f"row {n}: the quick brown fox jumps over the lazy dog{tag}")
    return "\n".join(rows)


@tool
def fetch_report() -> str:
    """Fetch the big report."""
    return big_text(3000, marker_every=500)


def agent_for(server: ScriptedServer, *, files: InMemoryFileStore | None = None, tools=(), **kwargs: Any) -> Agent:
    workflow = make_workflow(**kwargs)
    registry = ToolRegistry([*FILE_TOOLS, *tools])
    return Agent(workflow, model_for(server), tools=registry, hooks=[ContextEngine(workflow, registry)], files=files)


def status_of(request: ScriptedRequest) -> str:
    text = request.status_text()
    assert text, "every request ends with the status message"
    return text


def test_status_is_at_the_tail_and_the_prefix_stays_byte_stable(scripted: Start) -> None:
    server = scripted(call("fetch_report"), call("file_read", {"id": "x"}), reply("done"))
    # Rolling masking off: it rewrites the history when that pays (test_cache_breaks checks those breaks); here
    # the status alone must never reach the history.
    agent_for(server, tools=[fetch_report], context=ContextSettings(mask_threshold_tokens=0)).run("go")
    bodies = [[json.dumps(m, sort_keys=True) for m in r.messages[:-1]] for r in server.requests]
    for earlier, later in itertools.pairwise(bodies):
        assert later[: len(earlier)] == earlier  # history only grows at the end: prompt caching keeps working
    assert all(r.messages[-1]["role"] == "system" for r in server.requests)


def test_status_reports_exact_tokens_and_usage_drift_is_zero_with_the_same_tokenizer(scripted: Start) -> None:
    server = scripted(reply("hi"), token_counter=exact_usage)
    record = agent_for(server, window=100_000, output=2_000).run("hello")
    status = status_of(server.requests[0])
    used = int(re.search(r"tokens: ([\d,]+) used of ([\d,]+)", status).group(1).replace(",", ""))
    assert used == exact_usage(server.requests[0].body)
    assert "98,000 available for input" in status and "2,000 more reserved for the answer" in status
    assert "compaction at 78,400 tokens" in status
    assert re.search(r"split: system \d+ · tools \d+ · history \d+$", status, re.M)  # parts at 0 left out
    context = record.model_calls[0]["context"]
    assert (context["estimated_prompt_tokens"], context["drift"]) == (used, 0)


def test_drift_is_recorded_when_the_server_counts_differently(scripted: Start) -> None:
    server = scripted(reply("hi"), token_counter=lambda body: exact_usage(body) + 17)
    record = agent_for(server).run("hello")
    assert record.model_calls[0]["context"]["drift"] == 17


def test_large_tool_result_becomes_a_virtual_file_with_a_preview(scripted: Start) -> None:
    files = InMemoryFileStore()
    seen: dict[str, str] = {}

    def read_more(request: ScriptedRequest):
        [preview] = request.tool_results().values()
        seen["preview"] = preview
        file_id = re.search(r"\[virtual file (file-[0-9a-f]+)", preview).group(1)
        seen["id"] = file_id
        return call("file_read", {"id": file_id, "start_line": 1000, "end_line": 1002})

    def grep(request: ScriptedRequest):
        seen["range"] = next(iter(request.tool_results().values()))
        return call("file_regex", {"id": seen["id"], "pattern": r"MARKER-\d+", "max_matches": 3, "context": 1})

    def answer(request: ScriptedRequest):
        seen["regex"] = next(iter(request.tool_results().values()))
        seen["status"] = status_of(request)
        return reply("ok")

    server = scripted(call("fetch_report"), read_more, grep, answer)
    record = agent_for(server, files=files, tools=[fetch_report]).run("summarize the report")
    assert record.status == "completed"
    preview = seen["preview"]
    assert COUNTER.text(preview) < 1_200  # ~1,000-token preview plus the header and pointer
    assert preview.startswith(f"[virtual file {seen['id']}: result of fetch_report, ")
    assert "3,000 lines" in preview and f'file_read(id="{seen["id"]}", start_line=' in preview
    assert files.read(seen["id"]).decode() == big_text(3000, marker_every=500)  # nothing lost
    assert "\n1000\trow 1000: the quick brown fox" in seen["range"]
    assert "\n500:\trow 500:" in seen["regex"] and "\n499-\trow 499" in seen["regex"] and "\n501-\t" in seen["regex"]
    assert "3 matching line(s)" in seen["regex"] and "(stopped at max_matches)" in seen["regex"]
    # the status lists the file with its size and what has been read of it
    line = next(row for row in seen["status"].splitlines() if seen["id"] in row)
    assert "3,000 lines" in line and "read lines 1-" in line and "999-1002" in line and "499-501" in line
    reads = [e for e in record.events if e["type"] == "file_read"]
    assert [e["tool"] for e in reads] == ["file_read", "file_regex", "file_regex", "file_regex"]
    assert any(e["type"] == "virtual_file" and e["file"] == seen["id"] for e in record.events)


def test_large_user_message_becomes_a_virtual_file(scripted: Start) -> None:
    server = scripted(reply("ok"))
    agent_for(server).run("Please check this log:\n" + big_text(2000))
    user = next(m for m in server.requests[0].messages if m["role"] == "user")
    assert user["content"].startswith("[virtual file file-") and "user message" in user["content"]
    assert COUNTER.text(user["content"]) < 1_200


def test_small_results_stay_inline(scripted: Start) -> None:
    @tool
    def small() -> str:
        """A small result."""
        return "tiny"

    server = scripted(call("small"), lambda r: reply(next(iter(r.tool_results().values()))))
    record = agent_for(server, tools=[small]).run("go")
    assert record.final_answer == "tiny"


def test_thresholds_come_from_the_workflow(scripted: Start) -> None:
    @tool
    def medium() -> str:
        """A medium result."""
        return big_text(100)

    settings = ContextSettings(virtual_file_threshold_tokens=500, virtual_file_preview_tokens=100)
    server = scripted(call("medium"), lambda r: reply(next(iter(r.tool_results().values()))[:40]))
    record = agent_for(server, tools=[medium], context=settings).run("go")
    assert record.final_answer.startswith("[virtual file ")


def test_file_read_returns_what_fits_and_where_to_continue_until_the_whole_file_is_read(scripted: Start) -> None:
    """A read larger than the budget is not refused: it returns the largest range that fits and the pointer,
    and following the pointers reads the whole file in an 8k window without a failed run."""
    files = InMemoryFileStore()
    meta = files.put(big_text(2000).encode(), name="log.txt")
    seen: list[str] = []

    def follow(request: ScriptedRequest):
        if request.is_compaction():
            return reply("## Current work\nReading log.txt in parts.")
        if not request.tool_results():
            return call("file_read", {"id": meta.id})
        [result] = request.tool_results().values()
        seen.append(result)
        pointer = re.search(r"start_line=(\d+)\) after using these", result.split("\n", 1)[0])
        if pointer is None:
            return reply(f"read {len(seen)} parts")
        return call("file_read", {"id": meta.id, "start_line": int(pointer.group(1))})

    server = scripted(intercept=follow)
    record = agent_for(server, files=files, window=8_000, output=1_000).run("read it all")
    assert record.status == "completed", record.stop_reason
    first = seen[0].split("\n", 1)[0]
    assert re.match(r"\[log.txt \(file-[0-9a-f]+\) lines 1-(\d+) of 2000; lines \d+-2000 did not fit", first)
    shown = [int(row.split("\t", 1)[0]) for part in seen for row in part.split("\n")[1:]]
    assert shown == list(range(1, 2001))  # every line exactly once, in order
    assert all(r.status_text() for r in server.requests)


def test_file_read_by_bytes_and_errors(scripted: Start) -> None:
    files = InMemoryFileStore()
    meta = files.put(b"0123456789abcdef", name="hex.txt")
    server = scripted(
        call("file_read", {"id": meta.id, "start_byte": 4, "end_byte": 8}),
        call("file_read", {"id": meta.id, "start_line": 1, "start_byte": 2}),
        call("file_read", {"id": "file-000000000000"}),
        lambda r: reply("done"),
    )
    record = agent_for(server, files=files).run("read")
    results = [next(iter(r.tool_results().values())) for r in server.requests[1:]]
    assert results[0] == f"[hex.txt ({meta.id}) bytes 4-8 of 16]\n4567"
    assert results[1] == "ERROR: give a line range or a byte range, not both"
    assert results[2].startswith("ERROR: no file with id 'file-000000000000' (known ids: ")
    assert record.status == "completed"


def test_file_regex_stops_a_pathological_pattern(scripted: Start, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep, "REGEX_LINE_LIMIT", 0.3)
    files = InMemoryFileStore()
    meta = files.put(("a" * 40 + "b\n").encode() * 3, name="evil.txt")
    server = scripted(
        call("file_regex", {"id": meta.id, "pattern": "^(a|aa)+$"}),
        call("file_regex", {"id": meta.id, "pattern": "(unclosed"}),
        lambda r: reply("done"),
    )
    agent_for(server, files=files).run("search")
    first = next(iter(server.requests[1].tool_results().values()))
    second = next(iter(server.requests[2].tool_results().values()))
    assert first.startswith("ERROR: the pattern ran past the 0.3 s limit on line 1 ")
    assert "catastrophic backtracking" in first
    assert second.startswith("ERROR: invalid pattern '(unclosed'")


def test_file_regex_streams_large_files_in_chunks(scripted: Start) -> None:
    files = InMemoryFileStore()
    text = big_text(60_000, marker_every=20_000)  # ~4 MB: several 1 MiB chunks, lines split across them
    meta = files.put(text.encode(), name="huge.log")
    server = scripted(call("file_regex", {"id": meta.id, "pattern": "MARKER"}), lambda r: reply("done"))
    agent_for(server, files=files).run("find")
    result = next(iter(server.requests[1].tool_results().values()))
    assert "3 matching line(s)" in result and "60,000 lines scanned" in result
    assert [int(n) for n in re.findall(r"^(\d+):", result, re.MULTILINE)] == [20000, 40000, 60000]


def test_parallel_file_reads_share_the_ledger_safely(scripted: Start) -> None:
    # Parallel calls ask for the budget at the same moment; the window tally must not double-count them.
    files = InMemoryFileStore()
    metas = [files.put(big_text(50 + n).encode(), name=f"doc{n}.txt") for n in range(4)]
    server = scripted(
        calls(*[("file_read", {"id": meta.id}) for meta in metas]),
        calls(*[("file_read", {"id": meta.id, "start_line": 2, "end_line": 3}) for meta in metas]),
        reply("done"),
    )
    record = agent_for(server, files=files).run("read them all")
    assert record.status == "completed", record.stop_reason


def test_a_range_read_does_not_stream_the_whole_file_once_its_size_is_known() -> None:
    from agent_runtime import RunContext
    from agent_runtime.files.readable import TEXT_SAMPLE
    from agent_runtime.files.store import CHUNK_SIZE

    class CountingStore(InMemoryFileStore):
        read_bytes = 0

        def _read(self, file_id: str, start: int, end: int) -> bytes:
            self.read_bytes += end - start
            return super()._read(file_id, start, end)

    class KnownSizes:  # the ledger's answers, as the context engine gives them once a file was sized
        def remaining_tokens(self) -> int:
            return 100_000

        def count(self, text: str) -> int:
            return COUNTER.text(text)

        def file_lines(self, file_id: str) -> int:
            return 120_000

        def record_read(self, file_id: str, **kwargs: object) -> None:
            return None

    files = CountingStore()
    meta = files.put(big_text(120_000).encode(), name="huge.log")  # ~7 MB
    result = file_tools.file_read.invoke(
        {"id": meta.id, "start_line": 10, "end_line": 12}, RunContext("r", "w", files, ledger=KnownSizes())
    )
    assert result.startswith(f"[huge.log ({meta.id}) lines 10-12 of 120000]")
    assert files.read_bytes <= CHUNK_SIZE + TEXT_SAMPLE  # one chunk and the text test's sample, not 7 MB


def test_extract_file_makes_a_new_file_the_file_tools_can_read(scripted: Start) -> None:
    from agent_runtime.files.documents import DOCUMENT_TOOLS

    from tests.documents_support import make_docx

    files = InMemoryFileStore()
    source = files.put(make_docx(), name="design.docx")
    seen: dict[str, str] = {}

    def read_extracted(request: ScriptedRequest):
        result = next(iter(request.tool_results().values()))
        seen["extract"] = result
        new_id = re.search(r"file (file-[0-9a-f]+)", result).group(1)
        seen["id"] = new_id
        return call("file_regex", {"id": new_id, "pattern": "^#"})

    server = scripted(
        call("extract_file", {"id": source.id}),
        read_extracted,
        call("extract_file", {"id": source.id}),
        call("load_file", {"id": source.id}),
        call("peek_file", {"id": source.id, "start": 0, "stop": 4}),
        lambda r: reply("done"),
    )
    agent_for(server, files=files, tools=DOCUMENT_TOOLS).run("review the docx")
    results = [next(iter(r.tool_results().values())) for r in server.requests[2:]]
    assert seen["extract"].startswith(f"[extracted from design.docx (docx): file {seen['id']}, ")
    assert "# Retry design" in seen["extract"]
    assert "1:\t# Retry design" in results[0] and "## Goals" in results[0]
    assert results[1].startswith(f"[already extracted: file {seen['id']}")
    assert results[2].startswith(f"[design.docx.md ({seen['id']}), whole file]\n# Retry design")  # its text
    assert results[3].endswith("]\n50 4b 03 04")  # "PK\x03\x04", the zip signature, as hex
    assert files.meta(seen["id"]).source == "extracted"


def test_extract_cli(tmp_path: Path) -> None:
    from tests.cli_support import run_cli
    from tests.documents_support import make_docx

    path = tmp_path / "design.docx"
    path.write_bytes(make_docx())
    result = run_cli("extract", str(path))
    assert result.returncode == 0 and result.stdout.startswith("# Retry design")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n garbage")
    failed = run_cli("extract", str(broken))
    assert failed.returncode == 2 and "the PDF is corrupt or truncated" in failed.stderr
