"""Eval cases, checks, stubs, generated files and reports: each rule driven across its inputs."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from agent_runtime.context.encodings import load_encoding
from agent_runtime.errors import ToolError
from agent_runtime.evals import (
    Attempt,
    Case,
    Expect,
    Observed,
    Stub,
    StubRule,
    SuiteError,
    ToolExpect,
    build_report,
    compare,
    evaluate,
    junit,
    load_cases,
)
from agent_runtime.evals.approve import CaseApprover
from agent_runtime.evals.checks import parse_verdict
from agent_runtime.evals.expect import argument_text
from agent_runtime.evals.generate import check_generator, generate
from agent_runtime.evals.stubs import answer, known_tools, stub_problems, stub_tools, without_stubbed
from agent_runtime.workflows import WorkflowError, apply_overrides, load_workflow
from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfReader

REPO = Path(__file__).resolve().parents[2]
COUNT = load_encoding("o200k_base").encode_ordinary


def suite(tmp_path: Path, cases: list[dict[str, Any]], **top: Any) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump({**top, "cases": cases}, sort_keys=False))
    return path


def problems(tmp_path: Path, cases: list[dict[str, Any]], **top: Any) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_cases("w", [suite(tmp_path, cases, **top)])
    return [f"{p.key}: {p.why}" for p in caught.value.problems]


def test_a_case_reads_as_written_with_defaults_and_a_matrix(tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text("# doc")
    cases = load_cases("w", [suite(tmp_path, [
        {"name": "one", "message": "hi", "files": ["doc.md"], "repeat": 3, "tags": ["smoke"],
         "matrix": {"context.context_budget": [8000, 32000], "model.name": ["a", "b"]},
         "expect": {"contains": "hello", "tools_called": ["x", {"name": "y", "args": {"id": "^f"}}],
                    "max_cost_usd": 0.5, "judge": "says hello"}},
        {"name": "two", "turns": ["a", "b"], "origin": "slack", "approve": "all"},
    ], defaults={"set": {"limits.max_tool_calls": 5}})])  # fmt: skip
    assert [c.id for c in cases] == [
        "one[context.context_budget=8000,model.name=a]", "one[context.context_budget=8000,model.name=b]",
        "one[context.context_budget=32000,model.name=a]", "one[context.context_budget=32000,model.name=b]",
        "two"]  # fmt: skip
    first = cases[0]
    assert first.settings == {"limits.max_tool_calls": 5, "context.context_budget": 8000, "model.name": "a"}
    assert first.files[0].path == (tmp_path / "doc.md").resolve() and first.repeat == 3 and first.tags == ("smoke",)
    assert first.expect.contains == ("hello",) and first.expect.max_cost_usd == 0.5
    assert first.expect.tools_called == (ToolExpect("x"), ToolExpect("y", {"id": "^f"}))
    assert first.expect.judge is not None and first.expect.judge.rubric == "says hello"
    assert cases[-1].turns == ("a", "b") and cases[-1].origin == {"source": "slack"} and cases[-1].approve == "all"


def test_every_problem_of_a_suite_is_listed_at_once(tmp_path: Path) -> None:
    found = problems(tmp_path, [
        {"name": "bad name!", "message": "x"},
        {"name": "a", "message": "x", "turns": ["y"]},
        {"name": "b", "message": "x", "files": ["missing.md", {"name": "g", "generate": {"kind": "nope"}}]},
        {"name": "c", "message": "x", "expect": {"max_tool_calls": -1, "status": "done", "json_schema": {"type": 3}}},
        {"name": "d", "message": "x", "stubs": {"t": {"returns": "x", "parameters": {"type": "string"}}},
         "matrix": {"k": []}, "origin": "email", "repeat": 0},
        {"name": "e", "message": "x"}, {"name": "e", "message": "y"},
    ])  # fmt: skip
    expected = ["cases[0] (bad name!).name: use letters", "cases[1] (a).message: give one of",
                "cases[2] (b).files[0]: no such file", "cases[2] (b).files[1].generate: kind must be one of",
                "cases[3] (c).expect.max_tool_calls: must be at least 0", "cases[3] (c).expect.status: must be one of",
                "cases[3] (c).expect.json_schema: not a valid JSON Schema", "cases[4] (d).stubs.t.parameters: must be",
                "cases[4] (d).origin: must be one of", "cases[4] (d).repeat: must be an integer from 1 to 100",
                "cases.e: two cases have this name"]  # fmt: skip
    for text in expected:
        assert any(line.startswith(text) for line in found), (text, found)
    (tmp_path / "bad.yaml").write_text("cases: x\n")
    with pytest.raises(SuiteError, match="a suite is a mapping with a list of cases under 'cases'"):
        load_cases("w", [tmp_path / "bad.yaml"])


def seen(answer: str | None = "", **kw: Any) -> Observed:
    return Observed(kw.pop("status", "completed"), answer, "q", **kw)


def verdict(expect: Expect, observed: Observed) -> dict[str, bool]:
    return {r.name: r.passed for r in evaluate(expect, observed)}


def test_identifiers_are_whole_tokens_and_text_checks_ignore_case() -> None:
    expect = Expect(contains=("Not Ready",), not_contains=("approved",), identifiers=("PAY-81", "PAY-812"),
                    matches=(r"^\* ",))  # fmt: skip
    assert verdict(expect, seen("* not ready: see PAY-812.")) == {
        "status": True, "contains 'Not Ready'": True, "not_contains 'approved'": True, "matches /^\\* /": True,
        "identifier PAY-81": False, "identifier PAY-812": True}  # fmt: skip
    assert verdict(Expect(status="failed"), seen(None, status="completed")) == {"status": False}


def test_tools_called_with_argument_patterns_and_limits() -> None:
    calls = [{"name": "file_regex", "arguments": {"id": "file-1", "pattern": "ERROR"}, "error": False},
             {"name": "jira_search", "arguments": {"jql": "project = PAY", "n": 5}, "error": False}]  # fmt: skip
    expect = Expect(tools_called=(ToolExpect("file_regex", {"pattern": "ERR"}), ToolExpect("jira_search", {"n": "^6$"}),
                                  ToolExpect("python")), tools_not_called=("jira_search",),
                    max_tool_calls=1, max_model_calls=3, max_cost_usd=0.01, max_seconds=2)  # fmt: skip
    results = {r.name: (r.passed, r.detail) for r in evaluate(expect, seen("x", tool_calls=calls, model_calls=3))}
    assert results["called file_regex(pattern~ERR)"] == (True, "1 call(s)")
    assert results["called jira_search(n~^6$)"] == (False, "1 call(s) of jira_search, none with these arguments")
    assert results["called python"] == (False, "never called")
    assert results["not called jira_search"] == (False, "1 call(s) ran")
    assert results["tool calls <= 1"] == (False, "2") and results["model calls <= 3"] == (True, "3")
    assert results["cost <= $0.01"] == (False, "the model's price is unknown") and results["seconds <= 2"][0]


@pytest.mark.parametrize(("answer", "ok"), [('{"a": 1}', True), ('Here:\n```json\n{"a": 1}\n```', True),
                                            ('{"a": "x"}', False), ("not json", False), (None, False)])  # fmt: skip
def test_a_json_answer_is_checked_against_its_schema(answer: str | None, ok: bool) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert verdict(Expect(json_schema=schema), seen(answer))["json_schema"] is ok


@pytest.mark.parametrize(("text", "expected"), [
    ('{"pass": true, "reason": "ok"}', (True, "ok")), ('```json\n{"pass": false, "reason": "no"}\n```', (False, "no")),
    ('Verdict: {"pass": true}', None), ('{"pass": "yes"}', None), ("I think it passes", None),
    (None, None)])  # fmt: skip
def test_a_judge_reply_that_is_not_a_verdict_fails(text: str | None, expected: tuple[bool, str] | None) -> None:
    """One JSON object, fenced or not (issue 41, point 7: prose around it may quote an injected verdict)."""
    got = parse_verdict(text)
    assert got == expected if expected else (got[0] is False and "judge reply unreadable" in got[1])


def test_stub_rules_answer_in_order_with_arguments_substituted() -> None:
    stub = Stub("notion_fetch", (StubRule("page $id: deploys", {"id": "^page-d"}), StubRule("gone", error=True)))
    assert answer(stub, {"id": "page-deploys"}) == "page page-deploys: deploys"
    with pytest.raises(ToolError, match="gone"):
        answer(stub, {"id": "page-x"})
    with pytest.raises(ToolError, match="no answer for these arguments"):
        answer(Stub("t", (StubRule("x", {"q": "^a$"}),)), {"q": "b"})
    assert answer(Stub("t", (StubRule('{"json": $n}'),)), {"n": 3}) == '{"json": 3}'
    # eval add keys a stub by the exact arguments of a call: non-ASCII lists match when replayed
    exact = {"tags": ["café", "naïve"]}
    replayed = Stub("t", (StubRule("hit", {"tags": f"^{re.escape(argument_text(exact['tags']))}$"}),))
    assert answer(replayed, exact) == "hit"


def test_stubs_keep_a_builtin_tools_schema_and_replace_whole_sources() -> None:
    workflow = load_workflow("knowledge-answers", REPO / "workflows")
    stubs = (Stub("notion_search", (StubRule("x"),)), Stub("notion_fetch", (StubRule("y"),)))
    assert without_stubbed(workflow, stubs).tools.mcp == ()  # both allowed tools stubbed: never connected
    assert without_stubbed(workflow, stubs[:1]).tools.mcp == workflow.tools.mcp
    triage = load_workflow("jira-triage", REPO / "workflows")
    tool = stub_tools(triage, [Stub("jira_search", (StubRule("PAY-1: a"),))])[0]
    assert "jql" in tool.parameters["properties"] and "JQL" in tool.description
    assert tool.invoke({"jql": "project = PAY"}) == "PAY-1: a"
    assert without_stubbed(triage, [Stub("jira_search", (StubRule("x"),))]).tools.builtin == ("jira_issue",)


def test_a_stub_takes_its_tools_definition_and_a_stub_of_nothing_is_said() -> None:
    triage = load_workflow("jira-triage", REPO / "workflows")
    known = known_tools(triage)
    said = stub_problems(triage, [
        Stub("jira_issue", (StubRule("x"),), description="mine"), Stub("jira_serch", (StubRule("x"),)),
        Stub("jira_search", (StubRule("x"),), extra=True), Stub("read_page", (StubRule("x"),), extra=True),
    ], known)  # fmt: skip
    assert said == {
        "jira_issue": "description: a stub keeps the built-in tool's own (the model sees what it sees in a run); "
        "remove it",
        "jira_serch": "the workflow has no tool 'jira_serch'; did you mean 'jira_search'? (a tool only this case "
        "has: extra: true)",
        "jira_search": "extra: the workflow has this tool (built-in): a stub of it takes its definition",
    }
    answers = load_workflow("knowledge-answers", REPO / "workflows")  # read_only: [search, fetch]
    [fetch] = stub_tools(answers, [Stub("notion_fetch", (StubRule("y"),), mutating=True)])
    assert not fetch.mutating and not fetch.needs_approval()  # the source's lists win over the stub's hint


@pytest.mark.parametrize(
    ("approve", "why"),
    [("some", "must be none, all, or a list"), ([{"tool": "t", "decision": "ok"}], "approve[0].decision: must be"),
     ([{"decision": "approved"}], "approve[0]: must be a mapping with tool"),
     ([{"tool": "t", "decision": "denied", "when": {"a": "("}}], "approve[0].when: '(' is not a regular")],
)  # fmt: skip
def test_a_bad_approve_is_said(tmp_path: Path, approve: Any, why: str) -> None:
    found = problems(tmp_path, [{"name": "a", "message": "hi", "approve": approve}])
    assert any(why in problem for problem in found), found


def test_approve_rules_decide_call_by_call() -> None:
    from agent_runtime.approvals import ApprovalRequest, Decision
    from agent_runtime.evals.approve import ApproveRule

    rules = CaseApprover((ApproveRule("mark", "denied", {"pr": "^#12$"}), ApproveRule("mark", "approved")))
    asked = [ApprovalRequest("r", "c", tool, json.dumps(args), "h", 0.0) for tool, args in
             [("mark", {"pr": "#12"}), ("mark", {"pr": "#14"}), ("other", {})]]  # fmt: skip
    assert [rules.decide(request) for request in asked] == [
        (Decision.DENIED, "the eval case (approve[0])"), (Decision.APPROVED, "the eval case (approve[1])"),
        (Decision.DENIED, "the eval case (no approve rule for this call)")]  # fmt: skip


def test_overrides_set_remove_and_swap_the_prompt() -> None:
    data = {"name": "w", "prompt_file": "p.md", "limits": {"max_tool_calls": 3}, "context": 5}
    out = apply_overrides(data, {"limits.max_tool_calls": 9, "model.name": "m", "prompt": "hi", "limits.x": None}, "f")
    assert out == {"name": "w", "limits": {"max_tool_calls": 9}, "context": 5, "model": {"name": "m"}, "prompt": "hi"}
    assert data["limits"] == {"max_tool_calls": 3}  # the document is not changed
    with pytest.raises(WorkflowError, match="cannot set inside context"):
        apply_overrides(data, {"context.context_budget": 1}, "f")
    with pytest.raises(WorkflowError, match="unknown key"):
        load_workflow("jira-triage", REPO / "workflows", overrides={"limits.max_tool_cals": 3})


@settings(max_examples=30, deadline=None)
@given(tokens=st.integers(50, 40_000), at=st.floats(0, 1), kind=st.sampled_from(["log", "document"]),
       seed=st.integers(0, 10_000))  # fmt: skip
def test_a_generated_file_has_its_size_and_the_planted_line_once_at_its_depth(
    tokens: int, at: float, kind: str, seed: int
) -> None:
    plant = "PLANTED req=0badc0de flagged"
    spec = {"kind": kind, "tokens": tokens, "plant": plant, "at": at, "seed": seed}
    assert check_generator(spec) == []
    text = generate(spec).decode()
    lines = text.splitlines()
    assert lines.count(plant) == 1 and text.count("0badc0de") == 1
    assert abs(lines.index(plant) - at * (len(lines) - 1)) <= 1
    used = len(COUNT(text))
    assert tokens <= used <= tokens + 120  # whole lines past the target, no more
    assert generate(spec) == generate(spec)  # the same file every time


def test_a_generated_pdf_has_pages_and_the_planted_clause() -> None:
    data = generate({"kind": "document", "pages": 12, "format": "pdf", "plant": "Clause 9.9 caps liability at 7x.",
                     "at": 0.8})  # fmt: skip
    reader = PdfReader(io.BytesIO(data))
    assert 9 <= len(reader.pages) <= 16
    where = [i for i, page in enumerate(reader.pages) if "caps liability at 7x" in page.extract_text()]
    assert len(where) == 1 and where[0] >= len(reader.pages) * 0.6
    assert check_generator({"kind": "log", "tokens": 5, "format": "pdf"}) == ["a log is text: format txt"]


def attempt(name: str, passed: bool, cost: float | None = 0.01, seconds: float = 1.0, index: int = 0) -> Attempt:
    case = Case(name, "w", Path("w.yaml"), ("q",), Expect())
    done = Attempt(case, index, run_ids=[f"run-{name}-{index}"], status="completed", prompt_tokens=100,
                   completion_tokens=10, cached_tokens=50, cost_usd=cost, seconds=seconds)  # fmt: skip
    done.checks = [*evaluate(Expect(contains=("yes",)), seen("yes" if passed else "no"))]
    return done


def test_reports_sum_up_write_junit_and_compare_case_by_case() -> None:
    before = build_report("w", [attempt("a", True), attempt("b", True), attempt("c", False),
                                attempt("c", False, index=1), attempt("gone", True)], {"model": "m1"})  # fmt: skip
    after = build_report("w", [attempt("a", True, cost=0.02, seconds=3), attempt("b", False), attempt("c", True),
                               attempt("c", True, index=1), attempt("new", True)], {"model": "m2"})  # fmt: skip
    assert before["summary"] | {"seconds": 0} == {"cases": 4, "attempts": 5, "passed": 3, "pass_rate": 0.6,
                                                "cost_usd": 0.05, "tokens": 550, "seconds": 0,
                                                "judge": {"calls": 0, "cost_usd": None}}  # fmt: skip
    assert before["cases"][2]["passed"] == 0 and before["cases"][2]["attempts"] == 2
    assert before["cases"][0]["cached_share"] == 0.5
    rows = {line.split()[0]: line.split()[1:] for line in compare(before, after).splitlines()[5:10]}
    assert rows["a"] == ["1/1", "1/1", "+$0.0100", "+2.0s"] and rows["b"][:3] == ["1/1", "0/1", "broke"]
    assert rows["c"][:3] == ["0/2", "2/2", "fixed"] and rows["gone"][:3] == ["1/1", "-", "gone"]
    assert rows["new"][:3] == ["-", "1/1", "new"]
    suite = ET.fromstring(junit(after))
    assert suite.get("tests") == "5" and suite.get("failures") == "1"
    failed = [c for c in suite.findall("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["b"] and "contains 'yes'" in failed[0].find("failure").get("message")
    assert json.loads(json.dumps(after)) == after  # plain JSON, kept for --compare
