"""The demo's run page in a real browser: `make demo`'s run (the embedded model, the local store and sandbox),
written by `agent-runtime runs show RUN --html`, checked by html5lib's strict parser, then opened in Debian's
headless Chromium (installed by `make browser`): its screenshot shows the transcript and the chart, drawn."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import html5lib
import pytest
from PIL import Image

from tests.cli_support import DOCS, REPO, run_cli

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars")  # fmt: skip
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
USER_BLOCK = (0xE8, 0xF0, 0xFB)  # the transcript's user messages (pages/html.py STYLE)
HISTORY = (0x7F, 0xA7, 0xC9)  # the chart's "history" area (chart.COLORS)


def chromium() -> str:
    found = os.environ.get("CHROMIUM") or next(filter(None, map(shutil.which, BROWSERS)), None)
    if found is None:
        pytest.fail("no Chromium: `make browser` installs Debian's (make test does), or set CHROMIUM=/path/to/it")
    return found


def pixels_of(image: Image.Image, color: tuple[int, int, int]) -> list[int]:
    """The rows holding ``color`` (within a shade: antialiasing)."""
    rgb = image.convert("RGB")
    width, height = rgb.size
    data = rgb.load()
    assert data is not None
    return [y for y in range(0, height, 2) if any(
        all(abs(a - b) <= 3 for a, b in zip(data[x, y], color, strict=True)) for x in range(0, width, 3))]  # fmt: skip


def test_the_demo_runs_page_opens_in_chromium_with_its_transcript_and_chart(tmp_path: Path) -> None:
    env = {"AGENT_STATE_DIR": str(tmp_path / "state")}
    ticket = (REPO / "examples" / "tickets" / "PROJ-1423.txt").read_text()
    files = [arg for name in ("webhook-retries-design.md", "queue-consumer-design.md", "platform-handbook.md")
             for arg in ("--file", str(DOCS / name))]  # fmt: skip
    demo = run_cli("run", "document-feedback", "--message", ticket, *files, "--json", env=env)
    assert demo.returncode == 0, demo.stderr
    run_id = json.loads(demo.stdout)["run_id"]
    page_file = tmp_path / "run.html"
    written = run_cli("runs", "show", run_id, "--html", "-o", str(page_file), env=env)
    assert written.returncode == 0, written.stderr
    page = page_file.read_text(encoding="utf-8")
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)
    targets = re.findall(r'\b(?:src|href)\s*=\s*"([^"]*)"', page)
    assert targets and all(t.startswith("#") for t in targets) and "url(" not in page  # nothing fetched

    shot = tmp_path / "run.png"
    command = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1100,4000",
               f"--screenshot={shot}", page_file.as_uri()]  # fmt: skip
    subprocess.run(command, capture_output=True, timeout=120, check=True)
    image = Image.open(shot)
    assert image.size == (1100, 4000)
    chart_rows, transcript_rows = pixels_of(image, HISTORY), pixels_of(image, USER_BLOCK)
    assert len(chart_rows) > 40, "the chart's areas were not drawn"
    assert len(transcript_rows) > 40, "the transcript's messages were not drawn"
    assert min(chart_rows) < min(transcript_rows)  # the chart, then the transcript under it
    dump = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile2'}", "--dump-dom", page_file.as_uri()]
    dom = subprocess.run(dump, capture_output=True, text=True, timeout=120, check=True).stdout
    assert "<svg" in dom and "turn 1" in dom and run_id in dom and "webhook-retries-design.md" in dom
    assert f"{run_id}.sub1" in dom and "subagent/file_read:" in dom  # the helper's run, and the lines it read
