"""An eval's report: a table for people, JSON to keep and compare, JUnit XML for CI."""

from __future__ import annotations

import json
import statistics
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..events import now_iso
from .exceptions import Problem, SuiteError
from .runner import Attempt

FORMAT = "agent-runtime-eval/1"
DEMO_ENDPOINT = "embedded demo model"


def build_report(workflow: str, attempts: Sequence[Attempt], meta: Mapping[str, Any]) -> dict[str, Any]:
    cases: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        cases.setdefault(attempt.case.id, []).append(attempt)
    rows = [_case_row(group) for group in cases.values()]
    passed = sum(a.passed for a in attempts)
    costs = [a.cost_usd for a in attempts if a.cost_usd is not None]
    judged = [a.judge_cost_usd for a in attempts if a.judge_cost_usd is not None]
    return {
        "format": FORMAT,
        "workflow": workflow,
        "created_at": now_iso(),
        **meta,
        "summary": {
            "cases": len(rows),
            "attempts": len(attempts),
            "passed": passed,
            "pass_rate": round(passed / len(attempts), 4) if attempts else 0.0,
            "cost_usd": round(sum(costs), 6) if costs else None,  # the runs' (helpers and compaction included)
            "judge": {
                "calls": sum(a.judge_calls for a in attempts),
                "cost_usd": round(sum(judged), 6) if judged else None,
            },
            "tokens": sum(a.prompt_tokens + a.completion_tokens for a in attempts),
            "seconds": round(sum(a.seconds for a in attempts), 2),
        },
        "cases": rows,
    }


def _case_row(group: Sequence[Attempt]) -> dict[str, Any]:
    first = group[0]
    costs = [a.cost_usd for a in group if a.cost_usd is not None]
    prompt = sum(a.prompt_tokens for a in group)
    return {
        "case": first.case.id,
        "name": first.case.name,
        "variant": first.case.variant,
        "settings": dict(first.case.settings),
        "tags": list(first.case.tags),
        "checks_only_status": first.case.expect.only_status(),  # passes whatever the answer says: the table says so
        "attempts": len(group),
        "passed": sum(a.passed for a in group),
        "pass_rate": round(sum(a.passed for a in group) / len(group), 4),
        "tokens": round(statistics.mean(a.prompt_tokens + a.completion_tokens for a in group)),
        "cached_share": round(sum(a.cached_tokens for a in group) / prompt, 4) if prompt else 0.0,
        "cost_usd": round(statistics.mean(costs), 6) if costs else None,
        "seconds": round(statistics.median(a.seconds for a in group), 2),
        "compactions": round(statistics.mean(a.compactions for a in group), 2),
        "runs": [a.to_dict() for a in group],
    }


def table(report: Mapping[str, Any]) -> str:
    """One line per case, then what failed (each failing check once per case, with how often)."""
    width = min(80, max([30, *(len(row["case"]) for row in report["cases"])]))
    head = f"{'case':<{width}} {'pass':>7} {'tokens':>9} {'cached':>6} {'cost':>9} {'time':>7} {'compact':>7}"
    lines = [*_ran_on(report), head, "-" * len(head)]
    for row in report["cases"]:
        cost = "-" if row["cost_usd"] is None else f"${row['cost_usd']:.4f}"
        rate = f"{row['passed']:>3}/{row['attempts']:<3}"
        lines.append(
            f"{row['case'][:width]:<{width}} {rate} {row['tokens']:>9,} {row['cached_share']:>6.0%} {cost:>9} "
            f"{row['seconds']:>6.1f}s {row['compactions']:>7g}"
        )
    summary = report["summary"]
    cost = "-" if summary["cost_usd"] is None else f"${summary['cost_usd']:.4f}"
    lines.append("-" * len(head))
    judge = summary.get("judge") or {}
    judged = f" · judge: {judge['calls']} call(s), {_money(judge.get('cost_usd'))}" if judge.get("calls") else ""
    lines.append(
        f"{summary['passed']}/{summary['attempts']} passed ({summary['pass_rate']:.0%}) · "
        f"{summary['tokens']:,} tokens · {cost} · {summary['seconds']:.1f}s of runs{judged}"
    )
    lines += _by_setting(report)
    lines += _failures(report)
    lines += _only_status(report)
    return "\n".join(lines)


