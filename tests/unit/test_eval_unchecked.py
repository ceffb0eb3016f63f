"""A case whose expect names nothing but a status passes whatever its answer says: the report says so, for that
case and for no other (its JSON row, and a line of the table under the failures)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from agent_runtime.evals import Attempt, build_report, load_cases, table
from hypothesis import given, settings
from hypothesis import strategies as st

CHECKS: dict[str, Any] = {  # each key of expect but status, with a value that asks something
    "contains": ["yes"],
    "not_contains": "no",
    "matches": ["^y"],
    "identifiers": ["PAY-1"],
    "tools_called": [{"name": "jira_issue", "args": {"key": "PAY"}}],
    "tools_not_called": ["jira_search"],
    "tools_found": ["jira_issue"],
    "max_tool_calls": 0,
    "max_model_calls": 3,
    "max_cost_usd": 0.5,
    "max_seconds": 60,
    "json_schema": {"type": "object"},
    "judge": "a good answer names the duplicate",
}
EMPTY = st.sampled_from([{}, {"contains": []}, {"identifiers": []}, {"tools_called": []}])
EXPECT = st.fixed_dictionaries(
    {}, optional={"status": st.sampled_from(["completed", "failed"]), **{k: st.just(v) for k, v in CHECKS.items()}}
)
CASE = st.tuples(EXPECT, EMPTY, st.sampled_from(["absent", "null", "given"]))


@settings(max_examples=40, deadline=None)
@given(cases=st.lists(st.tuples(CASE, st.booleans()), min_size=1, max_size=4))
def test_the_report_names_exactly_the_cases_that_check_only_a_status(cases: list[Any]) -> None:
    """Invariant: the JSON marks each case whose expect names nothing but a status; the table's UNCHECKED lines
    name those of them that passed (one that could not run is under FAILED, not "passes whatever it says")."""
    written = []
    for i, ((expect, empty, how), _) in enumerate(cases):
        case: dict[str, Any] = {"name": f"c{i}", "message": "hi"}
        if how != "absent":
            case["expect"] = None if how == "null" else {**empty, **expect}
        written.append(case)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.yaml"
        path.write_text(yaml.safe_dump({"cases": written}))
        loaded = load_cases("w", [path])
    unchecked = {
        f"c{i}" for i, ((expect, _, how), _) in enumerate(cases) if how != "given" or set(expect) <= {"status"}
    }
    ran = [Attempt(case, 0, status="completed") for case in loaded]
    for attempt, (_, fails) in zip(ran, cases, strict=True):
        attempt.error = "could not run: w.yaml: context.x: unknown key" if fails else None
    report = build_report("w", ran, {})
    assert {row["case"] for row in report["cases"] if row["checks_only_status"]} == unchecked
    said = {line.split()[1].rstrip(":") for line in table(report).splitlines() if line.startswith("UNCHECKED ")}
    assert said == {case for case in unchecked if not cases[int(case[1:])][1]}
