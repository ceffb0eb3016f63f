"""Slack/JIRA event → webhook → SQS (moto server) → worker → scripted model → reply on a fake Slack/JIRA API.

Everything crosses real HTTP: the webhook's SQS and DynamoDB calls, the worker's S3/DynamoDB store, the model
(the openai client to the scripted server) and the replies (slack_sdk and urllib to the fake APIs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from agent_runtime.config import RuntimeConfig
from agent_runtime.service.worker import Process, Worker
from agent_runtime.stores import LocalStore, ThreadStore
from agent_runtime.testing import Reply, ScriptedCall, reply, server_error
from agent_runtime.triggers.queue import decode

from tests.conftest import REPO, model_for
from tests.triggers_support import (
    jira_comment,
    jira_request,
    slack_mention,
    slack_request,
)
from tests.worker_support import WORKFLOW, read_design


def test_a_slack_mention_is_answered_in_its_thread_with_progress(system, scripted) -> None:
    server = scripted(read_design, reply("*Verdict*: add a rollback plan (design.md line 3)."))
    s = system(server)
    s.apis.files["/files/design.md"] = b"# Design\n\nRetries: 5, no rollback plan.\n"
    attachment = {"id": "F1", "name": "design.md", "url_private": f"{s.base}/files/design.md", "size": 42}
    mention = slack_mention("Ev100", files=[{**attachment, "mimetype": "text/markdown"}])
    assert json.loads(s.post("/slack/events", *slack_request(mention))["body"])["status"] == "queued"
    assert s.deliver() == ["answered"]
    [progress] = s.apis.named("chat.postMessage")
    assert (progress["channel"], progress["thread_ts"]) == ("C0REVIEW", "1763800000.000100")
    assert progress["text"].endswith("Working on it…")
    updates = s.apis.named("chat.update")
    assert all(u["ts"] == "1763800100.000001" and u["channel"] == "C0REVIEW" for u in updates)
    assert any("step 1 · file_read" in u["text"] for u in updates[:-1])  # the progress message moved
    assert updates[-1]["text"] == (
        "*Verdict*: add a rollback plan (design.md line 3).\n\n_Answered by the "
        "<https://github.com/acme/agents/blob/main/workflows/design-review.yaml|design-review workflow>_"
    )
    # the attachment was downloaded with the bot token and read by the model
    assert "Retries: 5, no rollback plan." in json.dumps(server.requests[1].messages)
    state, _ = ThreadStore(s.store).load("slack-T0TEAM-C0REVIEW-1763800000.000100")
    assert state is not None and state.messages[-1]["content"].startswith("*Verdict*")
    emf = s.metrics.serialize_metric_set()  # CloudWatch embedded metric format, as the handler flushes it
    assert (emf["Runs"], emf["ToolCalls"], emf["Compactions"]) == ([1.0], [1.0], [0.0])
    assert emf["Tokens"][0] > 0 and "RunFailures" not in emf
    # SQS delivers the same message again: nothing runs, nothing is posted
    calls = len(s.apis.calls)
    assert s.redeliver() == ["duplicate"]
    assert len(s.apis.calls) == calls


def test_a_jira_comment_is_answered_with_an_adf_comment(system, scripted) -> None:
    s = system(scripted(reply("**Not ready**: two open TODOs.\n- line 23\n- line 26")))
    assert json.loads(s.post("/jira/webhook", *jira_request(jira_comment("777")))["body"])["status"] == "queued"
    assert s.deliver() == ["answered"]
    [comment] = s.apis.named("jira.comment")
    assert comment["path"] == "/rest/api/3/issue/PROJ-1423/comment"
    content = comment["body"]["content"]
    assert content[0] == {
        "type": "paragraph",
        "content": [
            {"type": "text", "text": "Not ready", "marks": [{"type": "strong"}]},
            {"type": "text", "text": ": two open TODOs."},
        ],
    }
    assert content[1]["type"] == "bulletList" and len(content[1]["content"]) == 2


def test_a_failed_run_replies_with_an_apology_and_the_run_id(system, scripted) -> None:
    s = system(scripted(server_error(500), server_error(500), server_error(500)))
    s.post("/slack/events", *slack_request(slack_mention("Ev200")))
    assert s.deliver() == ["failed"]
    final = s.apis.named("chat.update")[-1]["text"]
    assert re.fullmatch(
        r"Sorry — I could not finish this one\. If you report it, quote run `run-[0-9a-f]{24}`\.", final
    )


def test_a_thread_continues_and_a_long_run_resumes_through_the_queue(system, scripted) -> None:
    server = scripted(reply("First answer."), reply("Second answer, knowing the first."))
    s = system(server)
    s.post("/slack/events", *slack_request(slack_mention("Ev300")))
    assert s.deliver() == ["answered"]
    follow_up = slack_mention("Ev301", ts="1763800050.000200", thread_ts="1763800000.000100", text="<@U0BOT> and?")
    s.post("/slack/events", *slack_request(follow_up))
    # the invocation is out of time at once: the run checkpoints, suspends and re-enqueues itself
    assert s.deliver(seconds=0, batches=1) == ["suspended"]
    assert s.apis.named("chat.update")[-1]["text"].startswith(":hourglass_flowing_sand: Still working")
    assert s.deliver() == ["answered"]  # the continuation message, in the thread's message group
    second = server.requests[1].messages
    assert [m["content"] for m in second if m["role"] == "assistant"] == ["First answer."]
    assert "and?" in str([m for m in second if m["role"] == "user"][-1]["content"])
    updates = [u["text"] for u in s.apis.named("chat.update") if not u["text"].startswith(":hourglass")]
    assert [u.split("\n\n_Answered")[0] for u in updates] == ["First answer.", "Second answer, knowing the first."]
    assert len(s.apis.named("chat.postMessage")) == 2  # one progress message per turn, none for the continuation


def test_a_message_over_the_queue_limit_travels_by_claim_check(system, scripted) -> None:
    server = scripted(reply("Read it all."))
    s = system(server)
    pasted = "\n".join(f"2026-11-20T09:00:{n % 60:02d}Z INFO line {n} " + "x" * 60 for n in range(5000))  # ~400 KB
    s.post("/slack/events", *slack_request(slack_mention("Ev400", text=f"<@U0BOT> what failed?\n{pasted}")))
    assert s.deliver() == ["answered"]
    [message] = s.received
    claim = json.loads(message["Body"])
    assert claim["type"] == "claim" and len(message["Body"]) < 200  # SQS carried a pointer, the store the body
    assert s.store.blob_size("claims", claim["key"]) > 400_000
    first = server.requests[0].messages
    assert "virtual file" in json.dumps(first)  # the 400 KB message arrived whole and became a virtual file


def test_a_new_turn_waits_behind_a_suspended_one_in_the_same_thread(tmp_path: Path, scripted) -> None:
    from agent_runtime.chat.channels import Replies
    from agent_runtime.deadline import Deadline
    from agent_runtime.triggers.queue import LocalQueue
    from agent_runtime.triggers.slack import parse

    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    store = LocalStore(tmp_path / "state")
    queue = LocalQueue(store)
    server = scripted(reply("Answer to the first."), reply("Answer to the second."))
    model = model_for(server)
    worker = Worker(
        Process(
            RuntimeConfig(workflows_dir=tmp_path, skills_dir=REPO / "skills"),
            store=store,
            queue=queue,
            models=lambda wf: nullcontext(model),
            replies=Replies(),
        )
    )

    def event(event_id: str, ts: str, text: str) -> dict[str, Any]:
        mention = slack_mention(event_id, ts=ts, thread_ts="1763800000.000100", text=text)
        parsed = parse(json.dumps(mention).encode(), bot_user_id="U0BOT")
        return {"type": "event", "event": {**parsed.to_dict(), "workflow": "design-review"}}

    assert worker.handle(event("E1", "1763800001.0", "first"), deadline=Deadline.after(0)) == "suspended"
    assert worker.handle(event("E2", "1763800002.0", "second"), deadline=Deadline.after(60)) == "deferred"
    outcomes = []
    while not queue.messages.empty():
        outcomes.append(worker.handle(decode(queue.messages.get(), store), deadline=Deadline.after(60)))
    assert outcomes == ["answered", "answered"]  # the continuation first, then the deferred turn
    second = server.requests[1].messages
    assert [m["content"] for m in second if m["role"] == "assistant"] == ["Answer to the first."]


def test_a_new_jira_issue_with_an_attachment_is_read_and_answered(system, scripted) -> None:
    def read_spec(request: Any) -> Reply:
        file_id = re.search(r"(file-[0-9a-f]+): \"spec\.md", request.system_text()).group(1)
        return Reply(calls=(ScriptedCall("file_read", {"id": file_id}),))

    server = scripted(read_spec, reply("The spec has no rollback section."))
    s = system(server)
    s.apis.files["/rest/api/3/attachment/content/10"] = b"# Spec\n\nRollout: all at once.\n"
    issue = jira_comment("1")
    del issue["comment"]
    issue["webhookEvent"] = "jira:issue_created"
    issue["issue"]["fields"]["description"] = "Please review the attached spec."
    issue["issue"]["fields"]["attachment"] = [
        {
            "id": "10",
            "filename": "spec.md",
            "mimeType": "text/markdown",
            "size": 30,
            "content": f"{s.base}/rest/api/3/attachment/content/10",
        }
    ]
    assert json.loads(s.post("/jira/webhook", *jira_request(issue))["body"])["status"] == "queued"
    assert s.deliver() == ["answered"]
    assert "Rollout: all at once." in json.dumps(server.requests[1].messages)
    [comment] = s.apis.named("jira.comment")
    assert comment["body"]["content"][0]["content"][0]["text"].startswith("The spec has no rollback section.")


def test_a_turn_never_overwrites_a_thread_saved_after_it_started(tmp_path: Path, scripted, caplog) -> None:
    """An out-of-band writer saves the thread while a turn runs: the turn's answer is posted, its save refused."""
    from contextlib import contextmanager
    from dataclasses import replace

    from agent_runtime.chat.channels import Replies
    from agent_runtime.deadline import Deadline
    from agent_runtime.triggers.slack import parse

    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    store = LocalStore(tmp_path / "state")
    threads = ThreadStore(store)
    server = scripted(reply("First."), reply("Second."))
    model = model_for(server)

    @contextmanager
    def models(workflow: Any) -> Iterator[Any]:
        if len(server.requests) == 1:  # during the second turn, after it loaded the thread
            state, version = threads.load(thread)
            marked = [*state.messages, {"role": "user", "content": "saved meanwhile"}]
            threads.save(thread, replace(state, messages=marked), expected_version=version)
        yield model

    worker = Worker(
        Process(
            RuntimeConfig(workflows_dir=tmp_path, skills_dir=REPO / "skills"),
            store=store,
            queue=None,
            models=models,
            replies=Replies(),
        )
    )

    def event(event_id: str, ts: str) -> dict[str, Any]:
        mention = slack_mention(event_id, ts=ts, thread_ts="1763800000.000100", text=f"<@U0BOT> {event_id}")
        parsed = parse(json.dumps(mention).encode(), bot_user_id="U0BOT")
        return {"type": "event", "event": {**parsed.to_dict(), "workflow": "design-review"}}

    first = event("E1", "1763800001.0")
    thread = first["event"]["thread_id"]
    assert worker.handle(first, deadline=Deadline.after(60)) == "answered"
    assert "First." in json.dumps(threads.load(thread)[0].messages)
    assert worker.handle(event("E2", "1763800002.0"), deadline=Deadline.after(60)) == "answered"
    kept = json.dumps(threads.load(thread)[0].messages)
    assert "saved meanwhile" in kept and "Second." not in kept
    assert "thread saved by another turn since this one started" in caplog.text