def _only_status(report: Mapping[str, Any]) -> list[str]:
    """The cases whose expect names nothing but a status, that passed: a pass of theirs says nothing of the answer
    (one that failed is under FAILED already)."""
    cases = [row["case"] for row in report["cases"] if row.get("checks_only_status") and row["passed"]]
    if not cases:
        return []
    said = "checks only the run's status (its expect names nothing else): it passes whatever the answer says"
    return ["", *(f"UNCHECKED {case}: {said}" for case in cases)]


def _ran_on(report: Mapping[str, Any]) -> list[str]:
    """Which model and endpoint answered: a table that passed on the embedded demo model says so first."""
    if "endpoint" not in report:
        return []
    line = f"model {report.get('model')} · endpoint {report['endpoint']}"
    if report["endpoint"] == DEMO_ENDPOINT:
        line += (
            " — canned answers, not the named model's: set OPENAI_BASE_URL (and OPENAI_API_KEY) to evaluate "
            "a real model"
        )
    return [line, ""]


def _by_setting(report: Mapping[str, Any]) -> list[str]:
    """With a matrix: accuracy against cost per setting (the numbers to choose a window or a model by)."""
    cells: dict[str, list[Mapping[str, Any]]] = {}
    for row in report["cases"]:
        for part in row["variant"].split(",") if row["variant"] else []:
            cells.setdefault(part, []).append(row)
    if not cells:
        return []
    out = ["", f"{'by setting':<44} {'pass':>7} {'tokens/run':>10} {'cost/run':>9} {'time/run':>8}"]
    for setting, rows in cells.items():
        runs = [run for row in rows for run in row["runs"]]
        passed = sum(run["passed"] for run in runs)
        tokens = statistics.mean(run["prompt_tokens"] + run["completion_tokens"] for run in runs)
        costs = [run["cost_usd"] for run in runs if run["cost_usd"] is not None]
        cost = f"${statistics.mean(costs):.4f}" if costs else "-"
        seconds = statistics.median(run["seconds"] for run in runs)
        out.append(f"{setting[:44]:<44} {passed:>3}/{len(runs):<3} {tokens:>10,.0f} {cost:>9} {seconds:>7.1f}s")
    return out


def _failures(report: Mapping[str, Any]) -> list[str]:
    out = []
    for row in report["cases"]:
        counts: dict[str, tuple[int, str]] = {}
        for run in row["runs"]:
            if run["error"]:
                counts[f"could not run: {run['error']}"] = (
                    counts.get(f"could not run: {run['error']}", (0, ""))[0] + 1,
                    "",
                )
            for check in run["checks"]:
                if not check["passed"]:
                    seen, _ = counts.get(check["name"], (0, ""))
                    counts[check["name"]] = (seen + 1, check["detail"])
        if counts:
            out.append(
                f"\nFAILED {row['case']} (runs: {', '.join(r['run_ids'][-1] for r in row['runs'] if r['run_ids'])})"
            )
            out += [
                f"  ✗ {name}{f' — {detail}' if detail else ''} ({n}/{row['attempts']})"
                for name, (n, detail) in counts.items()
            ]
    return out


