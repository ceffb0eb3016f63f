"""Secrets of declared tools never reach the model, the stores or the logs, and a document never chooses where
they go (issue 31, points 4-6). Real servers: the `mcp` SDK's MCPServer over streamable HTTP and an HTTP API with
its OpenAPI document (tests/toolsets_support.py)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import ConfigError, RunStatus, Services
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply

from tests.toolsets_support import BILLING_SPEC, notes_server, serve_billing, serve_mcp
from tests.workflow_tools_support import agent_for, billing_workflow, seen_by, workflow

Start = Callable[..., ScriptedServer]
SECRETS = ("notes-secret-456", "billing-secret-123")
NOTES, BILLING = "Bearer ${secret:notes_token}", "Bearer ${secret:billing_token}"


def no_secret(*texts: str) -> bool:
    return not any(secret in text for text in texts for secret in SECRETS)


def test_a_server_that_echoes_its_credentials_never_shows_them_to_the_model_the_thread_or_the_record(
    scripted: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Was: an MCP isError result quoting the header, and 200 answers (MCP and OpenAPI) echoing it, reached the
    model, the stored thread and the run record; the mcp client logged a body with the header outside the
    redactor."""
    with serve_mcp(notes_server()) as url, serve_billing() as (root, _):
        notes = {"name": "notes", "url": url, "allow": ["whoami"], "headers": {"Authorization": NOTES}}
        billing = {"name": "billing", "spec": f"{root}/openapi.json", "base_url": f"{root}/api",
                   "operations": ["whoAmI"], "headers": {"Authorization": BILLING}}  # fmt: skip
        flow = workflow(tmp_path, {"mcp": [notes], "openapi": [billing]})
        requests: list[ScriptedRequest] = []
        server = scripted(
            seen_by(requests, call("notes_whoami", {})),
            seen_by(requests, call("notes_whoami", {"fail": True})),
            seen_by(requests, call("billing_whoAmI", {})),
            seen_by(requests, reply("Done.")),
        )
        with caplog.at_level(logging.DEBUG):
            record = agent_for(server, flow, tmp_path).run("Who am I?")
            logging.getLogger("mcp.client.streamable_http").error("unparseable body: %s", "Bearer notes-secret-456")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    seen = [json.dumps(r.messages) for r in requests]
    assert "caller: Bearer ***" in seen[1] and "rejected Authorization: Bearer *** (expired)" in seen[2]
    assert '\\"caller\\": \\"Bearer ***\\"' in seen[3]
    stored = [p.read_text(errors="replace") for p in (tmp_path / "state").rglob("*") if p.is_file()]
    assert no_secret(*seen, json.dumps(record.to_dict()), *stored)
    assert no_secret(*(r.getMessage() for r in caplog.records))
    assert any(r.getMessage() == "unparseable body: Bearer ***" for r in caplog.records)


def test_a_remote_document_cannot_send_the_headers_to_another_host(tmp_path: Path, scripted: Start) -> None:
    """Was: without base_url, a remote document's servers[0] was used, whatever its host (169.254.169.254
    included), with the source's secret header."""
    server = scripted()
    with serve_billing() as (root, _):
        source = {"name": "billing", "spec": f"{root}/openapi.json", "headers": {"Authorization": BILLING}}
        flow = workflow(tmp_path, {"openapi": [source]})
        assert BILLING_SPEC["servers"][0]["url"].startswith("http://placeholder.invalid")
        with pytest.raises(ConfigError, match="names its server on another host"):
            agent_for(server, flow, tmp_path)
        for target, why in [
            ("http://169.254.169.254/latest/meta-data", "link-local or metadata"),
            ("http://metadata.google.internal/computeMetadata/v1", "link-local or metadata"),
            ("http://[fe80::1]/api", "link-local or metadata"),
            ("http://billing.example.com/api", "use https"),
        ]:
            allowed = {"allow_http": True} if "use https" not in why else {}  # the address itself is refused
            with pytest.raises(ConfigError, match=why):
                agent_for(server, billing_workflow(tmp_path, root, base_url=target, **allowed), tmp_path)


def test_a_path_parameter_cannot_climb_out_of_its_operation(scripted: Start, tmp_path: Path) -> None:
    """Was: id=".." was percent-encoded but kept; the HTTP client removed the dot segment, so
    /invoices/{id} with ".." called /invoices (with the secret), an operation the workflow did not list."""
    with serve_billing() as (root, api):
        flow = billing_workflow(tmp_path, root, operations=["getInvoice"])
        requests: list[ScriptedRequest] = []
        server = scripted(
            seen_by(requests, call("billing_getInvoice", {"id": ".."})),
            seen_by(requests, call("billing_getInvoice", {"id": "."})),
            seen_by(requests, reply("Could not.")),
        )
        record = agent_for(server, flow, tmp_path).run("List every invoice.")
    assert record.status is RunStatus.COMPLETED
    results = [next(iter(r.tool_results().values())) for r in requests[1:]]
    assert results == ["ERROR: path parameter 'id' cannot be '..'", "ERROR: path parameter 'id' cannot be '.'"]
    assert [r["path"] for r in api.requests if r["path"].startswith("/api")] == []


