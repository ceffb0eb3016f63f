"""The agent-runtime command, run as a user runs it: a subprocess, real HTTP, real files."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply

from tests.cli_support import DOCS, REPO, run_cli

Start = Callable[..., ScriptedServer]


def test_help_is_complete() -> None:
    top = run_cli("--help")
    assert top.returncode == 0
    for word in ("run", "workflows", "OPENAI_BASE_URL", "demo model"):
        assert word in top.stdout
    run_help = run_cli("run", "--help").stdout
    for flag in ("--message", "--file", "--thread", "--json", "--quiet", "--out-dir", "exit codes"):
        assert flag in run_help
    assert "validate" in run_cli("workflows", "--help").stdout
    assert "every problem in one pass, one line each" in run_cli("workflows", "validate", "--help").stdout.replace(
        "\n", " "
    )


def test_demo_model_reviews_the_attached_documents() -> None:
    result = run_cli(
        "run",
        "document-feedback",
        "--message",
        "Please review",
        "--file",
        str(DOCS / "webhook-retries-design.md"),
        "--file",
        str(DOCS / "queue-consumer-design.md"),
    )
    assert result.returncode == 0, result.stderr
    assert "using the embedded demo model at http://127.0.0.1:" in result.stderr
    assert "turn 1 · tokens" in result.stderr and "✓ file_read" in result.stderr
    assert "Review of webhook-retries-design.md" in result.stdout
    # Findings come from the documents' text, so they name real sections and lines.
    assert "Rollout and rollback (in queue-consumer-design.md)" in result.stdout
    assert "line 23: TODO: decide whether retries keep the original payload" in result.stdout
    assert "Goals" not in result.stdout.split("lacks:")[1].split("*Decisions")[0]


def test_make_demo_shows_the_context_engine_at_work() -> None:
    ticket = (REPO / "examples" / "tickets" / "PROJ-1423.txt").read_text(encoding="utf-8")
    result = run_cli(
        "run",
        "document-feedback",
        "--json",
        "--message",
        ticket,
        *[
            arg
            for name in ("webhook-retries-design.md", "queue-consumer-design.md", "platform-handbook.md")
            for arg in ("--file", str(DOCS / name))
        ],
    )
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    events = record["events"]
    [virtual] = [e for e in events if e["type"] == "virtual_file"]  # the pasted log
    assert virtual["source"] == "user" and virtual["tokens"] > 10_000
    reads = [e for e in events if e["type"] == "file_read" and e["file"] == virtual["file"]]
    assert {e["tool"] for e in reads} == {"file_regex", "file_read"}  # searched, then read by range
    # the handbook went to a helper with its own window; the sections it had used gave way to pointers there
    [helper] = record["children"]
    assert [e["run_id"] for e in events if e["type"] == "subagent"] == [helper["run_id"]]
    masking, *_ = [e for e in helper["events"] if e["type"] == "masking"]
    assert masking["tokens_after"] < masking["tokens_before"]
    assert {e["tool"] for e in events if e["type"] == "file_read"} >= {"subagent/file_regex", "subagent/file_read"}
    assert "→ virtual file" in result.stderr and "│   ⇣ masking" in result.stderr
    answer = record["final_answer"]
    assert "From the ticket's pasted log:* 4 error line(s), 3 delivery(ies) dropped" in answer
    assert "Retries and backoff: Clients must never retry on HTTP 400, 401, 403 or 404." in answer
    # the log's numbers were computed in the sandbox from the virtual file, not guessed
    [python] = [c for c in record["tool_calls"] if c["name"] == "python"]
    assert python["is_error"] is False
    lines = ticket.splitlines()
    latencies = sorted(int(x.split("latency_ms=")[1].split()[0]) for x in lines if "latency_ms=" in x)
    deliveries = sum("webhook.delivery" in x for x in lines)
    assert f"Computed in the Python sandbox: {deliveries} deliveries, 4 errors" in answer
    assert f"p50 {round(statistics.median(latencies))} ms" in answer
    assert all(c["usage"] for c in record["model_calls"])
    for run in (record, helper):  # the workflow's context_budget held on every request, the helper's too
        assert max(c["context"]["estimated_prompt_tokens"] for c in run["model_calls"] if "context" in c) <= 11_904


def test_demo_answer_follows_the_documents(tmp_path: Path) -> None:
    complete = tmp_path / "complete.md"
    complete.write_text((DOCS / "queue-consumer-design.md").read_text(encoding="utf-8"), encoding="utf-8")
    result = run_cli(
        "run",
        "document-feedback",
        "-q",
        "-m",
        "review",
        "-f",
        str(complete),
        "-f",
        str(DOCS / "queue-consumer-design.md"),
    )
    assert result.returncode == 0, result.stderr
    assert "Close to ready — 0 point(s)" in result.stdout
    assert result.stderr.count("\n") == 1  # --quiet: only the demo-model notice


def test_json_run_record_against_an_openai_compatible_server(scripted: Start) -> None:
    def answer(request: ScriptedRequest):
        first_read = next(msg["content"] for msg in request.messages if msg["role"] == "tool")
        return reply(f"The doc starts with: {first_read.splitlines()[1].split(chr(9))[1]}")

    def read_first(request: ScriptedRequest):
        file_id = request.system_text().split("- ")[-1].split(":")[0]
        return call("file_read", {"id": file_id, "start_line": 1, "end_line": 3})

    server = scripted(read_first, call("file_read", '{"id": "oops"'), answer)
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
    result = run_cli(
        "run", "document-feedback", "--json", "-m", "review", "-f", str(DOCS / "webhook-retries-design.md"), env=env
    )
    assert result.returncode == 0, result.stderr
    assert "demo model" not in result.stderr
    record = json.loads(result.stdout)
    assert record["status"] == "completed"
    assert record["final_answer"] == "The doc starts with: # Design: retrying outbound webhooks"
    assert len(record["model_calls"]) == 3
    assert all(c["usage"]["prompt_tokens"] > 0 and c["usage"]["completion_tokens"] > 0 for c in record["model_calls"])
    assert [c["is_error"] for c in record["tool_calls"]] == [False, True]
    assert record["files"][0]["name"] == "webhook-retries-design.md"
    # the broken JSON went back to the model as an error result, not a crash
    assert server.requests[2].tool_results().popitem()[1].startswith("ERROR: the arguments are not valid JSON")
    assert server.requests[0].body["model"] == "gpt-4.1"


def test_model_failure_exits_1_with_the_reason(scripted: Start) -> None:
    from agent_runtime.testing import Fail

    server = scripted(Fail(401, "Incorrect API key provided", code="invalid_api_key"))
    result = run_cli("run", "document-feedback", "-m", "hi", env={"OPENAI_BASE_URL": server.base_url})
    assert result.returncode == 1
    assert "run failed: model 'gpt-4.1' failed after 1 attempt(s): HTTP 401 (check OPENAI_API_KEY)" in result.stderr
    assert result.stderr.count("Incorrect API key provided") == 1  # was: the trace's last line said it too


def test_threads_continue_across_invocations(scripted: Start, tmp_path: Path) -> None:
    server = scripted(
        reply("first answer"),
        lambda r: reply(f"{len(r.messages) - bool(r.status_text())} messages so far"),
        reply("another thread"),
    )
    env = {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(tmp_path)}
    assert run_cli("run", "document-feedback", "-t", "PROJ-1", "-m", "one", env=env).stdout.strip() == "first answer"
    second = run_cli("run", "document-feedback", "-t", "PROJ-1", "-m", "two", env=env)
    assert second.stdout.strip() == "4 messages so far"
    first_run = json.loads(run_cli("run", "document-feedback", "-t", "PROJ-2", "-m", "x", "--json", env=env).stdout)
    shown = run_cli("runs", "show", first_run["run_id"], "--json", env=env)
    assert shown.returncode == 0 and json.loads(shown.stdout)["run_id"] == first_run["run_id"]
    told = run_cli("runs", "show", first_run["run_id"], env=env).stdout  # for people: the transcript
    assert told.startswith(f"run {first_run['run_id']} · document-feedback · completed") and "\nuser: x" in told
    missing = run_cli("runs", "show", "run-nope", env=env)
    assert missing.returncode == 2 and "no stored run 'run-nope'" in missing.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "no-such-flow", "-m", "hi"), "no such workflow 'no-such-flow'; available: document-feedback"),
        (
            ("run", "document-feedback", "-m", "hi", "-f", "/nope/missing.pdf"),
            "--file /nope/missing.pdf: No such file or directory",
        ),
        (("run", "document-feedback", "-m", "hi", "-t", "../escape"), "thread id '../escape'"),
        (("run", "document-feedback", "-m", "  "), "--message is empty"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_message_is_a_usage_error() -> None:
    result = run_cli("run", "document-feedback")
    assert result.returncode == 2 and "--message" in result.stderr


def test_workflows_list_and_validate(tmp_path: Path) -> None:
    listing = run_cli("workflows", "list")
    assert listing.returncode == 0 and listing.stdout.startswith("document-feedback")
    assert "jira-triage" in listing.stdout and "knowledge-answers" in listing.stdout
    assert run_cli("workflows", "validate", "--offline").returncode == 0, run_cli("workflows", "validate").stderr
    unready = run_cli("workflows", "validate", "slack-helper", "knowledge-answers", env={"NOTION_TOKEN": ""})
    assert unready.returncode == 0  # the files are valid; what this environment lacks to run them is said
    said = "slack-helper.yaml: warning: tools.builtin 'slack_thread': no credentials (SLACK_BOT_TOKEN)"
    assert said in unready.stderr  # a run here goes without slack_thread: said, but not a failure
    assert "ok  " in unready.stdout and "slack-helper.yaml" in unready.stdout
    said = "knowledge-answers.yaml: warning: tools: secret 'notion_token' is not set (environment variable NOTION_TOKEN"
    assert said in unready.stderr  # a fresh clone's `workflows validate` passes: was exit 2 for a token not set
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nmodel: {name: x}\n", encoding="utf-8")
    result = run_cli("workflows", "validate", str(bad), "document-feedback")
    assert result.returncode == 2
    assert f"{bad}: description: is required" in result.stderr
    assert f"{bad}: model.context_window: is required" in result.stderr
    assert "ok  " in result.stdout


def test_webhook_token_prints_the_tokens_notion_posted_newest_first(tmp_path: Path) -> None:
    from agent_runtime.stores import LocalStore
    from agent_runtime.triggers.handshakes import Handshakes

    env = {"AGENT_STATE_DIR": str(tmp_path / "state")}
    missing = run_cli("workflows", "webhook-token", "page-review", env=env)
    assert missing.returncode == 1 and "no verification token for 'page-review'" in missing.stderr
    assert str(tmp_path / "state") in missing.stderr  # which store it read
    handshakes = Handshakes(LocalStore(tmp_path / "state"))
    for at, token in enumerate(f"secret_{c * 43}" for c in "abcdefg"):
        handshakes.save("page-review", token, 1_800_000_000 + at)
    shown = run_cli("workflows", "webhook-token", "page-review", env=env)
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    assert len(lines) == 5 and lines[0].endswith("secret_" + "g" * 43) and lines[0].startswith("2027-01-15 08:00:06")


def test_run_out_dir_saves_the_files_the_runs_python_wrote(scripted: Start, tmp_path: Path) -> None:
    code = "open('latency.csv', 'w').write('p50,p99\\n51,80\\n')\nopen('notes.txt', 'w').write('ok')\n'saved'"
    server = scripted(call("python", {"code": code}), reply("Saved two files."))
    env = {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(tmp_path / "state")}
    out = tmp_path / "out"
    result = run_cli("run", "document-feedback", "-m", "chart it", "-f", str(DOCS / "webhook-retries-design.md"),
                     "--out-dir", str(out), env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["latency.csv", "notes.txt"]  # not the attached input
    assert (out / "latency.csv").read_text() == "p50,p99\n51,80\n"
    assert f"agent-runtime: wrote {out / 'latency.csv'} (14 bytes)" in result.stderr


def test_saving_outputs_refuses_names_that_leave_the_folder(tmp_path: Path) -> None:
    from agent_runtime.sandbox.outputs import save_files

    written, refused = save_files([("a/b.txt", b"1"), ("../up.txt", b"2"), ("/etc/x", b"3")], tmp_path / "out")
    assert written == [(tmp_path / "out" / "a" / "b.txt").resolve()] and refused == ["../up.txt", "/etc/x"]
    assert not (tmp_path / "up.txt").exists()


def test_a_turn_killed_mid_run_is_kept_when_the_thread_continues(scripted: Start, tmp_path: Path) -> None:
    """Was: the thread was saved only at the end of a run, so a killed turn vanished whole."""
    doc = tmp_path / "notes.txt"
    doc.write_text("alpha\nbeta KEY-77\ngamma\n")
    reached = threading.Event()

    def hang(request: ScriptedRequest):
        reached.set()  # the tool ran and its result was checkpointed; now the process dies
        time.sleep(30)
        return reply("never")

    def answer(request: ScriptedRequest):
        sent = json.dumps(request.messages)
        return reply(f"kept: {'first question' in sent}, read: {'KEY-77' in sent}")

    server = scripted(lambda r: call("file_read", {"id": _file_id(r), "start_line": 1}), hang, answer)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env |= {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(tmp_path / "state"), "AGENT_SANDBOX": "off"}
    args = [sys.executable, "-m", "agent_runtime", "run", "document-feedback", "-t", "T-1"]
    killed = subprocess.Popen([*args, "-m", "first question", "-f", str(doc)], env=env, cwd=REPO)
    assert reached.wait(30)
    killed.kill()
    killed.wait(10)
    second = subprocess.run([*args, "-m", "and?"], env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "kept: True, read: True"


def _file_id(request: ScriptedRequest) -> str:
    return re.search(r'(file-[0-9a-f]{12}): "notes.txt"', request.system_text()).group(1)


def test_the_message_can_come_from_stdin_or_a_file(scripted: Start, tmp_path: Path) -> None:
    log = "\n".join(f"2026-11-20T09:{n % 60:02d}:00Z INFO request {n} ok" for n in range(6_000))  # ~230 KB
    (tmp_path / "log.txt").write_text(log)
    for source in ("-", f"@{tmp_path / 'log.txt'}"):
        seen: list[object] = []
        server = scripted(lambda request, seen=seen: (seen.append(request), reply("read it"))[1])
        env = {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(tmp_path / "state")}
        full = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")} | env
        result = subprocess.run([sys.executable, "-m", "agent_runtime", "run", "document-feedback", "-m", source],
                                input=log, capture_output=True, text=True, env=full, cwd=REPO, timeout=60)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "6,000 lines" in json.dumps(seen[0].messages)  # type: ignore[attr-defined]  # all of it arrived (and became a virtual file)
    missing = run_cli("run", "document-feedback", "-m", f"@{tmp_path / 'nope.txt'}")
    assert missing.returncode == 2 and "nope.txt: No such file or directory" in missing.stderr


def test_the_trace_shows_a_model_call_waiting_on_a_terminal(scripted: Start) -> None:
    import io
    import time

    from agent_runtime.runtime import build_agent
    from agent_runtime.trace import TraceHook

    from tests.conftest import make_workflow, model_for

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def slow(request: object) -> object:
        time.sleep(2.3)
        return reply("done")

    screen = Terminal()
    server = scripted(slow)
    build_agent(make_workflow(), model_for(server), hooks=[TraceHook(screen)]).run("go")
    text = screen.getvalue()
    assert "… waiting for the model · 1s" in text and "· 2s" in text
    assert text.index("waiting") < text.index("turn 1 · tokens")  # cleared before the call's own line


def test_the_trace_shows_a_streamed_reply_as_it_is_written_and_slack_sees_it_move(scripted: Start) -> None:
    """A slow local server writes for seconds: the terminal's line and the chat's "working" message say what is
    being written and how fast, instead of only how long the call has waited."""
    import io

    from agent_runtime.runtime import build_agent
    from agent_runtime.service.progress import ProgressHook
    from agent_runtime.testing.steps import Paced
    from agent_runtime.trace import TraceHook

    from tests.conftest import make_workflow, model_for

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen, shown = Terminal(), []
    story = " ".join(f"word{n}" for n in range(30))
    server = scripted(Paced(reply(story), interval=0.1))
    hooks = [TraceHook(screen), ProgressHook(shown.append, workflow="test-flow", interval=0.5)]
    build_agent(make_workflow(), model_for(server), hooks=hooks).run("go")
    assert re.search(r"… writing the answer · \d+ tokens \(\d+/s\) · [12]s", screen.getvalue())
    assert any(re.search(r"step 1 · writing the answer \(\d+ tokens so far\)", text) for text in shown)


def test_runs_list_shows_the_stored_runs(scripted: Start, tmp_path: Path) -> None:
    server = scripted(reply("one"), reply("two"))
    env = {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(tmp_path / "state")}
    assert run_cli("run", "document-feedback", "-m", "first", "-q", env=env).returncode == 0
    assert run_cli("run", "document-feedback", "-m", "second", "-q", "--thread", "T-7", env=env).returncode == 0
    table = run_cli("runs", "list", env=env)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split()[:3] == ["run", "workflow", "status"] and len(lines) == 3
    assert all("document-feedback" in line and "completed" in line and "$" in line for line in lines[1:])
    rows = json.loads(run_cli("runs", "list", "--thread", "T-7", "--json", env=env).stdout)
    assert [r["thread_id"] for r in rows] == ["T-7"] and rows[0]["tokens"] > 0
    assert json.loads(run_cli("runs", "list", "--status", "failed", "--json", env=env).stdout) == []
    from agent_runtime.stores import LocalStore, RunStore

    RunStore(LocalStore(tmp_path / "state")).save_feedback(rows[0]["run_id"], "U0DANA", "good", 1.0)
    rated = run_cli("runs", "list", "--thread", "T-7", env=env).stdout.splitlines()[1]
    assert " +1/-0 " in rated
    shown = json.loads(run_cli("runs", "show", rows[0]["run_id"], "--json", env=env).stdout)
    assert [(f["by"], f["verdict"]) for f in shown["feedback"]] == [("U0DANA", "good")]


def test_a_run_says_where_it_is_stored_and_the_list_says_which_store_it_reads(
    scripted: Start, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From another directory the default store is another one: the run names its store and a command that opens
    it from anywhere, and `runs list` names the store it read, empty or not."""
    server = scripted(reply("one"))
    state = tmp_path / "state"
    env = {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(state)}
    ran = run_cli("run", "document-feedback", "-m", "first", env=env)
    [told] = [line for line in ran.stderr.splitlines() if line.startswith("stored in ")]
    command = told.split(": ", 1)[1]
    assert told.startswith(f"stored in {state.resolve()} (AGENT_STATE_DIR)")
    assert command.startswith(f"AGENT_STATE_DIR={state.resolve()} ") and " runs show run-" in command
    run_id = command.rsplit(" ", 1)[1]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "AGENT_STATE_DIR"}  # the command sets it itself
    # As written, in a shell, from another directory, with no venv on the PATH.
    shown = subprocess.run(["sh", "-c", command + " --json"], cwd=elsewhere, env=env | {"PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["run_id"] == run_id
    monkeypatch.delenv("AGENT_STATE_DIR")  # the default: where the command runs
    empty = run_cli("runs", "list", cwd=elsewhere)
    assert f"store: {(elsewhere / '.agent-runtime').resolve()} (AGENT_STATE_DIR) (no runs here)" in empty.stderr


def test_another_workflow_on_the_demo_model_is_told_its_answers_are_canned(tmp_path: Path) -> None:
    (tmp_path / "helper.yaml").write_text(
        "name: helper\ndescription: Answers questions.\nprompt: You help.\n"
        "model: {name: gpt-4.1-mini, context_window: 128000, max_output_tokens: 512}\n"
    )
    ran = run_cli("run", "helper", "-m", "What can you do?", env={"AGENT_WORKFLOWS_DIR": str(tmp_path)})
    said = ran.stderr.splitlines()
    first = said[next(n for n, line in enumerate(said) if "turn 1 ·" in line) - 1]  # as the first call goes out
    assert "using the embedded demo model" in first and "CANNED" in first and "OPENAI_BASE_URL" in first


def test_a_png_chart_that_cannot_be_converted_says_the_converters_words_and_what_to_install(
    scripted: Start, tmp_path: Path
) -> None:
    server = scripted(reply("one"))
    env = {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(tmp_path / "state")}
    run_id = json.loads(run_cli("run", "document-feedback", "-m", "go", "--json", env=env).stdout)["run_id"]
    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "rsvg-convert"
    fake.write_text("#!/bin/sh\necho 'rsvg-convert: no fonts are configured' >&2\nexit 3\n")
    fake.chmod(0o755)
    failed = run_cli(
        "runs", "chart", run_id, "-o", str(tmp_path / "x.png"), env=env | {"PATH": f"{tools}:/usr/bin:/bin"}
    )
    assert failed.returncode == 2 and "(exit 3): rsvg-convert: no fonts are configured" in failed.stderr
    assert "install rsvg-convert (librsvg2-bin) or ImageMagick, or write an .svg" in failed.stderr
    assert run_cli("runs", "chart", run_id, "-o", str(tmp_path / "x.svg"), env=env).returncode == 0
