"""Hostile OpenAPI documents are bounded in time, memory and depth, and cost only their source (issue 31,
point 8). Memory attacks run in a child process under RLIMIT_AS 1 GiB: the test fails, not the machine."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from agent_runtime import ConfigError
from agent_runtime.toolsets.openapi import load_spec, openapi_tools
from agent_runtime.toolsets.secrets import Redactor
from agent_runtime.workflows.tools import OpenApiSettings

from tests.hostile_support import run_limited
from tests.http_support import loopback

FAN_OUT = {  # every schema refers to all the others: a cycle that fans out (10^12 nodes, inlined naively)
    "openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "servers": [{"url": "https://api.example.com"}],
    "paths": {"/things": {"post": {"operationId": "makeThing", "requestBody": {"content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/S0"}}}}}}},
    "components": {"schemas": {f"S{i}": {"type": "object", "properties": {
        f"p{j}": {"$ref": f"#/components/schemas/S{j}"} for j in range(10)}} for i in range(10)}},
}  # fmt: skip
ALIAS_BOMB = "\n".join(
    ["openapi: 3.0.3", "info: {title: x, version: '1'}", "servers: [{url: 'https://api.example.com'}]",
     "components:", "  schemas:", "    a0: &a0 {type: string}"]
    + [f"    a{i}: &a{i} {{type: object, properties: {{" + ", ".join(f"p{j}: *a{i - 1}" for j in range(9)) + "}}"
       for i in range(1, 12)]
    + ["paths:", "  /x:", "    post:", "      operationId: boom", "      requestBody:", "        content:",
       "          application/json:", "            schema: *a11"]
)  # fmt: skip


def tools_for(spec_text: str, tmp_path: Path, name: str = "doc.json") -> list[object]:
    (tmp_path / name).write_text(spec_text)
    settings = OpenApiSettings(name="api", spec=name, base_url="https://api.example.com")
    return openapi_tools(settings, load_spec(settings, tmp_path), {}, Redactor())


@pytest.mark.parametrize("document", [json.dumps(FAN_OUT), ALIAS_BOMB], ids=["ref-cycle-fan-out", "yaml-alias-bomb"])
def test_recursive_schemas_are_inlined_within_a_budget_under_1_gib(document: str, tmp_path: Path) -> None:
    """Was: MemoryError at 1 GiB (recursive schemas are common in real documents)."""
    (tmp_path / "doc.yaml").write_text(document)
    result = run_limited(
        f"""
        import time
        from pathlib import Path
        from agent_runtime.toolsets.openapi import load_spec, openapi_tools
        from agent_runtime.toolsets.secrets import Redactor
        from agent_runtime.workflows.tools import OpenApiSettings
        started = time.monotonic()
        settings = OpenApiSettings(name="api", spec="doc.yaml", base_url="https://api.example.com")
        [made] = openapi_tools(settings, load_spec(settings, Path({str(tmp_path)!r})), {{}}, Redactor())
        print(len(json.dumps(made.parameters)), round(time.monotonic() - started, 1))
        """
    )
    assert result.returncode == 0, result.stderr[-800:]
    size, seconds = result.stdout.split()
    assert int(size) < 2_000_000 and float(seconds) < 10


def test_a_document_nested_100000_deep_is_a_clear_error(tmp_path: Path) -> None:
    """Was: a RecursionError traceback."""
    deep = '{"openapi": "3.0.3", "paths": {}, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(ConfigError, match="nested too deep"):
        tools_for(deep, tmp_path)


@contextmanager
def dripping() -> Iterator[str]:
    """A server that sends its document a byte every 0.2 s (no read timeout ever trips)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                for _ in range(10_000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                return

        def log_message(self, *args: object) -> None:
            pass

    with loopback(Handler) as root:
        yield f"{root}/openapi.json"


@pytest.mark.timed
def test_a_dripping_remote_document_is_given_up_on_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: no total deadline: a byte at a time kept the build (and the run) waiting."""
    from agent_runtime.toolsets import openapi

    monkeypatch.setattr(openapi, "FETCH_SECONDS", 2.0)
    with dripping() as url:
        started = time.monotonic()
        with pytest.raises(ConfigError, match="not fetched within 2 s"):
            load_spec(OpenApiSettings(name="slow", spec=url), None)
    assert time.monotonic() - started < 5
