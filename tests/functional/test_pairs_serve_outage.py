"""The webhook's outage answer x serve (B x serve, not Lambda): serve's queue is in memory but its idempotency
records are the local store's files, and a disk that is full (or a quota reached, an I/O error) is serve's
outage as DynamoDB's is the stack's. Invariant: a delivery met by a store that cannot write is answered 503 with
Retry-After (Slack's retry is taken), nothing queued nor recorded; once the disk has room the same delivery's
retry is queued once, and its run answers. Was: the OSError went up to serve's catch-all, a 500 "internal
error" that claims a bug.

Real paths: signed Slack events over HTTP into serve's webhook, serve's queue and lanes, the scripted model over
HTTP, the replies on a fake Slack API. The full disk is the store's write failing as the OS fails it (ENOSPC)."""

from __future__ import annotations

import errno
import urllib.error
import urllib.request
from typing import Any

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.service.serve import LocalServer
from agent_runtime.service.webhook import RETRY_AFTER
from agent_runtime.stores import LocalStore
from agent_runtime.testing import ScriptedServer, reply
from agent_runtime.triggers.config import TriggerConfig
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.playground_support import until
from tests.triggers_support import BOT_USER, ENV, fake_apis, slack_mention, slack_request
from tests.worker_support import WORKFLOW

OUTAGES = (errno.ENOSPC, errno.EDQUOT, errno.EIO)


def post(server: LocalServer, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=st.sampled_from(OUTAGES), retries=st.integers(1, 2))
def test_a_full_disk_under_serve_is_a_503_and_the_retry_once_it_has_room_runs_once(
    code: int, retries: int, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path = tmp_path_factory.mktemp("serve")
    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills",
                            use_demo_model=False, sandbox_mode="off")  # fmt: skip
    full = [True]
    put_item = LocalStore.put_item

    def disk(self: LocalStore, *args: Any, **kwargs: Any) -> int:
        if full[0]:
            raise OSError(code, "the disk says no")
        return put_item(self, *args, **kwargs)

    with ScriptedServer([reply("the answer")]) as model, fake_apis() as (apis, base):
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/"})
        server = LocalServer(runtime, triggers, port=0).start()
        try:
            body, headers = slack_request(slack_mention("EvFull", text=f"<@{BOT_USER}> review please"))
            monkeypatch.setattr(LocalStore, "put_item", disk)
            for _ in range(retries):  # Slack's retries while the disk is full
                status, said = post(server, body, headers)
                assert (status, said.get("Retry-After")) == (503, RETRY_AFTER), (status, said)
            assert server.queue.messages.empty() and not server.outcomes
            full[0] = False
            assert post(server, body, headers)[0] == 200
            assert post(server, body, headers)[0] == 200  # one more retry: a duplicate, queued before
            until(lambda: server.outcomes, timeout=20, what="the run, once the disk had room")
        finally:
            server.close()
    assert server.outcomes == ["answered"]
    assert any("the answer" in str(c.get("text")) for c in apis.named("chat.update"))