def test_every_encoding_of_a_secret_is_kept_out_of_requests_threads_and_saved_files(
    scripted: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 41, point 8: an API that echoes the header JSON-escaped (``/`` as ``\\/``), percent-encoded or in
    base64 (alone, or as Basic auth's ``user:value``), and a saved file that quotes it: none of it reaches the
    model, the stored thread or the file (was: exact string only; saved files not redacted at all)."""
    import base64
    import urllib.parse

    from agent_runtime import build_agent
    from agent_runtime.approvals.approvers import FixedApprover
    from agent_runtime.stores import LocalStore, RunStore, StoreFileStore
    from agent_runtime.toolsets import ToolEnv

    from tests.conftest import model_for

    token = "sk/live+9f8e7d6c5b4a=="
    basic = base64.b64encode(f"svc:{token}".encode()).decode()[8:-4]  # the part the token alone sets
    forms = [token, token.replace("/", "\\/"), urllib.parse.quote(token, safe=""),
             base64.b64encode(token.encode()).decode(), basic]  # fmt: skip
    with serve_billing() as (root, _):
        source = {"name": "billing", "spec": f"{root}/openapi.json", "base_url": f"{root}/api",
                  "operations": ["echoEncoded", "receipt"],
                  "headers": {"Authorization": "Bearer ${secret:slashy}"}}  # fmt: skip
        flow = workflow(tmp_path, {"openapi": [source]})
        requests: list[ScriptedRequest] = []
        server = scripted(seen_by(requests, call("billing_echoEncoded", {})),
                          seen_by(requests, call("billing_receipt", {})),
                          seen_by(requests, reply("Done.")))  # fmt: skip
        store = LocalStore(tmp_path / "state")
        files = StoreFileStore(store, "thread#T")
        env = ToolEnv(secrets={"slashy": token}.get)
        agent = build_agent(
            flow,
            model_for(server),
            Services(runs=RunStore(store), tool_env=env, approver=FixedApprover(True, "t")),
            files=files,
        )
        with caplog.at_level(logging.DEBUG):
            record = agent.run("Who am I?")
            try:
                raise ValueError(f"unparseable body {forms[1]}")
            except ValueError:
                logging.getLogger("mcp.client").exception("the server's answer could not be read")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    seen = [json.dumps(r.messages) for r in requests]
    assert '\\"basic\\"' in seen[1] and "saved as file" in seen[2]  # the answers came, redacted
    stored = [p.read_bytes().decode("utf-8", errors="replace") for p in (tmp_path / "state").rglob("*") if p.is_file()]
    saved = [files.read(meta.id).decode("latin-1") for meta in files.list()]
    assert saved and all("receipt issued to" in text for text in saved)
    from agent_runtime.config import RuntimeConfig
    from agent_runtime.evals.from_run import case_from_run

    config = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state")  # tooled.yaml is in tmp_path
    case = case_from_run("tooled", record.run_id, tmp_path / "evals", config).read_text()
    assert "stubs:" in case and "billing_echoEncoded" in case  # what eval add writes: the answers, as stubs
    texts = [*seen, json.dumps(record.to_dict()), *stored, *saved, case]
    logged = [logging.Formatter().format(r) for r in caplog.records]
    for form in forms:
        assert not any(form in text for text in texts), form
        assert not any(form in text for text in logged), form


def test_each_call_checks_where_the_name_resolves_now(
    scripted: Start, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding (issue 41, point 8): the name resolved to the API when the workflow was built and to the
    metadata address at a later call; each call resolves, checks, and connects to the address it checked."""
    import socket

    from agent_runtime.toolsets import openapi

    answers = {"now": "127.0.0.1"}
    real = socket.getaddrinfo

    def resolve(host: str, *args: Any, **kwargs: Any) -> Any:
        if host == "billing.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers["now"], 0))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(openapi.socket, "getaddrinfo", resolve)
    requests: list[ScriptedRequest] = []

    def rebound(request: ScriptedRequest) -> Any:
        requests.append(request)
        answers["now"] = "169.254.169.254"  # the name now points at the metadata service
        return call("billing_whoAmI", {})

    with serve_billing() as (root, _):
        port = root.rsplit(":", 1)[1]
        source = {"name": "billing", "spec": f"{root}/openapi.json", "base_url": f"http://billing.test:{port}/api",
                  "operations": ["whoAmI"], "allow_http": True, "headers": {"Authorization": BILLING}}  # fmt: skip
        flow = workflow(tmp_path, {"openapi": [source]})
        server = scripted(seen_by(requests, call("billing_whoAmI", {})), rebound, seen_by(requests, reply("Done.")))
        record = agent_for(server, flow, tmp_path).run("Who am I?")
    assert record.status is RunStatus.COMPLETED
    assert "Bearer ***" in json.dumps(requests[1].messages)  # reached by the checked address, with its Host header
    refused = json.dumps(requests[2].messages)
    assert "resolves to 169.254.169.254" in refused and "metadata address is never a tool" in refused
