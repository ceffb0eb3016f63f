"""Hostile input under an address-space limit: the test fails, not the machine, when a bound is missing.

Each attack runs in a child process under RLIMIT_AS (1 GiB, the worker's documented budget), through the tool
the model would call.
"""

from __future__ import annotations

import pytest

from tests.hostile_support import bomb_pdf, run_limited


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


@pytest.mark.timed  # a wall-time bound: run alone, never beside another worker
@pytest.mark.parametrize(("text_mb", "pages"), [(70, 1), (12, 300), (12, 1)])
def test_a_pdf_inflate_bomb_is_bounded_in_memory_and_time(text_mb: int, pages: int, tmp_path) -> None:
    """Was: a 68 KB PDF inflating to 70 MB peaked at 3.7 GB and 150 s; 300 pages sharing a stream, 82 s; and the
    time limit was checked only once a page's stream was parsed (12 MB in one page: 9 s against 5 s, seen in CI)."""
    path = tmp_path / "bomb.pdf"
    path.write_bytes(bomb_pdf(text_mb * 2**20, pages))
    assert path.stat().st_size < 400_000
    result = run_limited(
        f"""
        import time
        from agent_runtime.extract import Limits, extract, ExtractionError
        started = time.monotonic()
        try:
            text = extract(open({str(path)!r}, "rb").read(), "bomb.pdf", limits=Limits(max_seconds=5)).text
            print("ok", len(text))
        except ExtractionError as error:
            print("refused", error)
        print("seconds", round(time.monotonic() - started))
        """
    )
    assert result.returncode == 0, result.stderr[-800:]
    assert int(result.stdout.split("seconds")[1]) <= 8, result.stdout
    assert result.stdout.startswith(("ok", "refused")), result.stdout
