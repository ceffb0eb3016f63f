"""Tools disclosed progressively (issue 52), measured (``make bench``; not part of ``make test``).

Material: ``toolsearch/catalogue.json``, 344 tools captured from 11 real MCP servers' own listings (GitHub's and
GitLab's — two code hosts with overlapping names —, Playwright's and Puppeteer's browsers, Brave, Tavily and Exa
search, filesystem, Slack, Sentry, Notion; provenance in the file), served here by real MCP servers (the mcp
package's, over streamable HTTP) that list them exactly as captured; ``toolsearch/cases.yaml``, 173 requests
written as people write them, 31 of them sharing no content word with their tool.

1. Recall of the search stages over the cases: the lexical stage alone (BM25), and the chooser on the lexical
   stage's candidates when ``BENCH_CHOOSER_URL`` names an OpenAI-compatible endpoint (``BENCH_CHOOSER_MODEL``;
   ``make local-model`` serves Gemma 3 270M). The chooser gets the request and the candidates, nothing else.
2. The request at "hello" with the whole catalogue attached: the tools' share of a 128k window, deferred (the
   default) and with every schema sent.
3. A scripted 40-step task using 12 tools of a 300-tool catalogue, through the real loop, MCP servers and engine:
   deferred (searches included) against the 12 declared alone and all 300 sent, priced at gpt-4.1 with a prompt
   cache that keeps every prefix; in a 16k window with compaction; with a helper that needs a found tool; and
   the alternative of adding found schemas to the tool list, priced over the same run's requests.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from agent_runtime import build_agent
from agent_runtime import messages as m
from agent_runtime.deadline import Deadline
from agent_runtime.files import InMemoryFileStore
from agent_runtime.models import OpenAIChatModel
from agent_runtime.record import RunRecord, RunState, RunStatus
from agent_runtime.run_context import RunContext
from agent_runtime.runtime import Services
from agent_runtime.steps import Run
from agent_runtime.testing import ScriptedServer, reply
from agent_runtime.toolsearch.chooser import Chooser
from agent_runtime.toolsearch.index import Bm25
from agent_runtime.toolsets import ToolEnv

from tests.bench.toolsearch.support import CASES, COUNTER, entries, input_cost, prompt_tokens, serve, servers, workflow

WINDOW = 128_000


def _hit(names: list[str], case: dict[str, Any], k: int) -> bool:
    return any(tool in names[:k] for tool in case["tools"])


def _rates(ranked: list[list[str]], cases: list[dict[str, Any]]) -> dict[str, float]:
    subset = [i for i, case in enumerate(cases) if case.get("no_shared_word")]
    rates = {f"@{k}": sum(_hit(r, c, k) for r, c in zip(ranked, cases, strict=True)) / len(cases) for k in (1, 5)}
    if subset:
        rates |= {f"@{k} no shared word": sum(_hit(ranked[i], cases[i], k) for i in subset) / len(subset)
                  for k in (1, 5)}  # fmt: skip
    return {key: round(value, 3) for key, value in rates.items()}


def _chooser_run(need: str) -> Run:
    state = RunState(run_id="bench", workflow="bench-tools")
    state.messages = [m.system("You help."), m.user(need)]
    record = RunRecord("bench", "bench-tools", "chooser", state=state)
    flow = workflow({}, Path("/tmp"))
    return Run(flow, state, record, RunContext("bench", "bench-tools", InMemoryFileStore()), Deadline.none())


def test_recall_of_the_search_stages() -> None:
    catalogue = entries()
    index = Bm25(catalogue)
    started = time.perf_counter()
    lexical = [[e.name for e, _ in index.search(case["need"], 20)] for case in CASES]
    per_query_ms = (time.perf_counter() - started) * 1000 / len(CASES)
    print(f"\n\nTool search over {len(catalogue)} real tools, {len(CASES)} requests "
          f"({sum(1 for c in CASES if c.get('no_shared_word'))} sharing no word with their tool)")  # fmt: skip
    print(f"  lexical (BM25)          {_rates(lexical, CASES)}  {per_query_ms:.2f} ms a query")
    at20 = sum(_hit(r, c, 20) for r, c in zip(lexical, CASES, strict=True)) / len(CASES)
    print(f"  lexical candidates @20  {at20:.3f}")
    assert _rates(lexical, CASES)["@5"] >= 0.6  # the words a request shares; nothing of what it means
    url = os.environ.get("BENCH_CHOOSER_URL")
    if not url:
        print("  chooser: not measured (set BENCH_CHOOSER_URL and BENCH_CHOOSER_MODEL to a model's endpoint)")
        return
    model = OpenAIChatModel(os.environ.get("BENCH_CHOOSER_MODEL", "gemma-3-270m"), client=_client(url))
    chooser = Chooser(model, results=5)
    step = int(os.environ.get("BENCH_CHOOSER_EVERY", 1))  # every Nth request: a small model on a CPU is slow
    sample = [
        (case, found) for number, (case, found) in enumerate(zip(CASES, lexical, strict=True)) if not number % step
    ]
    chosen, tokens, started = [], 0, time.perf_counter()
    for case, candidates in sample:
        hits = [e for name in candidates for e in catalogue if e.name == name]
        choice = chooser.choose(_chooser_run(case["need"]), case["need"], hits, catalogue)
        tokens += choice.tokens
        chosen.append(choice.names or candidates)
    cases = [case for case, _ in sample]
    seconds = (time.perf_counter() - started) / len(sample)
    print(f"  chooser {model.name} ({len(sample)} requests): lexical {_rates([f for _, f in sample], cases)}, "
          f"chosen {_rates(chosen, cases)}, {tokens // len(sample):,} tokens and {seconds:.1f} s a search")  # fmt: skip


def _client(url: str) -> Any:
    import openai

    return openai.OpenAI(base_url=url, api_key=os.environ.get("OPENAI_API_KEY", "unused"), timeout=600)


def test_the_request_at_hello_with_the_whole_catalogue_attached(tmp_path: Path) -> None:
    captured = servers()
    names = {s["name"]: [t["name"] for t in s["tools"]] for s in captured}
    shares = {}
    with serve(captured) as (urls, _):
        for label, tools in (
            ("deferred (default)", {}),
            ("all sent", {"mcp": [{"name": n, "url": u, "allow": names[n]} for n, u in urls.items()],
                          "search": {"defer": {name: "never" for name in urls}}}),
        ):  # fmt: skip
            flow = workflow(urls, tmp_path, tools=tools)
            with ScriptedServer([reply("Hello! What can I do?")]) as server:
                agent = build_agent(flow, OpenAIChatModel("gpt-4.1", client=server.client()),
                                    Services(tool_env=ToolEnv(secrets=lambda name: None)))  # fmt: skip
                record = agent.run("hello")
                body = server.requests[0].body
            assert record.status is RunStatus.COMPLETED
            tools_tokens = COUNTER.tools(body["tools"])
            shares[label] = (len(body["tools"]), tools_tokens, tools_tokens / WINDOW)
    print(f"\n\nThe request at 'hello', {sum(map(len, names.values()))} tools from {len(names)} servers attached:")
    for label, (count, tokens, share) in shares.items():
        print(f"  {label:20} {count:4} tool schemas sent, {tokens:7,} tokens = {share:6.1%} of a 128k window")
    assert shares["deferred (default)"][2] <= 0.05


USED = {  # the task's 12 tools, and what the model asks tool_search for each (phrased as one need)
    "github_list_commits": "list the commits of a github repository",
    "github_get_commit": "get a github commit by its sha",
    "github_search_code": "search code in github repositories",
    "github_get_file_contents": "get the contents of a file in a github repository",
    "github_list_pull_requests": "list the pull requests of a github repository",
    "github_pull_request_read": "read a github pull request",
    "github_create_issue": "create a new issue in a github repository",
    "sentry_search_issues": "search sentry issues",
    "sentry_find_releases": "find the releases of a sentry project",
    "playwright_browser_navigate": "navigate the browser to a url",
    "playwright_browser_take_screenshot": "take a screenshot of the page in the browser",
    "slack_slack_post_message": "post a message to a slack channel",
}
HELPER_AT = 20  # the step that starts a helper, which calls github_get_file_contents (found by its parent)
UP_FRONT, EACH = "searched up front", "searched at first use"


def _steps(search: str | None, helper: bool) -> list[Any]:
    """40 tool-calling steps, each of the 12 tools used three or four times, then the answer. ``search``: the
    twelve searches in the first turn (parallel calls: the model plans), or each in a turn of its own before the
    tool's first use; the found tools are then called through call_tool."""
    from agent_runtime.testing import call, calls

    names = list(USED)
    steps: list[Any] = (
        [calls(*(("tool_search", {"need": need}) for need in USED.values()))] if search == UP_FRONT else []
    )
    for number in range(40):
        name = names[number % len(names)]
        if search == EACH and number < len(names):
            steps.append(call("tool_search", {"need": USED[name]}))
        if helper and number == HELPER_AT:
            steps += [call("subagent", {"task": "Read README.md of acme/api and say what it covers."}),
                      call("github_get_file_contents", {"owner": "acme", "repo": "api", "path": "README.md"}),
                      reply("It covers the retry policy.")]  # fmt: skip
            continue
        arguments = {"owner": "acme", "repo": "api", "query": f"step {number}", "url": "https://acme.io",
                     "channel_id": "C1", "text": f"step {number}", "title": f"step {number}"}  # fmt: skip
        steps.append(call("call_tool", {"name": name, "arguments": arguments}) if search else call(name, arguments))
    return [*steps, reply("Done: the retry change, its PR and its Sentry errors are summarised above.")]


