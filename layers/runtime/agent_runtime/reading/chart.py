"""A picture of how a run used its window: hand-written SVG from the run record.

Tokens by part of the request (system, tools, summary, files inline, history) per model call as stacked areas,
the window and the compaction point as lines, each compaction, masking and fold marked with its tactic, the tool calls
of each turn along the bottom; one such panel for the run and one below it for each helper it started.
Hand-written because a plotting library (matplotlib is ~40 MB with numpy) would outweigh everything else in the
runtime layer for one chart; the numbers are also in the SVG as data attributes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape as _html_escape

from ..events import Compaction, Folding, Masking, RunEvent
from ..views.run import ModelCall, StoredRun

PARTS = ("system", "tools", "summary", "files inline", "history")
COLORS = {
    "system": "#8e9aaf",
    "tools": "#cbc0d3",
    "summary": "#efd3d7",
    "files inline": "#feeafa",
    "history": "#7fa7c9",
}
WIDTH, HEIGHT = 960, 460
LEFT, RIGHT, TOP, BOTTOM = 70, 40, 50, 110


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # characters XML 1.0 cannot carry


def escape(text: str) -> str:
    """Text for an SVG: markup escaped, and the control characters XML cannot carry (a tool name or a tactic
    from elsewhere may hold them) shown as U+FFFD, so the chart stays well-formed."""
    return _html_escape(_NOT_XML.sub("\ufffd", text))


def run_chart(run: StoredRun) -> str:
    """The SVG for a stored run (every invocation of it): the run, then a panel for each helper it started (its
    own window; helpers' helpers too), in the order they ran."""
    runs = [run, *(helper for helper in run.helpers if _points(helper.model_calls))]
    panels = [
        f'<g class="panel" data-run-id="{escape(item.run_id)}" transform="translate(0 {HEIGHT * i})">\n'
        f"{_panel(item)}\n</g>"
        for i, item in enumerate(runs)
    ]
    height = HEIGHT * len(runs)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'font-family="Helvetica, Arial, sans-serif" font-size="11">\n<rect width="100%" height="100%" fill="white"/>\n'
        + "\n".join(panels)
        + "\n</svg>\n"
    )


def _panel(run: StoredRun) -> str:
    points = _points(run.model_calls)
    if not points:
        raise ValueError(f"run {run.run_id} has no model call with context numbers to draw")
    top = max(max(p.usable, sum(p.split.values())) for p in points) * 1.08
    scale = _Scale(len(points), top)
    parts = [_header(run, points), _axes(scale, top), _areas(points, scale), _lines(points, scale)]
    parts += [_markers(run.events, points, scale), _tools(run, points, scale), _legend()]
    return "\n".join(parts)


@dataclass(frozen=True)
class _Point:
    turn: int
    split: dict[str, int]
    usable: int
    compaction_at: int


def _points(calls: Sequence[ModelCall]) -> list[_Point]:
    """One point per turn (a retried call keeps its last attempt), in order."""
    by_turn: dict[int, _Point] = {}
    for call in calls:
        window = call.context
        if window is not None and window.split is not None:
            split = {part: window.tokens(part) for part in PARTS}
            by_turn[call.turn] = _Point(call.turn, split, window.usable, window.compaction_at)
    return [by_turn[turn] for turn in sorted(by_turn)]


class _Scale:
    def __init__(self, count: int, top: float) -> None:
        self.count, self.top = count, max(top, 1.0)

    def x(self, index: float) -> float:
        span = WIDTH - LEFT - RIGHT
        return LEFT + (span * index / (self.count - 1) if self.count > 1 else span / 2)

    def y(self, tokens: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - tokens / self.top)


def _header(run: StoredRun, points: list[_Point]) -> str:
    """Two lines that fit the panel's width whatever the names: which run (bold), then what it did."""
    money = f" · ~${run.cost_usd:.4f}" if run.cost_usd is not None else ""
    title = f"{run.workflow} · run {run.run_id}"
    facts = f"{run.status} · {len(points)} model call(s) · {run.usage.total_tokens:,} tokens{money}"
    room = WIDTH - LEFT - RIGHT
    return (
        f'<text x="{LEFT}" y="20" font-size="14" font-weight="bold">{escape(_fit(title, room // 8))}</text>\n'
        f'<text x="{LEFT}" y="37" font-size="12" fill="#444">{escape(_fit(facts, room // 7))}</text>'
    )


def _fit(text: str, chars: int) -> str:
    """Cut to ``chars`` characters (a generous width per character for the font: wide names still fit)."""
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _axes(scale: _Scale, top: float) -> str:
    rows = [f'<line x1="{LEFT}" y1="{scale.y(0)}" x2="{WIDTH - RIGHT}" y2="{scale.y(0)}" stroke="#333"/>']
    step = _nice_step(top / 5)
    value = 0.0
    while value <= top:
        y = scale.y(value)
        rows.append(f'<line x1="{LEFT - 4}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#eee"/>')
        rows.append(f'<text x="{LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">{value:,.0f}</text>')
        value += step
    rows.append(f'<text x="14" y="{TOP - 12}" fill="#555">tokens</text>')
    return "\n".join(rows)