def junit(report: Mapping[str, Any]) -> str:
    """One testcase per attempt; a failure lists its failed checks. Properties carry tokens, cost and runs."""
    summary = report["summary"]
    suite = ET.Element(
        "testsuite",
        name=f"eval.{report['workflow']}",
        tests=str(summary["attempts"]),
        failures=str(summary["attempts"] - summary["passed"]),
        errors="0",
        time=f"{summary['seconds']:.2f}",
        timestamp=report["created_at"],
    )
    for row in report["cases"]:
        for run in row["runs"]:
            name = row["case"] + (f" #{run['attempt'] + 1}" if row["attempts"] > 1 else "")
            case = ET.SubElement(
                suite, "testcase", classname=f"eval.{report['workflow']}", name=name, time=f"{run['seconds']:.2f}"
            )
            props = ET.SubElement(case, "properties")
            for key in ("run_ids", "tokens", "cost_usd", "model_calls", "compactions"):
                value = run.get(key) if key != "tokens" else run["prompt_tokens"] + run["completion_tokens"]
                ET.SubElement(props, "property", name=key, value=json.dumps(value))
            failed = [c for c in run["checks"] if not c["passed"]]
            if run["error"] or failed:
                message = run["error"] or "; ".join(c["name"] for c in failed)
                failure = ET.SubElement(case, "failure", message=message[:500], type="EvalCheck")
                failure.text = "\n".join(f"{c['name']}: {c['detail']}" for c in failed) or message
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def load_report(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SuiteError([Problem(str(path), "(file)", f"cannot read the report: {error}")]) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SuiteError([Problem(str(path), "format", f"not an eval report ({FORMAT}): write one with --json")])
    return data


def compare(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """Side by side, like with like: each case's passes, then its cost (mean) and time (median) per attempt
    before and after; the totals line puts the suites' cost and tokens per attempt beside each other too, so a
    report of ``--repeat 3`` compares with one of a single attempt."""
    old = {row["case"]: row for row in before["cases"]}
    new = {row["case"]: row for row in after["cases"]}
    head = f"{'case':<40} {'before':>7} {'after':>7}  {'change':<8} {'cost/attempt Δ':>14} {'time/attempt Δ':>14}"
    lines = [f"before: {_label(before)}", f"after:  {_label(after)}", "", head, "-" * len(head)]
    for case in [*old, *(c for c in new if c not in old)]:
        a, b = old.get(case), new.get(case)
        cost, seconds = _delta(a, b, "cost_usd", "{:+.4f}", "$"), _delta(a, b, "seconds", "{:+.1f}s")
        lines.append(f"{case[:40]:<40} {_rate(a):>7} {_rate(b):>7}  {_change(a, b):<8} {cost:>14} {seconds:>14}")
    s1, s2 = before["summary"], after["summary"]
    (cost1, tokens1), (cost2, tokens2) = _per_attempt(before), _per_attempt(after)
    lines += [
        "-" * len(head),
        f"pass rate {s1['pass_rate']:.0%} → {s2['pass_rate']:.0%} ({s1['attempts']} → "
        f"{s2['attempts']} attempts) · per attempt: cost {_money(cost1)} → {_money(cost2)} · "
        f"tokens {tokens1:,} → {tokens2:,}",
    ]
    return "\n".join(lines)


def _per_attempt(report: Mapping[str, Any]) -> tuple[float | None, int]:
    """A report's mean cost (of the attempts that have one) and mean tokens, per attempt."""
    runs = [run for row in report["cases"] for run in row["runs"]]
    costs = [run["cost_usd"] for run in runs if run.get("cost_usd") is not None]
    tokens = [run["prompt_tokens"] + run["completion_tokens"] for run in runs]
    return (round(statistics.mean(costs), 6) if costs else None), (round(statistics.mean(tokens)) if tokens else 0)


def _label(report: Mapping[str, Any]) -> str:
    settings = ", ".join(f"{k}={v}" for k, v in (report.get("settings") or {}).items())
    when = report["created_at"][:19].replace("T", " ")
    return f"{report['workflow']} on {report.get('model', '?')} ({when})" + (f" with {settings}" if settings else "")


def _rate(row: Mapping[str, Any] | None) -> str:
    return "-" if row is None else f"{row['passed']}/{row['attempts']}"


def _change(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str:
    if a is None or b is None:
        return "new" if a is None else "gone"
    if b["pass_rate"] > a["pass_rate"]:
        return "fixed" if b["pass_rate"] == 1 else "better"
    if b["pass_rate"] < a["pass_rate"]:
        return "broke" if a["pass_rate"] == 1 else "worse"
    return ""


def _delta(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, key: str, form: str, unit: str = "") -> str:
    if a is None or b is None or a.get(key) is None or b.get(key) is None:
        return "-"
    text = form.format(b[key] - a[key])
    return text[0] + unit + text[1:]  # +$0.0100


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"