def charts(count: int) -> Reply:
    code = f"for n in range({count}):\n    open(f'chart{{n}}.csv', 'w').write(f'x,y\\n{{n}},{{n * n}}\\n')\n'done'"
    return Reply(calls=(ScriptedCall("python", {"code": code}),))


def with_sandbox(tmp_path: Path) -> None:
    (tmp_path / "design-review.yaml").write_text(WORKFLOW + "sandbox: {enabled: true}\n")


def test_files_the_turns_python_wrote_are_attached_in_the_slack_thread(system, scripted, sandbox, tmp_path) -> None:
    with_sandbox(tmp_path)
    s = system(scripted(charts(6), reply("Six tables, see the files.")), sandbox=sandbox)
    s.post("/slack/events", *slack_request(slack_mention("Ev500")))
    assert s.deliver() == ["answered"]
    asked = s.apis.named("files.getUploadURLExternal")
    assert [a["filename"] for a in asked] == [f"chart{n}.csv" for n in range(5)]  # at most five per answer
    assert s.apis.uploads["F1"] == b"x,y\n0,0\n" and s.apis.uploads["F5"] == b"x,y\n4,16\n"
    [done] = s.apis.named("files.completeUploadExternal")
    assert (done["channel_id"], done["thread_ts"]) == ("C0REVIEW", "1763800000.000100")
    assert [f["id"] for f in json.loads(done["files"])] == ["F1", "F2", "F3", "F4", "F5"]
    answer = s.apis.named("chat.update")[-1]["text"]
    assert answer.startswith("Six tables") and "_Not attached (at most 5 files, 20 MB): chart5.csv_" in answer