def _intercept(request: Any) -> Any:
    """The side calls: a compaction's summary, and the chooser, which answers with the first of its candidates
    (the lexical stage's best: this measures cost, not choice — section 1 measures the choice)."""
    if request.is_compaction():
        return reply("Summary: the task reads commits, code, PRs and Sentry errors of acme/api step by step.")
    if "You pick tools" in request.system_text():
        text = request.last_user_text().split("picked):", 1)[1]
        return reply(text.split("\n- ", 1)[1].split(":", 1)[0])
    return None


def _variant(urls: dict[str, str], names: dict[str, list[str]], kind: str, tmp: Path, *, budget: int | None,
             helper: bool) -> dict[str, Any]:  # fmt: skip
    from agent_runtime.errors import ConfigError
    from agent_runtime.toolsearch import FOUND

    chosen = {name: [t for t in names[name] if f"{name}_{t}" in USED] for name in urls}
    if kind in (UP_FRONT, EACH):
        tools: dict[str, Any] = {"search": {"chooser": "model", "chooser_model": "gpt-4.1-nano"}}
    else:
        allow = names if kind == "all sent" else chosen
        tools = {"mcp": [{"name": n, "url": u, "allow": allow[n]} for n, u in urls.items() if allow[n]],
                 "search": {"defer": {n: "never" for n in urls if allow[n]}}}  # fmt: skip
    extra: dict[str, Any] = {"context": {"context_budget": budget}} if budget else {}
    if helper:
        extra["subagents"] = {"enabled": True}
    flow = workflow(urls, tmp, tools=tools, **extra)
    steps = _steps(kind if kind in (UP_FRONT, EACH) else None, helper)
    with ScriptedServer(steps, model="gpt-4.1", intercept=_intercept, token_counter=prompt_tokens) as server:
        try:
            agent = build_agent(flow, OpenAIChatModel("gpt-4.1", client=server.client()),
                                Services(tool_env=ToolEnv(secrets=lambda name: None)))  # fmt: skip
            record = agent.run("Find who changed the retry code, its PR, its Sentry errors; tell #eng on Slack.")
        except ConfigError as error:  # 300 schemas in a 16k window
            return {"error": str(error).split(" (model.")[0]}
        bodies = [request.body for request in server.requests]  # the side calls (chooser, summaries) included
        turns = len(server.requests) - len(server.intercepted)
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    if kind in (UP_FRONT, EACH):  # every tool it used was found by a search, none called unfound
        found = set(FOUND.get(record.state.context))
        assert set(USED) <= found, set(USED) - found
        assert all(e["stage"] != "called" for e in record.events if e["type"] == "tools_found")
    return {"bodies": bodies, "record": record, "requests": turns,
            "compactions": sum(1 for e in record.events if e["type"] == "compaction")}  # fmt: skip


