"""``agent-runtime serve``: a signed Slack event over real HTTP → in-process worker → reply on a fake Slack API."""

from __future__ import annotations

import io
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.service.serve import LocalServer
from agent_runtime.triggers.config import TriggerConfig

from tests.conftest import REPO
from tests.triggers_support import ENV, fake_apis, slack_mention, slack_request
from tests.worker_support import WORKFLOW


def test_serve_answers_a_slack_mention_through_the_local_worker(tmp_path: Path) -> None:
    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(
        workflows_dir=tmp_path,
        state_dir=tmp_path / "state",
        skills_dir=REPO / "skills",
        use_demo_model=True,
        sandbox_mode="off",
    )
    with fake_apis() as (apis, base):
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/"})
        server = LocalServer(runtime, triggers, port=0).start()
        try:
            body, headers = slack_request(slack_mention("EvServe"))
            request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
            with urllib.request.urlopen(request, timeout=10) as response:
                assert json.loads(response.read()) == {"status": "queued", "workflow": "design-review"}
            deadline = time.monotonic() + 30
            while not server.outcomes and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            server.close()
    assert server.outcomes == ["answered"]
    [progress] = apis.named("chat.postMessage")
    assert progress["thread_ts"] == "1763800000.000100"
    final = apis.named("chat.update")[-1]["text"]
    assert final.startswith("(demo model) Nothing is attached to this run")


def test_serve_links_each_answer_to_its_page_and_serves_it(tmp_path: Path, monkeypatch) -> None:
    """With RUN_PAGE_KEY set, serve's answers link their run's page at serve's own address, and a GET of that
    link answers the page; an altered link a 403."""
    import re

    monkeypatch.setenv("RUN_PAGE_KEY", "local-page-key-0123456789")
    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills",
                            use_demo_model=True, sandbox_mode="off")  # fmt: skip
    with fake_apis() as (apis, base):
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/",
                                           "RUN_PAGE_KEY": "local-page-key-0123456789"})  # fmt: skip
        server = LocalServer(runtime, triggers, port=0).start()
        try:
            body, headers = slack_request(slack_mention("EvPage"))
            request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
            urllib.request.urlopen(request, timeout=10).close()
            deadline = time.monotonic() + 30
            while not server.outcomes and time.monotonic() < deadline:
                time.sleep(0.05)
            final = apis.named("chat.update")[-1]["text"]
            [link] = re.findall(r"<(http://127\.0\.0\.1:\d+/runs/[^|>]+)\|what it did>", final)
            assert link.startswith(server.url)
            with urllib.request.urlopen(link, timeout=10) as response:
                page = response.read().decode()
                assert response.headers["Content-Type"].startswith("text/html")
            assert "<!DOCTYPE html>" in page and "design-review" in page
            try:
                urllib.request.urlopen(link[:-1] + ("0" if link[-1] != "0" else "1"), timeout=10)
                raise AssertionError("an altered link opened the page")
            except urllib.error.HTTPError as error:
                assert error.code == 403
        finally:
            server.close()


def _raw_post(url: str, head: bytes, body: bytes = b"") -> bytes:
    import socket
    from urllib.parse import urlparse

    where = urlparse(url)
    with socket.create_connection((where.hostname, where.port), timeout=5) as sock:
        sock.sendall(head + b"\r\n\r\n" + body)
        chunks = []
        while chunk := sock.recv(65536):  # the server closes after a bad frame: no hang
            chunks.append(chunk)
    return b"".join(chunks)


def test_malformed_framing_gets_a_400_and_logs_never_carry_the_last_events_ids(tmp_path: Path) -> None:
    """Was: 'Content-Length: abc' closed the connection with a traceback, '-1' hung a kept-open connection, and
    a rejected forged request was logged with the previous event's correlation id and run id."""
    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(
        workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills", use_demo_model=True,
        sandbox_mode="off",
    )  # fmt: skip
    with fake_apis() as (_, base):
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/"})
        server = LocalServer(runtime, triggers, port=0).start()
        stream = io.StringIO()
        server.webhook_log.registered_handler.setStream(stream)  # type: ignore[attr-defined]
        try:
            for length in (b"abc", b"-1"):
                head = b"POST /slack/events HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Length: " + length
                answer = _raw_post(server.url, head)
                assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400"), answer[:80]
            body, headers = slack_request(slack_mention("EvFirst"))
            request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
            urllib.request.urlopen(request, timeout=10).read()
            deadline = time.monotonic() + 30
            while not server.outcomes and time.monotonic() < deadline:
                time.sleep(0.05)
            stream.seek(0)
            stream.truncate(0)
            forged, _ = slack_request(slack_mention("EvForged"))
            request = urllib.request.Request(
                f"{server.url}/slack/events", data=forged, headers={**headers, "X-Slack-Signature": "v0=" + "0" * 64}
            )
            try:
                urllib.request.urlopen(request, timeout=10)
            except urllib.error.HTTPError as error:
                assert error.code == 401
        finally:
            server.close()
    lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]
    rejected = [line for line in lines if "forged" in json.dumps(line)]
    assert rejected and all("run_id" not in line and line.get("correlation_id") != "EvFirst" for line in rejected)


@pytest.mark.timed
def test_serve_takes_a_burst_lets_a_silent_client_go_and_answers_an_oversized_body(tmp_path: Path) -> None:
    """Was: a listen backlog of 5 (40-60 % of 200 concurrent connections reset), no read timeout (one slow
    client held a thread forever), and a 10 MB body dropped the connection instead of answering 413."""
    import socket
    import threading
    from urllib.parse import urlparse

    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills",
                            use_demo_model=True, sandbox_mode="off")  # fmt: skip
    server = LocalServer(runtime, TriggerConfig.from_env(ENV), port=0).start()
    where = urlparse(server.url)
    server.read_timeout = 1.0
    try:
        statuses: list[int] = []

        def unsigned() -> None:  # refused (401) by the webhook: what matters is that it is answered, not reset
            request = urllib.request.Request(f"{server.url}/slack/events", data=b"{}", method="POST")
            try:
                urllib.request.urlopen(request, timeout=30)
            except urllib.error.HTTPError as error:
                statuses.append(error.code)
            except OSError:
                statuses.append(0)

        burst = [threading.Thread(target=unsigned) for _ in range(200)]
        for thread in burst:
            thread.start()
        for thread in burst:
            thread.join(60)
        assert statuses.count(0) == 0 and len(statuses) == 200

        with socket.create_connection((where.hostname, where.port), timeout=10) as silent:
            silent.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")  # then nothing
            started = time.monotonic()
            assert silent.recv(100) == b""  # let go, not held
            assert time.monotonic() - started < 5

        big = b"x" * (11 * 1024 * 1024)
        answer = _raw_post(server.url, b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: %d" % len(big), big)
        assert answer.startswith(b"HTTP/1.0 413") or answer.startswith(b"HTTP/1.1 413"), answer[:80]
    finally:
        server.close()
