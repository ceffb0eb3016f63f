"""A run cut off anywhere in its Slack thread (serve stopped, a Lambda timing out) and taken up again leaves the
thread as a run that was never cut off would: one answer, whole, no working message, no cursor.

Through the real path: the playground's page sends the mention, serve's webhook queues it, serve's worker takes
it and streams into the thread the playground's Web API keeps; the model is the scripted server over HTTP. The
cut is a process that stops at one Slack call and never goes on: the worker's Web API client freezes before
that call (the thread that ran it waits, as a frozen process would), its run's row is made to name a process
that has exited, and serve's start (``resume_interrupted``) takes the run up in the same store."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import pytest
from agent_runtime.deadline import Deadline
from agent_runtime.record import RunRecord
from agent_runtime.service.resumed import resume_interrupted
from agent_runtime.service.serve import LocalServer
from agent_runtime.stores import RunStore
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.steps import Reply, ScriptedRequest
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.queue import decode
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from tests.playground_support import HELPER, act, page_token, playground_runtime, until

CUT_AT = ["chat.startStream", "chat.update", "chat.appendStream", "chat.stopStream", "chat.delete"]


class Frozen(BaseException):
    """Ends a frozen worker's thread once the test is over (its process would never have gone on)."""


@dataclass
class Cut:
    """Before the ``occurrence``-th call of ``method``, the calling thread freezes until released."""

    method: str = ""
    occurrence: int = 0
    seen: int = 0
    frozen: threading.Event = field(default_factory=threading.Event)


