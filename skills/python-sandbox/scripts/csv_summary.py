"""Summarise a CSV file: per column, how many values, how many are numbers, and for numbers min, max, mean,
median and the 95th percentile. Standard library only (it runs in the sandbox).

    import runpy
    summarize = runpy.run_path("skills/python-sandbox/scripts/csv_summary.py")["summarize"]
    summarize("latency.csv")
"""

import csv
import statistics


def _number(text):
    try:
        return float(text.replace(",", "").strip())
    except ValueError:
        return None


def summarize(path, delimiter=","):
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle, delimiter=delimiter))
    summary = {"rows": len(rows), "columns": {}}
    for column in rows[0].keys() if rows else []:
        values = [row[column] for row in rows if row.get(column) not in (None, "")]
        numbers = sorted(n for n in map(_number, values) if n is not None)
        entry = {"values": len(values), "numbers": len(numbers)}
        if numbers:
            rank = max(0, round(0.95 * len(numbers)) - 1)
            entry |= {"min": numbers[0], "max": numbers[-1], "mean": round(statistics.fmean(numbers), 4),
                      "median": statistics.median(numbers), "p95": numbers[rank]}  # fmt: skip
        summary["columns"][column] = entry
    return summary
