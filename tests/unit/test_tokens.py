from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest
import tiktoken
from agent_runtime import ConfigError
from agent_runtime import messages as m
from agent_runtime.context import TokenCounter, encoding_name_for, load_encoding
from agent_runtime.context import encodings as enc
from agent_runtime.context.coverage import add_interval, describe

SAMPLE = "Hello, wörld! 12345 tokens… <|endoftext|> naïve café — 東京 🚀\n\tindent  spaces"
URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_shipped_encoding_is_identical_to_tiktokens_own(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Feed tiktoken's official constructor the same file through its cache (no network), then compare.
    raw = gzip.decompress((enc.DATA_DIR / f"{name}.tiktoken.gz").read_bytes())
    (tmp_path / hashlib.sha1(URLS[name].encode()).hexdigest()).write_bytes(raw)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    from tiktoken_ext import openai_public

    official = tiktoken.Encoding(**getattr(openai_public, name)())
    ours = load_encoding(name)
    assert ours._pat_str == official._pat_str
    assert ours._special_tokens == official._special_tokens
    assert ours.n_vocab == official.n_vocab
    assert ours.encode(SAMPLE, disallowed_special=()) == official.encode(SAMPLE, disallowed_special=())


def test_corrupt_encoding_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    monkeypatch.setattr(enc, "DATA_DIR", tmp_path)
    enc.load_encoding.cache_clear()
    try:
        with pytest.raises(ConfigError, match="is corrupt: sha256"):
            enc.load_encoding("o200k_base")
        (tmp_path / "o200k_base.tiktoken.gz").write_bytes(b"not gzip")
        with pytest.raises(ConfigError, match="cannot read the shipped encoding"):
            enc.load_encoding("o200k_base")
    finally:
        enc.load_encoding.cache_clear()


def test_model_to_encoding() -> None:
    assert encoding_name_for("gpt-4o") == "o200k_base"
    assert encoding_name_for("gpt-4.1-mini") == "o200k_base"
    assert encoding_name_for("gpt-5") == "o200k_base"
    assert encoding_name_for("gpt-4") == "cl100k_base"
    assert encoding_name_for("gpt-3.5-turbo") == "cl100k_base"
    assert encoding_name_for("llama3.1:8b") == "o200k_base"  # unknown: the closest modern encoding


class CountingCounter(TokenCounter):
    def __init__(self) -> None:
        super().__init__("gpt-4o")
        self.calls = 0

    def text(self, text: str) -> int:
        self.calls += 1
        return super().text(text)


def test_message_counts_follow_the_cookbook_and_are_cached() -> None:
    counter = CountingCounter()
    message = m.user("hello world")
    expected = 3 + counter.text("user") + counter.text("hello world")
    assert counter.message(message) == expected
    calls = counter.calls
    assert counter.messages([message, message]) == 2 * expected + 3
    assert counter.calls == calls  # served from the cache
    assert counter.message(m.user("hello world")) == expected  # a new dict is counted afresh
    assert counter.calls > calls


def test_tool_calls_and_names_are_counted() -> None:
    counter = TokenCounter("gpt-4o")
    call: m.ToolCallDict = {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    plain = counter.message(m.assistant(None))
    assert counter.message(m.assistant(None, [call])) == plain + 3 + counter.text("f") + counter.text('{"a": 1}')


def test_tool_schema_tokens_grow_with_parameters() -> None:
    counter = TokenCounter("gpt-4o")
    bare = {"type": "function", "function": {"name": "f", "description": "Do it.", "parameters": {"properties": {}}}}
    rich = {
        "type": "function",
        "function": {
            "name": "f",
            "description": "Do it.",
            "parameters": {"properties": {"path": {"type": "string", "description": "Where."}}},
        },
    }
    assert counter.tools([]) == 0
    assert counter.tools([rich]) > counter.tools([bare]) > 12


def test_truncate_keeps_a_token_prefix() -> None:
    counter = TokenCounter("gpt-4o")
    text = "alpha beta gamma delta " * 50
    head = counter.truncate(text, 10)
    assert text.startswith(head) and counter.text(head) <= 10
    assert counter.truncate("short", 10) == "short"


def test_coverage_intervals_merge() -> None:
    spans: list[list[int]] = []
    for start, end in [(10, 20), (1, 5), (6, 8), (21, 30), (50, 50)]:
        spans = add_interval(spans, start, end)
    assert spans == [[1, 8], [10, 30], [50, 50]]
    assert describe(spans, 100, "lines") == "lines 1-8, 10-30, 50 of 100 (30%)"
    assert describe([], 100, "lines") == "lines none of 100"


def test_identifiers_are_extracted_from_user_and_assistant_text_only() -> None:
    from agent_runtime.context.identifiers import extract, missing_from

    history = [
        m.user('Fix PROJ-12 by 2026-09-14. Never touch "prod-db-1". Budget 12,500 EUR, see docs/spec.md.'),
        m.assistant("Reading https://wiki.example.com/x and file-abcdef123456."),
        m.tool_result("c1", "noise id DEAD-1 and 99,999 rows"),
    ]
    found = extract(history)
    for item in ("PROJ-12", "2026-09-14", "prod-db-1", "12,500", "docs/spec.md", "https://wiki.example.com/x"):
        assert item in found
    assert "file-abcdef123456" in found
    assert 'Never touch "prod-db-1".' in found  # the user's constraint, word for word
    assert "DEAD-1" not in found and "99,999" not in found  # only in tool output: left to the archive
    assert missing_from("fixed proj-12; docs/spec.md", ["PROJ-12", "docs/spec.md", "2026-09-14"]) == ["2026-09-14"]