class CuttingClient(WebClient):
    release = threading.Event()  # every frozen thread of the module, at its end

    def __init__(self, cut: Cut, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cut = cut

    def api_call(self, api_method: str, **kwargs: Any) -> Any:  # type: ignore[override]
        if api_method == self.cut.method:
            self.cut.seen += 1
            if self.cut.seen == self.cut.occurrence:
                self.cut.frozen.set()
                self.release.wait()
                raise Frozen
        return super().api_call(api_method, **kwargs)


@dataclass
class Served:
    server: LocalServer
    model: ScriptedServer
    token: str
    answer: list[str]  # the scripted model's answer for the example under way
    threads: list[threading.Thread]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("debris")
    runtime = playground_runtime(folder, {"helper": HELPER}, demo=False)
    answer = [""]

    def answering(request: ScriptedRequest) -> Reply:
        return Reply(text=answer[0])

    with ScriptedServer([], intercept=answering) as model:
        server = LocalServer(runtime, TriggerConfig.from_env({}), port=0, playground=True)
        threading.Thread(target=server.http.serve_forever, daemon=True).start()  # the worker is the test's
        threads: list[threading.Thread] = []
        try:
            yield Served(server, model, page_token(server.url), answer, threads)
        finally:
            CuttingClient.release.set()
            for thread in threads:
                thread.join(10)
            server.close()


def _exited_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _as_if_gone(runs: RunStore) -> None:
    """The newest run's row, if it says running, names a process that has exited (as serve's, stopped, would)."""
    row = runs.list_runs(limit=1)[0]
    if row.status != "running":
        return
    record = RunRecord(row.run_id, row.workflow, row.model or "-")
    record.started_at = row.started_at
    gone = {"pid": _exited_pid(), "host": socket.gethostname(), "started": None}
    runs.save_started(record, thread_id=row.thread_id, process=gone)


def _drain(served: Served) -> None:
    server = served.server
    while not server.queue.messages.empty():
        server.worker.handle(decode(server.queue.messages.get(), server.store), deadline=Deadline.none())


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(CUT_AT),
    occurrence=st.integers(1, 3),
    words=st.integers(3, 400),
    redelivered=st.booleans(),
)
@example(method="chat.startStream", occurrence=1, words=300, redelivered=False)  # before the first token
@example(method="chat.appendStream", occurrence=2, words=400, redelivered=False)  # mid-stream
@example(method="chat.stopStream", occurrence=1, words=300, redelivered=True)  # the answer out, its stream open
@example(method="chat.delete", occurrence=1, words=300, redelivered=False)  # the answer out, the working message not
def test_a_run_cut_off_anywhere_and_resumed_leaves_one_answer_and_no_debris(
    served: Served, monkeypatch: pytest.MonkeyPatch, method: str, occurrence: int, words: int, redelivered: bool
) -> None:
    """Whatever Slack call the cut lands before (or none: the run ends first), once the run is taken up again —
    serve started again, or (``redelivered``) the queue delivering the message again, as SQS does after a Lambda
    invocation died — the thread holds exactly one message of the app: the whole answer, its stream ended, no
    working message; the parent counts that one reply; the run is answered once, its record keeps its first start."""
    server, runs = served.server, RunStore(served.server.store)
    monkeypatch.setenv("OPENAI_BASE_URL", served.model.base_url)  # read as each run opens its model
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    served.answer[0] = " ".join(f"w{n}" for n in range(words))
    said = act(server.url, "message", {"channel": "C0HELP", "text": "@agent what changed?"}, served.token)
    body = server.queue.messages.get(timeout=10)
    assert server.playground is not None and server.worker.process.replies.slack is not None
    replier = server.worker.process.replies.slack
    cut, plain = Cut(method, occurrence), replier.client
    replier.client = CuttingClient(cut, token=plain.token, base_url=plain.base_url)
    first = threading.Thread(target=_frozen_or_done, args=(server, body), daemon=True)
    served.threads.append(first)
    first.start()
    until(lambda: cut.frozen.is_set() or not first.is_alive(), what="the cut, or the run's end")
    replier.client = plain  # serve, started again, talks to Slack as it did
    row = runs.list_runs(limit=1)[0]
    if redelivered and cut.frozen.is_set():
        server.worker.handle(decode(body, server.store), deadline=Deadline.none())
    else:
        _as_if_gone(runs)
        resume_interrupted(runs, server.queue, server.worker_log)
    _drain(served)
    thread = server.playground.workspace.thread("C0HELP", said["ts"])
    mine = [m for m in thread if m.get("bot_id")]
    assert len(mine) == 1, (cut, [(m.get("text"), m.get("_stream", {}).get("state")) for m in mine])
    assert (mine[0].get("_stream") or {}).get("state") in (None, "stopped")  # no cursor
    assert served.answer[0] in mine[0]["text"] and "Working on it" not in mine[0]["text"]
    assert thread[0]["reply_count"] == 1  # the parent counts its one reply (a deleted one is none)
    assert runs.reply_state(row.run_id) == "posted"
    record = runs.load_record(row.run_id)
    assert record is not None and record["started_at"] == row.started_at  # its first start, kept


def _frozen_or_done(server: LocalServer, body: str) -> None:
    with suppress(Frozen):
        server.worker.handle(decode(body, server.store), deadline=Deadline.none())


def test_a_thread_counts_its_replies_as_slack_does(served: Served) -> None:
    """A reply deleted is no reply: the parent's count, latest reply and repliers follow what is still there."""
    play = served.server.playground
    assert play is not None
    said = act(served.server.url, "message", {"channel": "C0HELP", "text": "a thread, no mention"}, served.token)
    replies = [play.slack.post(play.slack.bot_message("C0HELP", said["ts"], f"reply {n}", None)) for n in range(3)]
    parent = play.workspace.message("C0HELP", said["ts"])
    assert parent is not None and parent["reply_count"] == 3 and parent["latest_reply"] == replies[-1]["ts"]
    for gone, left in ((replies[-1], 2), (replies[0], 1), (replies[1], 0)):
        auth = {"Authorization": f"Bearer {play.slack.token}"}
        assert play.slack.serve("chat.delete", auth, f"channel=C0HELP&ts={gone['ts']}", b"")[0] == 200
        parent = play.workspace.message("C0HELP", said["ts"])
        assert parent is not None and parent.get("reply_count", 0) == left
        assert parent.get("latest_reply") == (replies[1]["ts"] if left else None)
    assert parent is not None and "reply_users" not in parent
