"""A run as one self-contained HTML page: the transcript, the context chart, the files read and where, the helpers'
runs, the cost breakdown and the ratings. No script, no external asset (the chart is inline SVG, the style inline;
its own Content-Security-Policy forbids anything else). The run's record and history are redacted of the declared
secrets whole, when the page is made; then every value is cut, made inert (``inert.html``: control and bidi
characters as escapes) and escaped — so a run whose tools returned markup or 10 MB renders as text, small.

The page is bounded in what it sends: at most ``LIMIT`` bytes as the webhook's response carries it (a JSON string:
every byte of an escape counted), whatever the run held. Each section but the transcript has a share of it; the
transcript takes the rest; what does not fit is counted where it would have been, and named."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import inert
from ..events import FileRead, VirtualFile
from ..messages import Message
from ..reading.chart import run_chart
from ..reading.show import clip, entries
from ..redaction import redacted
from ..views.run import FileEntry, ModelCall, StoredRun, Usage

CUT = 2_000  # characters of a message or a tool result on the page
MAX_ENTRIES = 1_500  # of the transcript: the rest is counted, not shown (runs show --json has the record)
LIMIT = 5_000_000  # bytes the page may send: under Lambda's 6 MB response, headers and all
SHARES = {"ratings": 50_000, "helpers": 200_000, "files": 200_000, "calls": 500_000, "chart": 1_000_000}
SCAFFOLD = 20_000  # bytes kept for what every page has: headings, table heads, the notes of what was left out
STYLE = """
body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1000px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:20px;margin:8px 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #dde1e8}
h3{font-size:13px;margin:14px 0 4px;color:#4a5468}
.meta{color:#4a5468;margin:0}.private{background:#fff4d6;border:1px solid #e8c96b;padding:6px 10px;margin:10px 0}
nav a{margin-right:12px}.cut{color:#7a4d00;font-style:italic}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12.5px/1.4 Menlo,Consolas,monospace}
.user,.assistant,.call,.result{border-radius:6px;padding:6px 10px;margin:4px 0}
.user{background:#e8f0fb}.assistant{background:#fff;border:1px solid #dde1e8}.call{background:#f1ecf8}
.result{background:#eef3ee}.event{color:#7a4d00;font-size:12.5px;margin:2px 0 2px 6px}
table{border-collapse:collapse;font-size:12.5px}td,th{border:1px solid #dde1e8;padding:3px 8px;text-align:left}
th{background:#eceff4}.num{text-align:right}.chart{overflow-x:auto;background:#fff;border:1px solid #dde1e8}
footer{color:#6b7385;font-size:12px;margin-top:32px}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"  # in the page, and its header when served


def sent_bytes(text: str) -> int:
    """What ``text`` weighs in the webhook's response: a JSON string, every character outside ASCII as its
    ``\\uXXXX`` escape — as much as any runtime's encoding of it takes, and more than its UTF-8 in a file."""
    return len(json.dumps(text)) - 2


@dataclass(frozen=True)
class RunPage:
    """What a page shows: the whole run (with its ratings), the history from the checkpoint (None: not kept), where
    it was started from (``slack/app_mention``, ``cli``), whether it came from a private conversation, and the
    redactor of declared secrets — applied to the run, history and origin as the page is made, before anything of
    them is cut."""

    run: StoredRun
    history: Sequence[Message] | None = None
    started_by: str = "cli"
    private: bool = False
    redact: Callable[[str], str] = field(default=lambda text: text)
    note: str = ""  # a line for the footer (when the link that opened it expires)

    def __post_init__(self) -> None:
        object.__setattr__(self, "run", self.run.redacted(self.redact))
        for name in ("history", "started_by"):
            object.__setattr__(self, name, redacted(getattr(self, name), self.redact))

    def text(self, value: Any, limit: int = 300) -> str:
        """Any value of the (redacted) run, as safe HTML text: cut, inert, escaped."""
        return inert.html(clip(value if value is not None else "", limit))


class _Budget:
    """Bytes the page may still send; a section's share (``part``) spends its parent's too."""

    def __init__(self, left: int, parent: _Budget | None = None) -> None:
        self.left, self.parent = left, parent

    def take(self, piece: str) -> bool:
        """Whether ``piece`` fits; if it does, it is spent."""
        size = sent_bytes(piece)
        if size > self.left:
            return False
        self._spend(size)
        return True

    def spend(self, piece: str) -> str:
        """A piece bounded by its cuts (the header, the answer), spent whatever is left."""
        self._spend(sent_bytes(piece))
        return piece

    def _spend(self, size: int) -> None:
        self.left -= size
        if self.parent is not None:
            self.parent._spend(size)

    def part(self, cap: int) -> _Budget:
        return _Budget(min(cap, self.left), self)


def render(page: RunPage) -> str:
    title = page.text(f"{page.run.workflow} · run {page.run.run_id}", 300)
    head = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="robots" content="noindex"><meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{STYLE}</style></head>\n<body><main>"
    )
    tail = (
        f"<footer>Made by agent-runtime from the run's record. {page.text(page.note)}</footer></main></body></html>\n"
    )
    budget = _Budget(LIMIT - sent_bytes(head + tail) - SCAFFOLD)
    top = budget.spend(_header(page) + _answer(page))
    shown = {name: section(page, budget.part(SHARES[name])) for name, section in _SHARED.items()}
    transcript = _transcript(page, budget.part(budget.left))
    body = top + shown["calls"] + shown["chart"] + transcript + shown["files"] + shown["helpers"] + shown["ratings"]
    return head + body + tail


def _fitted(rows: Iterable[str], count: int, budget: _Budget, what: str) -> tuple[str, str]:
    """The rows that fit, and the note of how many did not (placed after the table or list they belong to)."""
    shown = []
    for row in rows:
        if not budget.take(row):
            break
        shown.append(row)
    return "".join(shown), (_left_out(f"{count - len(shown):,} more {what}") if len(shown) < count else "")


def _left_out(what: str) -> str:
    keep = f"to keep this page under {LIMIT // 1_000_000} MB (runs show --json has the record)"
    return f'<p class="cut">… {what} left out, {keep}.</p>'


def _header(page: RunPage) -> str:
    run = page.run
    spent = "-" if run.cost_usd is None else f"${run.cost_usd:.4f}"
    took = "duration unknown" if run.duration_s is None else f"{run.duration_s:,.1f} s"
    facts = [
        run.status,
        run.model,
        f"started by {page.started_by}",
        f"{str(run.started_at)[:19]} · {took}",
        f"{run.usage.total_tokens:,} tokens",
        spent,
    ]
    private = (
        '<p class="private">From a private conversation: this page shows what was said there. Do not forward its '
        "link.</p>"
        if page.private
        else ""
    )
    links = "".join(
        f'<a href="#{part}">{part}</a>'
        for part in ("answer", "cost", "context", "transcript", "files", "helpers", "ratings")
    )
    return (
        f"<h1>{page.text(run.workflow, 200)} <small>{page.text(run.run_id, 200)}</small></h1>"
        f'<p class="meta">{" · ".join(page.text(f, 200) for f in facts)}</p>{private}<nav>{links}</nav>'
    )


def _answer(page: RunPage) -> str:
    why = page.run.stop_reason
    reason = f"<p><b>Why it ended:</b> {page.text(why, CUT)}</p>" if why else ""
    answer = page.run.final_answer or "(no answer)"
    return f'<h2 id="answer">Answer</h2><div class="assistant"><pre>{page.text(answer, 4 * CUT)}</pre></div>{reason}'


def _costs(page: RunPage, budget: _Budget) -> str:
    parts = list(page.run.cost.items())
    summary = (f'<tr><th>{page.text(name)}</th><td class="num">${value:.4f}</td></tr>' for name, value in parts)
    calls = page.run.model_calls
    head = "".join(f"<th>{h}</th>" for h in ("turn", "model", "in", "cached", "out", "cost", "latency"))
    totals, cut = _fitted(summary, len(parts), budget, "costs")
    rows, left = _fitted((_call_row(page, call) for call in calls), len(calls), budget, "model calls")
    table = f"<h3>Model calls</h3><table><tr>{head}</tr>{rows}</table>{left}" if calls else ""
    return f'<h2 id="cost">Cost</h2><table>{totals}</table>{cut}{table}'


def _call_row(page: RunPage, call: ModelCall) -> str:
    usage = call.usage or Usage()
    estimated = " (estimated)" if call.usage_estimated else ""
    cells = [
        call.turn,
        call.model,
        usage.prompt_tokens,
        usage.cached_tokens,
        usage.completion_tokens,
        f"${call.cost_usd or 0:.4f}{estimated}",
        f"{call.latency_ms or 0:,.0f} ms",
    ]
    return "<tr>" + "".join(f"<td>{page.text(c, 100)}</td>" for c in cells) + "</tr>"


def _chart(page: RunPage, budget: _Budget) -> str:
    try:
        svg = inert.terminal(run_chart(page.run))  # its markup escaped by chart.py; bidi controls shown here
    except ValueError as error:
        return f'<h2 id="context">Context</h2><p>No chart: {page.text(str(error))}</p>'
    chart = f'<div class="chart">{svg}</div>'
    if not budget.take(chart):
        chart = _left_out(f"the chart ({sent_bytes(chart):,} bytes; runs chart draws it)")
    return f'<h2 id="context">Context</h2>{chart}'


def _transcript(page: RunPage, budget: _Budget) -> str:
    found = entries(page.run, page.history, CUT)
    shown, left = _fitted(
        (_entry(page, e.kind, e.text, e.detail) for e in found[:MAX_ENTRIES]), len(found), budget, "entries"
    )
    kept = "" if page.history is not None else "<p>No checkpoint was kept: the words of this run are not stored.</p>"
    return f'<h2 id="transcript">Transcript</h2>{shown}{left}{kept}'


def _entry(page: RunPage, kind: str, text: str, detail: str) -> str:
    match kind:
        case "turn":
            return f"<h3>{page.text(text)}{page.text(detail)}</h3>"
        case "event":
            return f'<p class="event">{page.text(text)}</p>'
        case "call":
            return f'<div class="call">call <b>{page.text(text)}</b><pre>{page.text(detail, CUT)}</pre></div>'
        case "result":
            return f'<div class="result"><pre>{page.text(text, CUT + 100)}</pre></div>'
        case _:
            role = "assistant" if kind == "assistant" else "user"
            return f'<div class="{role}"><pre>{page.text(text, CUT + 100)}</pre></div>'


def _files(page: RunPage, budget: _Budget) -> str:
    """Each file, what of it was kept out of the window, and the lines each tool read."""
    reads: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for read in page.run.events_of(FileRead):
        if read.lines is not None and len(read.lines) == 2:
            first, last = read.lines
            reads[read.file][read.tool].append(str(first) if first == last else f"{first}-{last}")
    virtual = {v.file: f"{v.tokens:,} tokens, {v.lines:,} lines" for v in page.run.events_of(VirtualFile)}
    files = page.run.files
    if not files:
        return '<h2 id="files">Files</h2><p>No files.</p>'

    def row(meta: FileEntry) -> str:
        by_tool = reads.get(meta.id, {})
        read = (
            "; ".join(
                f"{tool}: {', '.join(spans[:60])}" + (" …" if len(spans) > 60 else "")
                for tool, spans in by_tool.items()
            )
            or "not read"
        )
        cells = (meta.name, meta.source, f"{meta.size_bytes:,} bytes", virtual.get(meta.id, "-"), read)
        return "<tr>" + "".join(f"<td>{page.text(c, 2_000)}</td>" for c in cells) + "</tr>"

    head = "".join(f"<th>{h}</th>" for h in ("file", "from", "size", "kept out of the window", "lines read, by tool"))
    rows, left = _fitted(map(row, files), len(files), budget, "files")
    return f'<h2 id="files">Files</h2><table><tr>{head}</tr>{rows}</table>{left}'


def _helpers(page: RunPage, budget: _Budget) -> str:
    """The helpers' runs, depth first (a helper's helpers after it): the first 100 at most."""
    found = page.run.helpers
    blocks, left = _fitted((_helper(page, child) for child in found[:100]), len(found), budget, "helpers")
    return f'<h2 id="helpers">Helpers</h2>{blocks if found else "<p>No helpers.</p>"}{left}'


def _helper(page: RunPage, child: StoredRun) -> str:
    spent = f"${child.cost_usd:.4f}" if child.cost_usd is not None else "-"
    tools = [call.name for call in child.tool_calls]
    line = f"{child.run_id} · {child.workflow} · {child.status} · {spent} · {len(tools)} calls"
    counted = ", ".join(f"{name} {count}" for name, count in Counter(tools).most_common())
    used = f"<p>{page.text(counted, 600)}</p>" if tools else ""
    answer = page.text(child.final_answer or "(no answer)", CUT)
    return f'<h3>{page.text(line)}</h3>{used}<div class="assistant"><pre>{answer}</pre></div>'


def _ratings(page: RunPage, budget: _Budget) -> str:
    ratings = page.run.feedback
    rows = (f"<li>{page.text(r.name or r.by, 100)}: {page.text(r.verdict, 20)}</li>" for r in ratings)  # name: else id
    shown, left = _fitted(rows, len(ratings), budget, "ratings")
    return f'<h2 id="ratings">Ratings</h2>{f"<ul>{shown}</ul>{left}" if ratings else "<p>None yet.</p>"}'


_SHARED: dict[str, Callable[[RunPage, _Budget], str]] = {
    "ratings": _ratings,
    "helpers": _helpers,
    "files": _files,
    "calls": _costs,
    "chart": _chart,
}
