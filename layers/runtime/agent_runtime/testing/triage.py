"""The demo model's JIRA triage and eval judge: a triage from the issue and a search for its duplicates (it
suggests a priority when the prompt asks for one); a judge that passes an answer holding most of the rubric's words.
"""

from __future__ import annotations

import json
import re

from ..messages import text_of, tool_names
from .assistant import JUDGE_START
from .reading import _question
from .steps import Reply, ScriptedCall, ScriptedRequest
from .words import IDENT
from .words import terms as _terms


def owns(request: ScriptedRequest) -> bool:
    """An eval's judge or a JIRA triage: this module's, whatever the words ask."""
    return request.system_text().startswith(JUDGE_START) or "jira_issue" in request.tool_names


def respond(request: ScriptedRequest) -> Reply | None:
    """The judge's verdict or a triage step; None: neither is asked."""
    if request.system_text().startswith(JUDGE_START):
        return _judge(request)
    if "jira_issue" in request.tool_names:
        return _triage(request)
    return None


# JIRA triage ------------------------------------------------------------------------------------------------


def _triage(request: ScriptedRequest) -> Reply:
    texts = dict(_results_by_tool(request))
    issue = texts.get("jira_issue")
    if issue is None:
        asked = IDENT.search(_question(request))
        return Reply(calls=(ScriptedCall("jira_issue", {"key": asked.group(0)} if asked else {}),))
    head = re.match(r"# ([A-Z][A-Z0-9]+-\d+): (.*)", issue)
    key, summary = (head.group(1), head.group(2)) if head else ("the issue", "")
    words = [w for w in _terms(summary) if not IDENT.fullmatch(w)][:3]
    if "jira_search" not in texts and "jira_search" in request.tool_names:
        project = key.split("-")[0]
        jql = f'project = {project} AND text ~ "{" ".join(words)}" ORDER BY created DESC'
        return Reply(calls=(ScriptedCall("jira_search", {"jql": jql}),))
    return Reply(text=_triage_text(request, key, summary, issue, texts.get("jira_search", "")))


def _triage_text(request: ScriptedRequest, key: str, summary: str, issue: str, search: str) -> str:
    terms = set(_terms(summary))
    duplicates = []
    for line in search.splitlines():
        match = re.match(r"([A-Z][A-Z0-9]+-\d+): (.*)", line)
        if match and match.group(1) != key:
            shared = sorted(terms & set(_terms(match.group(2))))
            if len(shared) >= 2:
                duplicates.append(f"{match.group(1)} ({match.group(2).strip()}; shares: {', '.join(shared)})")
    text = issue.lower()
    missing = [
        what
        for what, words in (
            ("steps to reproduce", ("steps", "reproduce")),
            ("versions", ("version",)),
            ("logs", ("log", "trace", "error")),
        )
        if not any(w in text for w in words)
    ]
    out = [
        f"*Triage of {key}*: {summary}",
        "• Likely duplicates: " + ("; ".join(duplicates) if duplicates else "none found"),
        "• Missing to act on it: " + (", ".join(missing) if missing else "nothing obvious"),
    ]
    if "priority" in request.system_text().lower():
        urgent = any(w in text for w in ("outage", "data loss", "lost", "all customers", "security", "down"))
        component = re.search(r"labels: ([\w-]+)", issue)
        out.append(
            f"• Suggested priority: {'High' if urgent else 'Medium'}"
            f"{' (it reports lost data or an outage)' if urgent else ''}; component: "
            f"{component.group(1) if component else 'unknown'}"
        )
    return "\n".join(out)


# The judge --------------------------------------------------------------------------------------------------


def _judge(request: ScriptedRequest) -> Reply:
    """Passes when most of the rubric's content words appear in the answer: crude, but it reads both."""
    text = request.last_user_text()
    rubric, _, quoted = text.partition("\n\n# ")
    rubric = rubric.removeprefix("# Rubric").strip()
    try:  # the request and the answer, quoted as one JSON object after its heading line
        answer = str(json.loads(quoted.split("\n", 1)[1]).get("answer", "")).lower()
    except (IndexError, ValueError, AttributeError):
        answer = ""
    words = sorted({_stem(w.lower()) for w in _terms(rubric)})
    present = [w for w in words if w in answer]
    verdict = bool(words) and len(present) >= 0.6 * len(words)
    missing = sorted(set(words) - set(present))
    reason = f"(demo judge) {len(present)} of {len(words)} rubric terms in the answer" + (
        f"; missing: {', '.join(missing[:6])}" if missing else ""
    )
    return Reply(text=json.dumps({"pass": verdict, "reason": reason}))


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _results_by_tool(request: ScriptedRequest) -> list[tuple[str, str]]:
    names = tool_names(request.messages)
    return [(names.get(m.get("tool_call_id", ""), ""), text_of(m)) for m in request.messages if m["role"] == "tool"]
