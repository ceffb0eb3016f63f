"""Preload: text attachments' first KB and images (as image parts, priced by size) in the first message."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable
from dataclasses import replace

from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.images import image_size, image_tokens
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedServer, reply
from agent_runtime.workflows.files import FileSettings

from tests.conftest import make_workflow, model_for
from tests.documents_support import make_docx

Start = Callable[..., ScriptedServer]


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = b"".join(b"\0" + b"\0" * 3 * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_image_costs_follow_the_tile_rule() -> None:
    assert image_size(png(1024, 1024)) == (1024, 1024)
    assert image_tokens(1024, 1024) == 765  # 768x768: 4 tiles
    assert image_tokens(4096, 2048) == 1105  # fit 2048x1024, then 1536x768: 6 tiles
    assert image_tokens(4096, 2048, "low") == 85


def test_text_and_images_are_preloaded_binaries_are_not(scripted: Start) -> None:
    files = InMemoryFileStore()
    log = files.put("\n".join(f"line {n}" for n in range(1, 2001)).encode(), name="app.log")
    small = files.put(b"just a note\n", name="note.txt")
    doc = files.put(make_docx(), name="design.docx")
    image = files.put(png(1024, 1024), name="screenshot.png")
    server = scripted(reply("ok"))
    workflow = replace(make_workflow(), files=FileSettings(preload_kb=1, preload_images=True))
    record = build_agent(workflow, model_for(server), files=files).run("look")
    user = next(m for m in server.requests[0].messages if m["role"] == "user")
    parts = user["content"]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts[0] == "look"
    assert any(
        t.startswith(f'[preloaded "app.log" ({log.id}): lines 1-') and f'file_read(id="{log.id}", start_line=' in t
        for t in texts
    )
    assert any(t.startswith(f'[preloaded "note.txt" ({small.id}): the whole file]') for t in texts)
    assert not any(doc.id in t for t in texts)  # a DOCX is extracted, never preloaded as bytes
    [picture] = [p for p in parts if p["type"] == "image_url"]
    assert picture["image_url"]["url"].startswith("data:image/png;base64,")
    assert base64.b64decode(picture["image_url"]["url"].split(",", 1)[1]) == png(1024, 1024)
    status = server.requests[0].status_text()
    assert f'{log.id} "app.log"' in status and "read lines 1-" in status
    line = next(row for row in status.splitlines() if image.id in row)
    assert "preloaded" in line and "not preloaded" not in line
    # the image is priced by its size (765 tokens), not by its base64 length
    call = record.model_calls[0]["context"]["estimated_prompt_tokens"]
    assert 765 < call < 765 + 3_000


def test_an_image_attached_in_a_later_turn_of_a_thread_is_sent_as_an_image(scripted: Start) -> None:
    """Was: only the first turn preloaded; a Slack follow-up's screenshot never reached the model."""
    files = InMemoryFileStore()
    first_image = files.put(png(64, 64), name="first.png")
    server = scripted(reply("seen one"), reply("seen two"))
    workflow = replace(make_workflow(), files=FileSettings(preload_images=True))
    agent = build_agent(workflow, model_for(server), files=files)
    first = agent.run("look")
    second_image = files.put(png(128, 64), name="second.png")
    agent.run("and this one?", state=first.state)
    images = [
        [p for m in r.messages if m["role"] == "user" and isinstance(m["content"], list) for p in m["content"]]
        for r in server.requests
    ]
    urls = [[p["image_url"]["url"] for p in parts if p["type"] == "image_url"] for parts in images]
    assert len(urls[0]) == 1 and len(urls[1]) == 2  # the first turn's image stays; the new one joins
    assert base64.b64decode(urls[1][1].split(",", 1)[1]) == png(128, 64)
    status = server.requests[1].status_text()
    assert all(
        "not preloaded" not in row for row in status.splitlines() if first_image.id in row or second_image.id in row
    )
