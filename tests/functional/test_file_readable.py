"""Issue 54: a corrupt or binary attachment reached the model as raw bytes through file_read. Every tool that shows a
file's content (and the preload) goes through one gate (files/readable.py): a document is read as its extracted
text or is an error naming its type and why; any other file is text (the text test) or "binary: cannot be read as
text". The promise, over any bytes under any name: no tool decodes a binary file into the window, and none fails
past the tool (what the model reads is an answer or a tool error that names the file)."""

from __future__ import annotations

import codecs
import json
from dataclasses import replace
from typing import Any

from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.documents import DOCUMENT_TOOLS
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.models.base import ToolCall
from agent_runtime.run_context import RunContext
from agent_runtime.runtime import build_agent
from agent_runtime.testing import reply
from agent_runtime.tools import ToolRegistry
from agent_runtime.workflows.files import FileSettings
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make_workflow, model_for
from tests.documents_support import make_docx

REGISTRY = ToolRegistry([*FILE_TOOLS, *DOCUMENT_TOOLS])
CALLS = [("file_read", {}), ("file_regex", {"pattern": "."}), ("load_file", {}), ("extract_file", {})]
KINDS = {".pdf": "PDF", ".docx": "DOCX", ".pptx": "PPTX", ".xlsx": "XLSX"}
NAMES = st.sampled_from(
    ["report.pdf", "notes.docx", "deck.pptx", "sheet.xlsx", "nc54-corrupt.docx", "data.bin", "app.log", "plain"]
)
HEADS = st.sampled_from(
    [b"", b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n", b"PK\x03\x04", b"just text\n", b"<!doctype html"]
)


def outcome(files: InMemoryFileStore, name: str, file_id: str, args: dict[str, Any]) -> tuple[bool, str]:
    call = ToolCall(id="c1", name=name, arguments=json.dumps({"id": file_id, **args}))
    result = REGISTRY.execute(call, RunContext("r", "w", files))
    return result.is_error, result.content


def text_test(data: bytes) -> bool:
    """The text test as docs/files-and-skills.md states it, written apart from the gate's own."""
    sample = data[:8192]
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(sample, final=len(data) <= 8192)
    odd = text.count("\ufffd") + sum(c < " " and c not in "\t\n\r\f\x1b" for c in text)
    return b"\0" not in sample and odd <= len(sample) / 50


@settings(max_examples=40, deadline=None)
@given(name=NAMES, head=HEADS, body=st.binary(max_size=3000))
def test_no_tool_shows_a_binary_file_as_text_and_none_fails_past_the_tool(name: str, head: bytes, body: bytes) -> None:
    files = InMemoryFileStore()
    data = head + body
    meta = files.put(data, name=name)
    # A page (as extract sniffs one) is read as text by the file tools and as a page by extract_file: either way
    html = data[:512].lstrip().lower().startswith((b"<!doctype html", b"<html"))
    document = data.startswith((b"%PDF", b"PK\x03\x04")) or name[name.rfind(".") :] in KINDS
    for tool, args in CALLS:
        failed, content = outcome(files, tool, meta.id, args)
        assert f"tool {tool!r} failed" not in content  # a tool error the model reads, never a crash
        binary = "is binary" in content and "cannot be read as text" in content
        if failed:
            assert name in content, content  # names the file it could not read ...
            if document:
                assert any(kind in content for kind in [*KINDS.values(), "zip", "document"]), content
            else:
                assert binary or (html and "HTML" in content), content
        elif document:  # ... or shows the text extracted from the document, never its bytes
            assert ".md (" in content or "extracted" in content, content
        else:
            assert text_test(data) or (html and ("extracted" in content or ".md (" in content)), content


def test_the_newcomers_files_read_as_clear_errors_and_a_good_document_as_its_text() -> None:
    files = InMemoryFileStore()
    corrupt = files.put(bytes(range(256)) * 20, name="nc54-corrupt.docx")
    broken = files.put(
        b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\ngarbage \x00\x01\x02", name="b.pdf"
    )
    good = files.put(make_docx(), name="design.docx")
    blob = files.put(b"\x89PNG\r\n\x1a\n" + bytes(300), name="data.bin", mimetype="application/octet-stream")
    assert outcome(files, "file_read", corrupt.id, {})[1] == (
        f"ERROR: nc54-corrupt.docx ({corrupt.id}) cannot be read: the DOCX is corrupt: it does not begin as a DOCX "
        "file does (or it is not one)"
    )
    assert (
        "cannot be read: the PDF is corrupt or truncated"
        in outcome(files, "file_regex", broken.id, {"pattern": "x"})[1]
    )
    failed, text = outcome(files, "file_read", good.id, {})
    assert not failed and text.startswith("[design.docx.md (") and "# Retry design" in text
    assert outcome(files, "file_read", blob.id, {})[1] == (
        f"ERROR: data.bin ({blob.id}) is binary, 308 bytes, type application/octet-stream: it cannot be read as "
        "text (peek_file shows its bytes in hex)"
    )


def test_a_binary_file_named_as_text_is_not_preloaded_as_text(scripted: Any) -> None:
    files = InMemoryFileStore()
    fake = files.put(bytes(range(256)) * 4, name="notes.txt")
    server = scripted(reply("ok"))
    workflow = replace(make_workflow(), files=FileSettings(preload_kb=4))
    build_agent(workflow, model_for(server), files=files).run("look")
    user = next(m for m in server.requests[0].messages if m["role"] == "user")
    texts = [p["text"] for p in user["content"] if p["type"] == "text"]
    assert f"[not preloaded: notes.txt ({fake.id}) is binary, 1,024 bytes, type text/plain" in texts[1]
    assert "\ufffd" not in "".join(texts)