def _cost(result: dict[str, Any]) -> float:
    from agent_runtime.models.prices import prices_for

    dollars = input_cost(result["bodies"])[0]
    calls = [*result["record"].model_calls, *(c for child in result["record"].children for c in child["model_calls"])]
    for entry in calls:  # the replies, at their models' output prices
        prices = prices_for(entry.get("model") or "gpt-4.1")
        assert prices is not None
        dollars += prices.cost({"completion_tokens": (entry.get("usage") or {}).get("completion_tokens", 0)})
    return dollars


def test_a_40_step_task_with_12_tools_of_a_300_tool_catalogue(tmp_path: Path) -> None:
    captured = servers(300)
    names = {s["name"]: [t["name"] for t in s["tools"]] for s in captured}
    rows: dict[str, dict[str, Any]] = {}
    with serve(captured) as (urls, _):
        for setting, budget, helper in (("128k", None, False), ("16k, compaction", 16_000, False),
                                        ("128k, a helper", None, True)):  # fmt: skip
            for kind in (UP_FRONT, EACH, "12 declared", "all sent"):
                rows[f"{setting}: {kind}"] = _variant(urls, names, kind, tmp_path, budget=budget, helper=helper)
    print(f"\n\nA 40-step task using 12 tools of a {sum(map(len, names.values()))}-tool catalogue (gpt-4.1, a prompt "
          "cache keeping every prefix; the chooser on gpt-4.1-nano):")  # fmt: skip
    for label, row in rows.items():
        if "error" in row:
            print(f"  {label:34} cannot run: {row['error']}")
            continue
        row["cost"] = _cost(row)
        _, prompt, cached = input_cost(row["bodies"])
        print(f"  {label:44} ${row['cost']:.4f}  {row['requests']} requests, {row['compactions']} compaction(s), "
              f"{prompt:,} prompt tokens ({cached / prompt:.0%} cached)")  # fmt: skip
    for setting in ("128k", "16k, compaction", "128k, a helper"):
        declared, everything = rows[f"{setting}: 12 declared"], rows[f"{setting}: all sent"]
        for kind in (UP_FRONT, EACH):
            deferred = rows[f"{setting}: {kind}"]
            ratio = deferred["cost"] / declared["cost"]
            against = f", {deferred['cost'] / everything['cost']:.2f}x all sent" if "cost" in everything else ""
            print(f"  {setting + ', ' + kind:44} {ratio:.2f}x the 12 declared{against}")
        deferred = rows[f"{setting}: {UP_FRONT}"]
        assert deferred["cost"] / declared["cost"] <= 1.2
        assert "cost" not in everything or deferred["cost"] / everything["cost"] <= 0.3
    _dynamic(rows[f"128k: {EACH}"])


