"""Files made for a case: a long log or a long document with a detail planted at a chosen depth.

Deterministic (seeded), so a case reads the same file every time, and sized in tokens (o200k), so a suite can
say "a 100k-token log" and mean it. ``plant`` lines are what the answer depends on; ``at`` (0 to 1) is how deep.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

KINDS = ("log", "document")
FORMATS = ("txt", "md", "pdf")
SERVICES = ("api", "billing", "search", "auth", "webhooks", "ledger", "mailer", "export")
VERBS = ("handled", "queued", "retried", "served", "validated", "cached", "forwarded", "scheduled")
TOPICS = (
    "Definitions",
    "Scope",
    "Service levels",
    "Fees",
    "Reporting",
    "Data handling",
    "Security",
    "Audits",
    "Subcontractors",
    "Warranties",
    "Liability",
    "Termination",
    "Notices",
    "Governing law",
)
WORDS = (
    "the supplier",
    "the customer",
    "shall",
    "reasonable",
    "notice",
    "period",
    "agreed",
    "schedule",
    "services",
    "records",
    "obligations",
    "in writing",
    "each party",
    "annex",
    "applicable",
    "provided that",
    "fees",
    "invoice",
    "deliverables",
    "confidential",
    "information",
    "accordance",
    "thereof",
    "pursuant",
)
PAGE_WORDS = 450  # words per PDF page: a dense contract page


def check_generator(spec: Mapping[str, Any]) -> list[str]:
    problems = []
    unknown = set(spec) - {"kind", "tokens", "pages", "plant", "at", "seed", "format"}
    if unknown:
        problems.append(f"unknown keys {sorted(unknown)}; allowed: kind, tokens, pages, plant, at, seed, format")
    if spec.get("kind") not in KINDS:
        problems.append(f"kind must be one of {', '.join(KINDS)}")
    size = spec.get("tokens", spec.get("pages"))
    if ("tokens" in spec) == ("pages" in spec) or not isinstance(size, int) or isinstance(size, bool) or size < 1:
        problems.append("give one of tokens or pages, a positive integer")
    elif spec.get("tokens", 0) > 2_000_000 or spec.get("pages", 0) > 5_000:
        problems.append("at most 2,000,000 tokens or 5,000 pages")
    plant = spec.get("plant", [])
    if not isinstance(plant, str | list) or (isinstance(plant, list) and not all(isinstance(p, str) for p in plant)):
        problems.append("plant must be a line of text or a list of lines")
    at = spec.get("at", 0.5)
    if isinstance(at, bool) or not isinstance(at, int | float) or not 0 <= at <= 1:
        problems.append("at must be a number from 0 (the start) to 1 (the end)")
    if spec.get("format", "txt") not in FORMATS:
        problems.append(f"format must be one of {', '.join(FORMATS)}")
    if spec.get("kind") == "log" and spec.get("format", "txt") == "pdf":
        problems.append("a log is text: format txt")
    return problems


def generate(spec: Mapping[str, Any]) -> bytes:
    from ..context.encodings import load_encoding  # the shipped o200k file: no download

    count = load_encoding("o200k_base").encode_ordinary
    rng = random.Random(int(spec.get("seed", 7)))
    plant = [spec["plant"]] if isinstance(spec.get("plant"), str) else list(spec.get("plant", []))
    words = spec["pages"] * PAGE_WORDS if "pages" in spec else None
    tokens = spec.get("tokens")
    if spec["kind"] == "log":
        lines = _log_lines(rng, tokens or (words or 0) * 2, count)
    else:
        lines = _document_lines(rng, tokens or int((words or 0) * 1.5), count)
    at = min(len(lines), int(len(lines) * float(spec.get("at", 0.5))))
    lines[at:at] = plant
    if spec.get("format") == "pdf":
        return _pdf(lines)
    return ("\n".join(lines) + "\n").encode("utf-8")


def _log_lines(rng: random.Random, tokens: int, count: Callable[[str], list[int]]) -> list[str]:
    lines, used, second = [], 0, 0
    while used < tokens:
        second += rng.randint(0, 3)
        service, verb = rng.choice(SERVICES), rng.choice(VERBS)
        level = "WARN" if rng.random() < 0.03 else "INFO"
        line = (
            f"2026-11-03T{10 + second // 3600 % 12:02d}:{second // 60 % 60:02d}:{second % 60:02d}."
            f"{rng.randint(0, 999):03d}Z {level} svc={service} req={rng.getrandbits(32):08x} {verb} "
            f"status={rng.choice((200, 200, 200, 201, 204, 304))} latency_ms={rng.randint(3, 900)}"
        )
        lines.append(line)
        used += len(count(line + "\n"))
    return lines


def _document_lines(rng: random.Random, tokens: int, count: Callable[[str], list[int]]) -> list[str]:
    lines, used, section = [], 0, 0
    while used < tokens:
        section += 1
        heading = f"## {section}. {TOPICS[(section - 1) % len(TOPICS)]}"
        lines += [heading, ""]
        for clause in range(1, rng.randint(3, 7)):
            if used >= tokens:
                break
            sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(18, 40)))
            line = f"{section}.{clause} {sentence[0].upper()}{sentence[1:]}."
            lines += [line, ""]
            used += len(count(line + "\n\n"))
        used += len(count(heading + "\n\n"))
    return lines


def _pdf(lines: list[str]) -> bytes:
    try:
        from fpdf import FPDF
    except ImportError:  # a local tool's need, not the Lambda's: the package does not depend on it
        from .exceptions import Problem, SuiteError

        raise SuiteError([Problem("(generate)", "format", "a generated PDF needs fpdf2: pip install fpdf2")]) from None
    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("helvetica", size=9)
    for line in lines:
        pdf.multi_cell(0, 4, line.encode("latin-1", "replace").decode("latin-1") or " ", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())
