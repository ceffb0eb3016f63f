"""Hostile input and what must not come out: tools under the worker's memory limit, a PDF bomb, unsafe characters."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import unicodedata

from tests.conftest import REPO

LIMIT = 1 << 30

# A child process's start: the file and document tools as the model calls them (also the bench's).
TOOLS = """
import json, resource
from agent_runtime import RunContext, ToolRegistry
from agent_runtime.files.documents import DOCUMENT_TOOLS
from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.models import ToolCall
files = InMemoryFileStore()
tools = ToolRegistry([*FILE_TOOLS, *DOCUMENT_TOOLS])
ctx = RunContext("run-x", "wf", files)
def call(name, **args):
    return tools.execute(ToolCall("c1", name, json.dumps(args)), ctx).content
"""


def run_limited(code: str) -> subprocess.CompletedProcess[str]:
    limit = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))\n"
    script = limit + TOOLS + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO)


def bomb_pdf(text_bytes: int, pages: int = 1) -> bytes:
    """A small PDF whose pages share one FlateDecode content stream that inflates to ``text_bytes``."""
    import zlib

    line = b"BT /F1 12 Tf 72 712 Td (" + b"A" * 200 + b") Tj ET\n"
    stream = zlib.compress(line * (text_bytes // len(line)), 9)
    kids = " ".join(f"{4 + i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    font = "<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"
    objects += [f"<< /Type /Page /Parent 2 0 R /Contents 3 0 R /Resources {font} >>".encode()] * pages
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


BIDI_CONTROLS = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"}
MARKS = {"\u200e", "\u200f", "\u061c"}  # left-to-right, right-to-left and Arabic letter marks


def unsafe(char: str) -> bool:
    """What may steer a terminal or reorder a line: Unicode's controls (but the newline and tab), surrogates,
    non-characters, line and paragraph separators, bidi embeddings/overrides/isolates and marks."""
    code = ord(char)
    if char in "\n\t":
        return False
    category = unicodedata.category(char)
    noncharacter = 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE
    bidi = unicodedata.bidirectional(char) in BIDI_CONTROLS or char in MARKS
    return category in ("Cc", "Cs", "Zl", "Zp") or noncharacter or bidi
