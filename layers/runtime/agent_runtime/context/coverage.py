"""Read-coverage maps: which line and byte intervals of a file the model has seen."""

from __future__ import annotations


def add_interval(intervals: list[list[int]], start: int, end: int) -> list[list[int]]:
    """Insert the closed interval [start, end] and merge overlapping or adjacent ones (kept sorted)."""
    if end < start:
        return intervals
    merged: list[list[int]] = []
    for current in sorted([*intervals, [start, end]]):
        if merged and current[0] <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], current[1])
        else:
            merged.append(list(current))
    return merged


def covered(intervals: list[list[int]]) -> int:
    return sum(end - start + 1 for start, end in intervals)


def describe(intervals: list[list[int]], total: int, unit: str) -> str:
    """e.g. ``lines 1-200, 450-470 of 1,234 (18%)``."""
    if not intervals or total <= 0:
        return f"{unit} none of {total:,}"
    spans = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in intervals[:6])
    more = f" (+{len(intervals) - 6} more)" if len(intervals) > 6 else ""
    return f"{unit} {spans}{more} of {total:,} ({min(covered(intervals), total) / total:.0%})"
