"""The sandbox's behaviour: values, output, files, limits, the python tool in a run, the CLI and the Lambda path."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
import pytest
from agent_runtime import Services
from agent_runtime.cli import main
from agent_runtime.files import InMemoryFileStore
from agent_runtime.runtime import build_agent
from agent_runtime.sandbox import LambdaSandbox, SandboxError, SandboxFile, SandboxSettings
from agent_runtime.testing import ScriptedServer, call, reply
from botocore.config import Config

from tests.conftest import make_workflow, model_for

Start = Callable[..., ScriptedServer]


def test_the_last_expression_and_printed_output_come_back(sandbox) -> None:
    result = sandbox.run("import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\n{'n': sum(range(10))}")
    assert (result.status, result.result, result.stdout, result.stderr) == (
        "ok",
        {"n": 45},
        "to stdout\n",
        "to stderr\n",
    )
    assert sandbox.run("x = 1").result is None
    assert sandbox.run("import asyncio\nawait asyncio.sleep(0.01)\n'awaited'").result == "awaited"


def test_values_json_cannot_carry_come_back_as_their_repr(sandbox) -> None:
    result = sandbox.run("{3, 1, 2}")
    assert (result.result, result.result_repr) == ("{1, 2, 3}", True)
    assert sandbox.run("float('nan')").result == "nan"


def test_errors_give_the_users_traceback_only(sandbox) -> None:
    result = sandbox.run("def f(x):\n    return 1 / x\n\nf(0)")
    assert result.status == "error"
    assert result.error == "ZeroDivisionError: division by zero"
    assert result.traceback == (
        "Traceback (most recent call last):\n"
        '  File "<sandbox>", line 4, in <module>\n'
        '  File "<sandbox>", line 2, in f\n'
        "ZeroDivisionError: division by zero\n"
    )
    syntax = sandbox.run("def broken(:\n")
    assert syntax.status == "error" and syntax.error.startswith("SyntaxError: ")
    assert sandbox.run("raise SystemExit(0)").status == "ok"
    assert sandbox.run("raise SystemExit(3)").error == "SystemExit: 3"


def test_output_is_capped(sandbox) -> None:
    result = sandbox.run("print('x' * 200_000)\n'done'")
    assert (result.result, result.stdout_truncated, len(result.stdout)) == ("done", True, 64 * 1024)
    big = sandbox.run("'y' * 100_000")
    assert big.result_truncated and len(big.result) == 64 * 1024


def test_files_go_in_and_new_or_changed_files_come_out(sandbox) -> None:
    inputs = [SandboxFile("data/latency.csv", b"ms\n12\n15\n9\n"), SandboxFile("keep.txt", b"unchanged")]
    code = (
        "import csv, statistics\n"
        "rows = [float(r['ms']) for r in csv.DictReader(open('data/latency.csv'))]\n"
        "open('summary.json', 'w').write(str(statistics.median(rows)))\n"
        "open('data/latency.csv', 'a').write('30\\n')\n"
        "max(rows)"
    )
    result = sandbox.run(code, files=inputs)
    assert result.result == 15.0
    assert {f.name: f.data for f in result.files} == {
        "data/latency.csv": b"ms\n12\n15\n9\n30\n",
        "summary.json": b"12.0",
    }


def test_files_over_the_caps_are_listed_not_returned(sandbox) -> None:
    result = sandbox.run("open('big.bin', 'wb').write(b'0' * (2 * 1024 * 1024))\nopen('small.txt', 'w').write('ok')")
    assert [f.name for f in result.files] == ["small.txt"]
    assert result.files_skipped == ({"name": "big.bin", "size": 2 * 1024 * 1024},)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"files": [SandboxFile("../escape.txt", b"x")]}, "bad file name '../escape.txt': use a relative path"),
        ({"files": [SandboxFile("/etc/x", b"x")]}, "bad file name '/etc/x'"),
        ({"memory_mb": 1}, "memory_mb must be an integer from 64 to 3072, got 1"),
        ({"time_limit_seconds": 1000}, "time_limit_ms must be an integer from 100 to 300000, got 1000000"),
    ],
)
def test_bad_requests_are_refused_clearly(sandbox, kwargs: dict, message: str) -> None:
    result = sandbox.run("1", **kwargs)
    assert result.status == "invalid_request"
    assert message in result.error


def sandbox_workflow(**settings: object):
    return replace(make_workflow(), sandbox=SandboxSettings(enabled=True, **settings))  # type: ignore[arg-type]


def test_the_python_tool_runs_code_on_run_files_and_keeps_what_it_writes(scripted: Start, sandbox) -> None:
    files = InMemoryFileStore()
    data = files.put(b"region,amount\neu,37450\nus,12000\n", name="sales.csv")
    code = (
        "import csv\nrows = list(csv.DictReader(open('sales.csv')))\n"
        "open('totals.txt', 'w').write(str(sum(int(r['amount']) for r in rows)))\nlen(rows)"
    )
    server = scripted(call("python", {"code": code, "files": [data.id]}), reply("Two regions, 49,450 in all."))
    record = build_agent(sandbox_workflow(), model_for(server), Services(sandbox=sandbox), files=files).run("total?")
    assert record.final_answer == "Two regions, 49,450 in all."
    [result] = server.requests[1].tool_results().values()
    written = next(meta for meta in files.list() if meta.name == "totals.txt")
    assert result.startswith("[python: ok, ") and "result: 2" in result
    assert f"totals.txt -> {written.id} (5 bytes)" in result
    assert (files.read(written.id), written.source) == (b"49450", "sandbox")
    schema = next(t for t in server.requests[0].body["tools"] if t["function"]["name"] == "python")
    assert "Limits per call: 30 s, 256 MB." in schema["function"]["description"]


def test_the_python_tool_reports_timeouts_and_errors_to_the_model(scripted: Start, sandbox) -> None:
    server = scripted(
        call("python", {"code": "while True: pass"}),
        call("python", {"code": "1/0"}),
        call("python", {"code": 1}),
        reply("done"),
    )
    agent = build_agent(sandbox_workflow(time_limit_seconds=1), model_for(server), Services(sandbox=sandbox))
    agent.run("loop")
    results = [list(request.tool_results().values())[-1] for request in server.requests[1:]]
    assert results[0] == "[python: timeout]\nKilled after the time limit (1 s): do less per call."
    assert results[1].startswith("[python: error, ") and results[1].endswith("ZeroDivisionError: division by zero")
    assert results[2].startswith("ERROR: invalid arguments: code:")


def test_the_tool_is_offered_only_when_the_workflow_enables_it(scripted: Start, sandbox) -> None:
    server = scripted(reply("a"), reply("b"))
    build_agent(make_workflow(), model_for(server), Services(sandbox=sandbox)).run("hi")
    build_agent(sandbox_workflow(), model_for(server), Services(sandbox=None)).run("hi")
    for request in server.requests:
        assert "python" not in [t["function"]["name"] for t in request.body.get("tools", [])]


def test_cli_sandbox_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "job.py"
    source.write_text(
        "print('rows:', len(open('in.csv').read().splitlines()))\nopen('out.txt', 'w').write('hi')\n7*6\n"
    )
    (tmp_path / "in.csv").write_text("a\nb\n")
    out = tmp_path / "out"
    assert main(["sandbox", "run", str(source), "--file", str(tmp_path / "in.csv"), "--out-dir", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.out == "rows: 2\n42\n"
    assert (out / "out.txt").read_text() == "hi"
    source.write_text("raise ValueError('nope')\n")
    assert main(["sandbox", "run", str(source), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["status"], data["error"]) == ("error", "ValueError: nope")


@pytest.fixture
def lambda_endpoint(sandbox) -> Iterator[str]:
    """Lambda's Invoke API on 127.0.0.1, answering with the real sandbox (moto's Lambda needs Docker)."""

    class Invoke(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            event = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            name = self.path.split("/functions/")[1].split("/")[0]
            if name != "sandbox":
                body, headers = (
                    {"errorMessage": "RequestId: 1 Error: Task timed out after 3.00 seconds"},
                    {"X-Amz-Function-Error": "Unhandled"},
                )
            else:
                body, headers = sandbox._invoke(event, 60), {}
            payload = json.dumps(body).encode()
            self.send_response(200)
            for key, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Invoke)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_lambda_transport_speaks_the_invoke_api(lambda_endpoint: str) -> None:
    client = boto3.client(
        "lambda",
        endpoint_url=lambda_endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"max_attempts": 1}),
    )
    result = LambdaSandbox("sandbox", client=client).run("sum([1, 2, 3])")
    assert (result.status, result.result) == ("ok", 6)
    with pytest.raises(SandboxError, match="failed \\(Unhandled\\): RequestId: 1 Error: Task timed out"):
        LambdaSandbox("other", client=client).run("1")


def test_a_loaded_skill_s_script_runs_by_reference(sandbox, scripted) -> None:
    """The model runs a skill's scripts/ file without pasting it; the skill must be loaded first."""
    from agent_runtime.skills import SkillLibrary, SkillPolicy

    from tests.conftest import REPO

    files = InMemoryFileStore()
    data = files.put(b"endpoint,ms\n/a,120\n/b,80\n/c,100\n", name="latency.csv")
    code = 'import runpy\nrunpy.run_path("skills/python-sandbox/scripts/csv_summary.py")["summarize"]("latency.csv")'
    args = {"code": code, "files": [data.id], "skill_files": ["python-sandbox/scripts/csv_summary.py"]}
    requests = []

    def seen(step):
        return lambda request: (requests.append(request), step)[1]

    server = scripted(
        seen(call("python", args)),
        seen(call("load_skill", {"name": "python-sandbox"})),
        seen(call("python", args)),
        seen(reply("p50 is 100 ms.")),
    )
    flow = replace(make_workflow(), skills=SkillPolicy(allowed=("python-sandbox",)),
                   sandbox=SandboxSettings(enabled=True))  # fmt: skip
    library = SkillLibrary(REPO / "skills")
    record = build_agent(flow, model_for(server), Services(skills=library, sandbox=sandbox), files=files).run(
        "Summarise it."
    )
    assert record.status.value == "completed"
    refused = next(iter(requests[1].tool_results().values()))
    assert refused == "ERROR: load the skill first: load_skill(name='python-sandbox')"
    ran = next(iter(requests[3].tool_results().values()))
    assert '"median": 100' in ran and '"rows": 3' in ran
    spec = next(t for t in requests[0].body["tools"] if t["function"]["name"] == "python")["function"]
    assert "skill_files" in spec["parameters"]["properties"] and "by reference" in spec["description"]
