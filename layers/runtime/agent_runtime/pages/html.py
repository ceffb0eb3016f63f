"""A run as one self-contained HTML page: the transcript, the context chart, the files read and where, the helpers'
runs, the cost breakdown and the ratings. No script, no external asset (the chart is inline SVG, the style inline;
its own Content-Security-Policy forbids anything else), every value cut, redacted of declared secrets, made inert
(control characters as escapes) and escaped — so a run whose tools returned markup or 10 MB renders as text, small.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..chart import run_chart
from ..figures import seconds
from ..show import clip, entries, visible

CUT = 2_000  # characters of a message or a tool result on the page
MAX_ENTRIES = 1_500  # of the transcript: the rest is counted, not shown (runs show --json has the record)
STYLE = """
body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1000px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:20px;margin:8px 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #dde1e8}
h3{font-size:13px;margin:14px 0 4px;color:#4a5468}
.meta{color:#4a5468;margin:0}.private{background:#fff4d6;border:1px solid #e8c96b;padding:6px 10px;margin:10px 0}
nav a{margin-right:12px}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12.5px/1.4 Menlo,Consolas,monospace}
.user,.assistant,.call,.result{border-radius:6px;padding:6px 10px;margin:4px 0}
.user{background:#e8f0fb}.assistant{background:#fff;border:1px solid #dde1e8}.call{background:#f1ecf8}
.result{background:#eef3ee}.event{color:#7a4d00;font-size:12.5px;margin:2px 0 2px 6px}
table{border-collapse:collapse;font-size:12.5px}td,th{border:1px solid #dde1e8;padding:3px 8px;text-align:left}
th{background:#eceff4}.num{text-align:right}.chart{overflow-x:auto;background:#fff;border:1px solid #dde1e8}
footer{color:#6b7385;font-size:12px;margin-top:32px}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"  # in the page, and its header when served


@dataclass(frozen=True)
class RunPage:
    """What a page shows: the record (with its feedback), the history from the checkpoint (None: not kept), the
    event that started it, whether it came from a private conversation, and the redactor of declared secrets."""

    record: Mapping[str, Any]
    history: Sequence[Mapping[str, Any]] | None = None
    trigger: Mapping[str, Any] | None = None
    private: bool = False
    redact: Callable[[str], str] = field(default=lambda text: text)
    note: str = ""  # a line for the footer (when the link that opened it expires)

    def text(self, value: Any, limit: int = 300) -> str:
        """Any value, as safe HTML text: cut, redacted, inert, escaped."""
        return html.escape(visible(self.redact(clip(value if value is not None else "", limit))))


def render(page: RunPage) -> str:
    record = page.record
    title = page.text(f"{record.get('workflow')} · run {record.get('run_id')}", 300)
    body = "".join(
        (_header(page), _answer(page), _costs(page), _chart(page), _transcript(page), _files(page), _helpers(page),
         _ratings(page))
    )  # fmt: skip
    footer = f"<footer>Made by agent-runtime from the run's record. {page.text(page.note)}</footer>"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="robots" content="noindex"><meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{STYLE}</style></head>\n<body><main>{body}{footer}</main></body></html>\n"
    )


def _header(page: RunPage) -> str:
    record, trigger = page.record, page.trigger or {}
    usage, cost = record.get("usage") or {}, record.get("cost_usd")
    spent = "-" if not isinstance(cost, int | float) else f"${cost:.4f}"
    source = f"{trigger.get('source', 'cli')}/{trigger.get('kind', 'run')}" if trigger else "cli"
    facts = [str(record.get("status")), str(record.get("model")), f"started by {source}",
             f"{str(record.get('started_at'))[:19]} · {_duration(record)}", f"{usage.get('total_tokens', 0):,} tokens",
             spent]  # fmt: skip
    private = (
        '<p class="private">From a private conversation: this page shows what was said there. Do not forward its '
        "link.</p>"
        if page.private
        else ""
    )
    links = "".join(f'<a href="#{part}">{part}</a>' for part in ("answer", "cost", "context", "transcript", "files",
                                                                 "helpers", "ratings"))  # fmt: skip
    return (
        f"<h1>{page.text(record.get('workflow'), 200)} <small>{page.text(record.get('run_id'), 200)}</small></h1>"
        f'<p class="meta">{" · ".join(page.text(f, 200) for f in facts)}</p>{private}<nav>{links}</nav>'
    )


def _duration(record: Mapping[str, Any]) -> str:
    took = seconds(record.get("started_at"), record.get("ended_at"))
    return "duration unknown" if took is None else f"{took:,.1f} s"


def _answer(page: RunPage) -> str:
    record = page.record
    why = record.get("stop_reason")
    reason = f"<p><b>Why it ended:</b> {page.text(why, CUT)}</p>" if why else ""
    answer = record.get("final_answer") or "(no answer)"
    return f'<h2 id="answer">Answer</h2><div class="assistant"><pre>{page.text(answer, 4 * CUT)}</pre></div>{reason}'


def _costs(page: RunPage) -> str:
    record = page.record
    parts = record.get("cost") or {}
    summary = "".join(
        f'<tr><th>{page.text(name)}</th><td class="num">${float(value):.4f}</td></tr>'
        for name, value in parts.items() if isinstance(value, int | float)
    )  # fmt: skip
    rows = []
    for call in record.get("model_calls") or []:
        usage = call.get("usage") or {}
        estimated = " (estimated)" if call.get("usage_estimated") else ""
        cells = [call.get("turn"), call.get("model"), usage.get("prompt_tokens", 0), usage.get("cached_tokens", 0),
                 usage.get("completion_tokens", 0), f"${float(call.get('cost_usd') or 0):.4f}{estimated}",
                 f"{float(call.get('latency_ms') or 0):,.0f} ms"]  # fmt: skip
        rows.append("<tr>" + "".join(f"<td>{page.text(c, 100)}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("turn", "model", "in", "cached", "out", "cost", "latency"))
    calls = f"<h3>Model calls</h3><table><tr>{head}</tr>{''.join(rows)}</table>" if rows else ""
    return f'<h2 id="cost">Cost</h2><table>{summary}</table>{calls}'


def _chart(page: RunPage) -> str:
    try:
        svg = run_chart(page.record)
    except (ValueError, TypeError, KeyError) as error:
        return f'<h2 id="context">Context</h2><p>No chart: {page.text(str(error))}</p>'
    return f'<h2 id="context">Context</h2><div class="chart">{visible(page.redact(svg))}</div>'


def _transcript(page: RunPage) -> str:
    found = entries(page.record, page.history, CUT)
    shown = [_entry(page, entry.kind, entry.text, entry.detail) for entry in found[:MAX_ENTRIES]]
    if len(found) > MAX_ENTRIES:
        shown.append(f"<p>… {len(found) - MAX_ENTRIES:,} more entries (runs show --json has the record)</p>")
    if page.history is None:
        shown.append("<p>No checkpoint was kept: the words of this run are not stored.</p>")
    return '<h2 id="transcript">Transcript</h2>' + "".join(shown)


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


def _files(page: RunPage) -> str:
    """Each file, what of it was kept out of the window, and the lines each tool read (helpers' reads too)."""
    record = page.record
    reads: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    virtual: dict[str, str] = {}
    for event in record.get("events") or []:
        lines = event.get("lines")
        if event.get("type") == "file_read" and isinstance(lines, list) and len(lines) == 2:
            shown = str(lines[0]) if lines[0] == lines[1] else f"{lines[0]}-{lines[1]}"
            reads[str(event.get("file"))][str(event.get("tool"))].append(shown)
        elif event.get("type") == "virtual_file":
            virtual[str(event.get("file"))] = f"{event.get('tokens', 0):,} tokens, {event.get('lines', 0):,} lines"
    rows = []
    for meta in record.get("files") or []:
        by_tool = reads.get(str(meta.get("id")), {})
        read = "; ".join(f"{tool}: {', '.join(spans[:60])}" + (" …" if len(spans) > 60 else "")
                         for tool, spans in by_tool.items()) or "not read"  # fmt: skip
        cells = (meta.get("name"), meta.get("source"), f"{int(meta.get('size_bytes') or 0):,} bytes",
                 virtual.get(str(meta.get("id")), "-"), read)  # fmt: skip
        rows.append("<tr>" + "".join(f"<td>{page.text(c, 2_000)}</td>" for c in cells) + "</tr>")
    if not rows:
        return '<h2 id="files">Files</h2><p>No files.</p>'
    head = "".join(f"<th>{h}</th>" for h in ("file", "from", "size", "kept out of the window", "lines read, by tool"))
    return f'<h2 id="files">Files</h2><table><tr>{head}</tr>{"".join(rows)}</table>'


def _helpers(page: RunPage) -> str:
    shown: list[str] = []
    queue = list(page.record.get("children") or [])
    while queue and len(shown) < 100:
        child = queue.pop(0)
        queue[:0] = list(child.get("children") or [])
        cost = child.get("cost_usd")
        spent = f"${cost:.4f}" if isinstance(cost, int | float) else "-"
        tools = [str(c.get("name")) for c in child.get("tool_calls") or [] if isinstance(c, dict)]
        line = f"{child.get('run_id')} · {child.get('workflow')} · {child.get('status')} · {spent} · {len(tools)} calls"
        counted = ", ".join(f"{name} {count}" for name, count in Counter(tools).most_common())
        used = f"<p>{page.text(counted, 600)}</p>" if tools else ""
        answer = page.text(child.get("final_answer") or "(no answer)", CUT)
        shown.append(f'<h3>{page.text(line)}</h3>{used}<div class="assistant"><pre>{answer}</pre></div>')
    body = "".join(shown) or "<p>No helpers.</p>"
    return f'<h2 id="helpers">Helpers</h2>{body}'


def _ratings(page: RunPage) -> str:
    rows = [f"<li>{page.text(r.get('by'), 100)}: {page.text(r.get('verdict'), 20)}</li>"
            for r in page.record.get("feedback") or []]  # fmt: skip
    return f'<h2 id="ratings">Ratings</h2>{"<ul>" + "".join(rows) + "</ul>" if rows else "<p>None yet.</p>"}'
