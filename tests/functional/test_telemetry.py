"""OpenTelemetry traces over OTLP/HTTP, checked at a real receiver on 127.0.0.1 (protobuf decoded with
opentelemetry-proto): span names and nesting across a sub-agent, GenAI attributes, compaction events, no payloads
by default, everything exported by the time a handler returns (flush), and nothing imported when tracing is off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "examples" / "documents"


def attributes(span: Any) -> dict[str, Any]:
    found = {}
    for item in span.attributes:
        value = item.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            found[item.key] = [getattr(v, v.WhichOneof("value")) for v in value.array_value.values]
        else:
            found[item.key] = getattr(value, kind)
    return found


def test_the_demo_run_is_traced_with_genai_spans_and_a_nested_helper(receiver: tuple[str, list[Any]]) -> None:
    endpoint, spans = receiver
    ticket = (REPO / "examples" / "tickets" / "PROJ-1423.txt").read_text()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "agent-runtime-test"}
    files = [arg for name in ("webhook-retries-design.md", "queue-consumer-design.md", "platform-handbook.md")
             for arg in ("-f", str(DOCS / name))]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "agent_runtime", "run", "document-feedback", "-m", ticket, "-q",
                           *files], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    by_id = {span.span_id: span for span in spans}  # everything was exported before the process ended (flush)
    names = [span.name for span in spans]
    [parent, child] = sorted((s for s in spans if s.name.startswith("invoke_agent")), key=lambda s: len(s.name))
    assert parent.name == "invoke_agent document-feedback" and not parent.parent_span_id
    helper_call = by_id[child.parent_span_id]
    assert helper_call.name == "execute_tool subagent" and helper_call.parent_span_id == parent.span_id
    chats = [s for s in spans if s.name.startswith("chat ") and s.parent_span_id == parent.span_id]
    assert chats and all(s.trace_id == parent.trace_id for s in spans)
    chat = attributes(chats[0])
    assert chat["gen_ai.operation.name"] == "chat" and chat["gen_ai.request.model"] == "gpt-4.1"
    assert chat["gen_ai.usage.input_tokens"] > 0 and chat["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert chat["gen_ai.response.id"].startswith("chatcmpl-")
    assert {"execute_tool file_regex", "execute_tool python"} <= set(names)
    tool = attributes(next(s for s in spans if s.name == "execute_tool python"))
    assert "gen_ai.tool.call.arguments" not in tool  # no payloads unless AGENT_LOG_PAYLOADS=1
    assert {e.name for e in parent.events} >= {"virtual_file", "subagent"}
    assert "masking" in {e.name for e in child.events}  # the helper's window management, on its own span
    raw = b"".join(s.SerializeToString() for s in spans)
    assert b"Rollout" not in raw and b"latency_ms" not in raw  # no document or log text in any span


def test_a_compaction_is_an_event_with_its_numbers(receiver: tuple[str, list[Any]], scripted: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from agent_runtime import telemetry
    from agent_runtime.runtime import build_agent
    from agent_runtime.testing import call, reply

    from tests.compaction_support import fetch
    from tests.conftest import make_workflow, model_for

    endpoint, spans = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    from agent_runtime.context import ContextSettings

    flow = make_workflow(window=8_000, output=1_000, context=ContextSettings(mask_threshold_tokens=0))
    server = scripted(*[call("fetch", {"n": n}) for n in range(1, 6)], reply("done"))
    record = build_agent(flow, model_for(server), tools=[fetch]).run("Read the manual.")
    telemetry.flush()  # what a Lambda handler does before it returns: the spans are there now, not later
    [run] = [s for s in spans if s.name.startswith("invoke_agent")]
    recorded = [e for e in record.events if e["type"] in ("compaction", "virtual_file")]
    assert [e.name for e in run.events] == [e["type"] for e in recorded] and recorded
    for event, span_event in zip(recorded, run.events, strict=True):  # the record's numbers, on the span
        numbers = attributes(span_event)
        assert all(numbers[f"agent_runtime.{k}"] == v for k, v in event.items() if isinstance(v, int | str)
                   and k not in ("type", "at"))  # fmt: skip
    [compaction] = [e for e in record.events if e["type"] == "compaction"]
    assert compaction["tokens_before"] > compaction["tokens_after"]
    assert len([s for s in spans if s.name == "execute_tool fetch"]) == 5


def test_forget_leaves_no_exporter_at_work_even_for_a_collector_that_is_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    """What each test starts with (conftest): an exporter left to a gone collector retried it in threads of its own
    (drawing `random`'s jitter under a later test's hypothesis); forget ends them at once, not at their timeout."""
    import socket
    import threading
    import time

    from agent_runtime import telemetry

    with socket.socket() as gone:
        gone.bind(("127.0.0.1", 0))
        port = gone.getsockname()[1]  # closed: the collector refuses
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    before = set(threading.enumerate())
    with telemetry.tracer().start_as_current_span("receive slack"):
        pass
    telemetry.flush(0.1)  # returns; its export goes on retrying
    started = time.monotonic()
    telemetry.forget()
    assert time.monotonic() - started < 3.0  # the export's timeout is 5 s
    time.sleep(0.3)  # a thread told to end has ended by now
    assert [t.name for t in set(threading.enumerate()) - before] == []


def test_nothing_of_opentelemetry_is_imported_without_an_endpoint() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    code = ("import sys, agent_runtime.runtime, agent_runtime.service.worker, agent_runtime.service.webhook; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('opentelemetry.sdk'))))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=60, check=True)  # fmt: skip
    assert json.loads(done.stdout) == []


def test_one_trace_from_the_slack_request_through_the_queue_to_the_run(
    receiver: tuple[str, list[Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time
    import urllib.request

    from agent_runtime import telemetry
    from agent_runtime.config import RuntimeConfig
    from agent_runtime.service.serve import LocalServer
    from agent_runtime.triggers.config import TriggerConfig

    from tests.triggers_support import ENV, fake_apis, slack_mention, slack_request
    from tests.worker_support import WORKFLOW

    endpoint, spans = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills",
                            use_demo_model=True, sandbox_mode="off")  # fmt: skip
    with fake_apis() as (_, base):
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/"})
        server = LocalServer(runtime, triggers, port=0).start()
        try:
            body, headers = slack_request(slack_mention("EvTrace"))
            request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
            urllib.request.urlopen(request, timeout=10).read()
            deadline = time.monotonic() + 30
            while not server.outcomes and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            server.close()
    telemetry.flush()
    [received] = [s for s in spans if s.name == "receive slack"]
    [run] = [s for s in spans if s.name == "invoke_agent design-review"]
    assert run.trace_id == received.trace_id and run.parent_span_id == received.span_id


def test_parallel_helpers_each_nest_under_the_call_that_started_them(
    receiver: tuple[str, list[Any]], scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: the parent kept one open subagent span per run, so two helpers started at once both nested under the
    second call's span."""
    from agent_runtime import telemetry
    from agent_runtime.files import InMemoryFileStore
    from agent_runtime.testing import calls, reply

    from tests.subagents_support import child_script, long_doc, parent

    endpoint, spans = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    files = InMemoryFileStore()
    doc = files.put(long_doc(20), name="a.txt")
    # Each helper answers with its own task's word, whichever asks first.
    child = child_script(*[lambda request: reply(f"done: {said(request)}")] * 2)
    tasks = [("subagent", {"task": f"read the file, then say {word}", "files": [doc.id]}) for word in ("red", "blue")]
    server = scripted(calls(*tasks), reply("both done"), intercept=child)
    record = parent(server, files).run("go")
    telemetry.flush()
    assert record.final_answer == "both done"
    by_id = {span.span_id: span for span in spans}
    helpers = [s for s in spans if s.name.startswith("invoke_agent") and s.parent_span_id]
    assert len(helpers) == 2
    starters = {by_id[h.parent_span_id].span_id for h in helpers}
    assert len(starters) == 2 and all(by_id[s].name == "execute_tool subagent" for s in starters)
    answers = {child["run_id"]: child["final_answer"] for child in record.children}
    [asked] = [m for m in server.requests[-1].messages if m.get("tool_calls")]  # the parent's two calls
    words = {c["id"]: json.loads(c["function"]["arguments"])["task"].split()[-1] for c in asked["tool_calls"]}
    for helper in helpers:  # the call it nests under asked for the word the helper answered with
        call_id = attributes(by_id[helper.parent_span_id])["gen_ai.tool.call.id"]
        assert answers[attributes(helper)["gen_ai.agent.id"]] == f"done: {words[call_id]}"


