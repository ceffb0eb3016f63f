"""Run pages in tests: the key that signs their links, the stack's address, a record to draw, a strict HTML parser."""

from __future__ import annotations

import html5lib

KEY = "run-page-key-for-tests-0123456789"
API = "https://agents.example"


def strict(page: str) -> None:
    """html5lib's strict parser: any parse error (a stray tag, a bad character, no doctype) raises."""
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)


def record(**extra: object) -> dict[str, object]:
    return {"run_id": "run-1", "workflow": "w", "status": "completed", "model": "gpt-4o", "cost_usd": 0.0123,
            "cost": {"helpers": 0.002}, "usage": {"total_tokens": 1234}, "started_at": "2026-11-26T10:00:00.000",
            "ended_at": "2026-11-26T10:00:05.000", "final_answer": "done <script>alert(1)</script>",
            "model_calls": [{"turn": 1, "cost_usd": 0.01, "usage": {"prompt_tokens": 900, "completion_tokens": 30}}],
            "events": [{"type": "masking", "turn": 1, "outputs": 2}, {"type": "stopped", "by": "U1", "via": "slack",
                                                                  "turn": 2},
                       {"type": "approval_decided", "tool": "restart", "decision": "approved", "by": "U0LEAD",
                        "turn": 1}, {"type": "skill_loaded", "skill": "runbooks", "turn": 1}],
            "children": [{"run_id": "run-1.sub1", "status": "completed", "cost_usd": 0.002,
                          "tool_calls": [{"name": "a"}, {"name": "b"}]}],
            "feedback": [{"by": "U0DANA", "verdict": "good"}], **extra}  # fmt: skip