def test_a_jira_answer_attaches_the_files_to_the_issue(system, scripted, sandbox, tmp_path) -> None:
    with_sandbox(tmp_path)
    s = system(scripted(charts(1), reply("One table attached.")), sandbox=sandbox)
    s.post("/jira/webhook", *jira_request(jira_comment("901")))
    assert s.deliver() == ["answered"]
    [attach] = s.apis.named("jira.attach")
    assert attach == {"path": "/rest/api/3/issue/PROJ-1423/attachments", "token": "no-check"}
    body = s.apis.uploads[attach["path"]]
    assert b'name="file"; filename="chart0.csv"' in body and b"x,y\r\n" not in body and b"x,y\n0,0\n" in body
    assert s.apis.named("jira.comment")[-1]["body"]["content"][0]["content"][0]["text"] == "One table attached."


def test_a_refused_upload_is_said_in_the_thread_and_the_answer_stands(system, scripted, sandbox, tmp_path) -> None:
    with_sandbox(tmp_path)
    s = system(scripted(charts(1), reply("Here it is.")), sandbox=sandbox)
    s.apis.refuse["files.getUploadURLExternal"] = "missing_scope"  # the app lacks files:write
    s.post("/slack/events", *slack_request(slack_mention("Ev501")))
    assert s.deliver() == ["answered"]
    assert s.apis.named("chat.update")[-1]["text"].startswith("Here it is.")
    note = s.apis.named("chat.postMessage")[-1]
    assert note["text"] == "(The files could not be attached: Slack file upload failed: missing_scope)"
    assert note["thread_ts"] == "1763800000.000100"
