"""What the demo model carries through a compaction, as a careful model does: a summary that says where the work
stands (not every note it ever wrote), and, after one, the work it already did left alone.

A summary that repeats every note grows with the run until it frees too little of the window; the context engine
then stops summarising and offloads the summary itself to a file, which costs a read to get back. So the summary
keeps the person's request once, the furthest point of each range being read, the evidence that bears most on the
question, and the latest note of each other kind (a document's, a section's: later notes replace earlier ones).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

NOTE = re.compile(r"^NOTES (\S+) (\{.*\})$", re.MULTILINE)
MAX_EVIDENCE_LINES = 12  # the best-scoring lines a summary keeps (an answer cites four)
CONTINUE = re.compile(r'continue with file_read\(id="(file-[0-9a-f]+)", start_line=(\d+)\)')


def consolidated(transcript: str, score: Callable[[str], int]) -> list[str]:
    """The NOTES lines of ``transcript`` as a summary keeps them (``score``: how much a line bears on the
    question)."""
    keyed: dict[str, Any] = {}
    progress: dict[str, int] = {}
    evidence: list[tuple[str, str]] = []
    for key, raw in NOTE.findall(transcript):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if key == "progress" and isinstance(value.get("done"), int):
            progress[str(value.get("tool"))] = max(progress.get(str(value.get("tool")), 0), value["done"])
        elif key == "evidence":
            evidence += [(str(value.get("source", "tool")), str(line)) for line in value.get("lines", [])]
        else:
            keyed.pop(key, None)
            keyed[key] = value  # the latest note of a kind replaces the earlier ones
    out = [f"NOTES {key} {json.dumps(value)}" for key, value in keyed.items()]
    out += [f"NOTES progress {json.dumps({'tool': tool, 'done': done})}" for tool, done in progress.items()]
    return out + _evidence_notes(evidence, score)


def _evidence_notes(evidence: list[tuple[str, str]], score: Callable[[str], int]) -> list[str]:
    unique = list(dict.fromkeys(evidence))
    ranked = sorted(range(len(unique)), key=lambda i: (-score(unique[i][1]), i))[:MAX_EVIDENCE_LINES]
    by_source: dict[str, list[str]] = {}
    for index in sorted(ranked):  # in the order they were found
        source, line = unique[index]
        by_source.setdefault(source, []).append(line)
    return [f"NOTES evidence {json.dumps({'source': s, 'lines': lines})}" for s, lines in by_source.items()]


def furthest_call(calls: Iterable[tuple[str, str]], tool: str) -> int:
    """The furthest page (the one integer argument) of ``tool``'s calls still in view, in the window or a fold:
    a range read in order is done up to there, whatever notes a compaction left."""
    furthest = 0
    for name, arguments in calls:
        values = list(json.loads(arguments).values()) if name == tool else []
        if len(values) == 1 and isinstance(values[0], int) and not isinstance(values[0], bool):
            furthest = max(furthest, values[0])
    return furthest


def continuation(file_id: str, results: Iterable[str], made: set[tuple[str, str]]) -> dict[str, Any] | None:
    """The next part of a file a read said did not fit ("continue with file_read(..., start_line=K)"), unless
    that part was read already."""
    for text in results:
        for fid, start in CONTINUE.findall(text):
            args = {"id": fid, "start_line": int(start)}
            if fid == file_id and ("file_read", json.dumps(args, sort_keys=True)) not in made:
                return args
    return None