def said(request: Any) -> str:
    """The word a helper's task asks it to say."""
    import re

    return re.findall(r"then say (\w+)", json.dumps(request.messages))[0]


def test_a_failed_runs_span_says_the_error_not_the_endpoints_body(
    receiver: tuple[str, list[Any]], scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: the run span's status carried the endpoint's raw error body (200 KB exported, quoting the user's
    message). Now the error's class and HTTP status; the record's reason is bounded too."""
    from agent_runtime import telemetry
    from agent_runtime.runtime import build_agent
    from agent_runtime.testing import Fail

    from tests.conftest import make_workflow, model_for

    endpoint, spans = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    body = "invalid request: the message was: my card number is 4111 1111 1111 1111. " + "x" * 200_000
    server = scripted(Fail(400, body, error_type="invalid_request_error"))
    record = build_agent(make_workflow(), model_for(server)).run("my card number is 4111 1111 1111 1111")
    telemetry.flush()
    [run] = [s for s in spans if s.name.startswith("invoke_agent")]
    assert run.status.message == "ModelError (HTTP 400)"
    assert record.stop_reason is not None and len(record.stop_reason) < 1_200


@pytest.mark.timed
@pytest.mark.parametrize("collector", ["silent", "refusing"])
def test_a_dead_collector_costs_a_handler_under_a_second(collector: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: flush() sat on the request's path for the exporter's timeout and retries: ~10 s for a collector that
    accepts and never answers, ~7 s for one that refuses (Slack retries after 3 s, then disables the app)."""
    import socket
    import time

    from agent_runtime import telemetry

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)  # accepts (the kernel does), never answers
    port = listener.getsockname()[1]
    if collector == "refusing":
        listener.close()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    try:
        with telemetry.tracer().start_as_current_span("receive slack"):
            pass
        started = time.monotonic()
        telemetry.flush()
        assert time.monotonic() - started < 1.0
    finally:
        listener.close()