def _dynamic(row: dict[str, Any]) -> None:
    """The alternative: each found schema added to the request's tool list from the request after its search
    (the search's result then says only what it found), priced over the same requests."""
    record = row["record"]
    specs = {name: {"type": "function", "function": {"name": name}} for name in USED}
    dynamic, found = [], []
    for body in row["bodies"]:
        messages = []
        for message in body["messages"]:
            if message["role"] == "tool" and message["content"].startswith("## "):
                names = [line[3:] for line in message["content"].splitlines() if line.startswith("## ")]
                found += [n for n in names if n not in found]
                message = {**message, "content": "Found: " + ", ".join(names)}
            messages.append(message)
        tools = body.get("tools", [])
        if tools and body.get("model") == "gpt-4.1":
            registry = {t["function"]["name"] for t in tools}
            tools = tools + [_spec(record, n, specs) for n in found if n not in registry]
        dynamic.append({**body, "messages": messages, "tools": tools})
    fixed, fixed_tokens, fixed_cached = input_cost(row["bodies"])
    moving, moving_tokens, moving_cached = input_cost(dynamic)
    print(f"  prompts, list fixed (call_tool):  ${fixed:.4f}  {fixed_tokens:,} tokens, {fixed_cached:,} cached")
    print(f"  prompts, found schemas added:     ${moving:.4f}  {moving_tokens:,} tokens, {moving_cached:,} cached "
          f"({moving / fixed:.2f}x)")  # fmt: skip


def _spec(record: Any, name: str, fallback: dict[str, Any]) -> dict[str, Any]:
    """A found tool's schema as the tool list would carry it (from the search result the run received)."""
    for message in record.state.messages:
        text = message.get("content") if message["role"] == "tool" else None
        if isinstance(text, str) and f"## {name}\n" in text:
            part = text.split(f"## {name}\n", 1)[1].split("\n\n## ", 1)[0]
            description, _, schema = part.partition("\nParameters: ")
            parameters = json.loads(schema.split("\n\nCall with", 1)[0]) if schema else {}
            return {"type": "function", "function": {"name": name, "description": description,
                                                     "parameters": parameters}}  # fmt: skip
    return fallback[name]