def _nice_step(raw: float) -> float:
    magnitude = 10.0 ** max(0, len(str(int(raw))) - 1)
    return float(next(step * magnitude for step in (1, 2, 2.5, 5, 10) if step * magnitude >= raw))


def _areas(points: list[_Point], scale: _Scale) -> str:
    rows, below = [], [0] * len(points)
    for part in PARTS:
        above = [b + p.split[part] for b, p in zip(below, points, strict=True)]
        if any(p.split[part] for p in points):
            upper = " ".join(f"{scale.x(i):.1f},{scale.y(v):.1f}" for i, v in enumerate(above))
            lower = " ".join(f"{scale.x(i):.1f},{scale.y(v):.1f}" for i, v in reversed(list(enumerate(below))))
            rows.append(
                f'<polygon class="area" data-part="{part}" points="{upper} {lower}" fill="{COLORS[part]}" '
                'stroke="white" stroke-width="0.5"/>'
            )
        below = above
    for index, point in enumerate(points):  # the numbers, for tests and for reading the SVG
        data = " ".join(f'data-{part.replace(" ", "-")}="{point.split[part]}"' for part in PARTS)
        rows.append(f'<g class="turn" data-turn="{point.turn}" data-x="{scale.x(index):.1f}" {data}/>')
    return "\n".join(rows)


def _lines(points: list[_Point], scale: _Scale) -> str:
    rows = []
    for key, color, label in (("usable", "#c0392b", "window"), ("compaction_at", "#e67e22", "compaction point")):
        values = [p.usable if key == "usable" else p.compaction_at for p in points]
        path = " ".join(f"{scale.x(i):.1f},{scale.y(value):.1f}" for i, value in enumerate(values))
        rows.append(
            f'<polyline class="{key}" points="{path}" fill="none" stroke="{color}" stroke-width="1.5" '
            'stroke-dasharray="6 3"/>'
        )
        rows.append(
            f'<text x="{WIDTH - RIGHT - 4}" y="{scale.y(values[-1]) - 4:.1f}" text-anchor="end" '
            f'fill="{color}">{label} {values[-1]:,}</text>'
        )
    return "\n".join(rows)


def _markers(events: Sequence[RunEvent], points: list[_Point], scale: _Scale) -> str:
    index = {p.turn: i for i, p in enumerate(points)}
    rows = []
    for event in events:
        if not isinstance(event, Compaction | Masking | Folding) or event.turn not in index:
            continue
        x = scale.x(index[event.turn])
        tactic = event.tactic if isinstance(event, Compaction) and event.tactic else event.kind
        rows.append(
            f'<g class="marker" data-type="{event.kind}" data-turn="{event.turn}">'
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{scale.y(0):.1f}" stroke="#555" '
            f'stroke-dasharray="2 2"/><text x="{x + 3:.1f}" y="{TOP + 10}" fill="#555" '
            f'transform="rotate(90 {x + 3:.1f} {TOP + 10})">{escape(tactic)}</text></g>'
        )
    return "\n".join(rows)


def _tools(run: StoredRun, points: list[_Point], scale: _Scale) -> str:
    index = {p.turn: i for i, p in enumerate(points)}
    by_turn: dict[int, list[str]] = {}
    for call in run.tool_calls:
        by_turn.setdefault(call.turn, []).append(call.name)
    rows = [f'<text x="{LEFT - 60}" y="{HEIGHT - BOTTOM + 49}" fill="#555">tool calls</text>']
    for turn, names in sorted(by_turn.items()):
        if turn not in index:
            continue
        x, y = scale.x(index[turn]), HEIGHT - BOTTOM + 45
        label = escape(", ".join(dict.fromkeys(names))[:40])
        rows.append(
            f'<g class="tools" data-turn="{turn}" data-count="{len(names)}"><circle cx="{x:.1f}" cy="{y}" '
            f'r="9" fill="#3d6585"><title>turn {turn}: {label}</title></circle>'
            f'<text x="{x:.1f}" y="{y + 4}" text-anchor="middle" font-size="11" fill="white">{len(names)}'
            f'</text><text x="{x:.1f}" y="{y + 22}" text-anchor="middle" font-size="9" fill="#555">'
            f"{escape(', '.join(dict.fromkeys(names))[:22])}</text></g>"
        )
    return "\n".join(rows)


def _legend() -> str:
    rows, x = [], LEFT
    for part in PARTS:
        rows.append(
            f'<rect x="{x}" y="{HEIGHT - 22}" width="12" height="12" fill="{COLORS[part]}"/>'
            f'<text x="{x + 16}" y="{HEIGHT - 12}">{part}</text>'
        )
        x += 110
    return "\n".join(rows)
