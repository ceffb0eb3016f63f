"""Extraction speed and memory on one generated corpus (10, 100, 1,000 pages), each run in its own process.

DOCX: ours (lxml, parsed and walked a piece at a time, Markdown with structure) vs python-docx walking
paragraphs and tables.
PDF: ours (pypdf with page markers) vs pdfminer.six's extract_text, and vs pypdf on its own (the target: page
structure at no cost).
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import docx
from fpdf import FPDF

PAGES = (10, 100, 1000)
VOCAB = [
    f"{w}{n}" for w in ("retry", "queue", "tenant", "backoff", "jitter", "signature", "delivery") for n in range(50)
]
# Runs per format: a process on this machine lands at random in a fast or a ~1.5x slower state, so the cheap
# DOCX runs are many; pdfminer at 1,000 pages takes ~30 s a run.
RUNS = {"docx": 11, "pdf": 5}
MEASURE = textwrap.dedent(
    """
    import json, sys, time
    path, kind = sys.argv[1:3]
    data = open(path, "rb").read()
    # Imports first: a warm Lambda has done them; the comparison is of the extraction itself.
    if kind == "ours":  # what this format needs: pypdf alone adds ~25 MB of peak RSS
        from agent_runtime.extract import extract
        if path.endswith(".pdf"):
            from agent_runtime.extract import pdf as _pdf
            import pypdf
        else:
            from agent_runtime.extract import docx as _docx, docx_styles
            import lxml.etree
    elif kind == "python-docx":
        import docx
        from docx.table import Table

        def python_docx_text(path):
            # A function returning the text, as ours does: the document is released inside the timed region.
            document = docx.Document(path)
            parts = []
            for block in document.iter_inner_content():
                if isinstance(block, Table):
                    parts += [cell.text for row in block.rows for cell in row.cells]
                else:
                    parts.append(block.text)
            return "\\n\\n".join(parts)
    elif kind == "pypdf":
        import io
        from pypdf import PdfReader

        def pypdf_text(data):
            # pypdf on its own: every page's text, no page markers, no limits
            return "\\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    else:
        from pdfminer.high_level import extract_text
    started = time.perf_counter()
    if kind == "ours":
        chars = len(extract(data, path).text)
    elif kind == "python-docx":
        chars = len(python_docx_text(path))
    elif kind == "pypdf":
        chars = len(pypdf_text(data))
    else:
        chars = len(extract_text(path))
    seconds = time.perf_counter() - started
    peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
    print(json.dumps({"seconds": seconds, "peak": peak, "chars": chars}))
    """
)


def corpus(folder: Path, pages: int) -> tuple[Path, Path]:
    docx_path, pdf_path = folder / f"c{pages}.docx", folder / f"c{pages}.pdf"
    rng = random.Random(pages)
    document = docx.Document()
    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    for page in range(1, pages + 1):
        document.add_heading(f"Section {page}", level=2)
        pdf.add_page()
        for line in range(8):
            words = " ".join(rng.choice(VOCAB) for _ in range(24))
            text = f"Paragraph {line} of section {page}: {words}, id PROJ-{page}."
            document.add_paragraph(text, style="List Bullet" if line % 4 == 3 else None)
            pdf.multi_cell(0, 5, text, new_x="LMARGIN", new_y="NEXT")
        table = document.add_table(rows=4, cols=3)
        for row in range(4):
            for col in range(3):
                table.cell(row, col).text = f"r{row}c{col} p{page}"
    document.save(docx_path)
    pdf.output(str(pdf_path))
    return docx_path, pdf_path


def measure(path: Path, kind: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path), kind], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(path: Path, runs: int, *kinds: str) -> list[dict[str, float]]:
    """Medians per kind; the kinds alternate run by run, so the machine's drift falls on each alike."""
    samples: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    for _ in range(runs):
        for kind in kinds:
            samples[kind].append(measure(path, kind))
    return [
        {
            "seconds": statistics.median(s["seconds"] for s in samples[kind]),
            "peak": statistics.median(s["peak"] for s in samples[kind]),
            "chars": samples[kind][0]["chars"],
        }
        for kind in kinds
    ]


def test_extraction_speed(tmp_path: Path) -> None:
    runs = ", ".join(f"{fmt} {count}" for fmt, count in RUNS.items())
    print(f"\n\nExtraction on a generated corpus (medians of {runs} runs, each in its own process, alternating)")
    columns = ("pages", "format", "size MB", "ours", "baseline", "speed-up", "peak RSS ours/base")
    print(" | ".join(columns))
    for pages in PAGES:
        docx_path, pdf_path = corpus(tmp_path, pages)
        for fmt, path, baselines in (("docx", docx_path, ("python-docx",)), ("pdf", pdf_path, ("pdfminer", "pypdf"))):
            ours, *bases = run(path, RUNS[fmt], "ours", *baselines)
            size = path.stat().st_size / 2**20
            for baseline, base in zip(baselines, bases, strict=True):
                unit, ours_rate, base_rate = (
                    ("MB/s", size / ours["seconds"], size / base["seconds"])
                    if fmt == "docx"
                    else ("pages/s", pages / ours["seconds"], pages / base["seconds"])
                )
                speedup = base["seconds"] / ours["seconds"]
                print(
                    f"{pages} | {fmt} | {size:.2f} | {ours_rate:.1f} {unit} | {baseline} {base_rate:.1f} {unit} | "
                    f"{speedup:.2f}x | {ours['peak']:.0f}/{base['peak']:.0f} MB"
                )
