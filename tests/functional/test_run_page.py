"""A page behind every answer: the run's transcript, chart, files, helpers, costs and ratings as one self-contained
HTML page, served by the stack's webhook behind a signed, expiring link that opens that run only; a line per run in
the runs channel. Through the webhook's HTTP path, SQS and DynamoDB (moto) and the fake Slack API."""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from typing import Any

from agent_runtime.pages import PageLinks
from agent_runtime.testing import reply

from tests.pages_support import API, KEY, strict
from tests.slack_support import feedback_buttons, rate
from tests.triggers_support import slack_mention, slack_request
from tests.worker_support import read_design

HOSTILE = "# Design\n\nRetries: 5. <script>alert('x')</script> Token: jira-token and xoxb-test.\x1b[2J\n"


def answered(s: Any, event_id: str = "Ev700", **mention: Any) -> tuple[str, str]:
    """A mention with a hostile design attached, answered: the run id and the page's link from the footer."""
    s.apis.files["/files/design.md"] = HOSTILE.encode()
    attachment = {"id": "F1", "name": "design.md", "url_private": f"{s.base}/files/design.md", "size": 90,
                  "mimetype": "text/markdown"}  # fmt: skip
    s.post("/slack/events", *slack_request(slack_mention(event_id, files=[attachment], **mention)))
    assert s.deliver() == ["answered"]
    final = s.apis.named("chat.update")[-1]["text"]
    [link] = re.findall(r"<(https://agents\.example/runs/[^|>]+)\|what it did>", final)
    run_id = urllib.parse.unquote(urllib.parse.urlsplit(link).path.split("/")[2])
    return run_id, link


def test_the_answers_link_opens_that_runs_page_and_nothing_else(system, scripted) -> None:
    server = scripted(read_design, reply("*Verdict*: add a rollback plan."))
    s = system(server, secrets={"RUN_PAGE_KEY": KEY}, settings={"api_url": API})
    run_id, link = answered(s)
    final = s.apis.named("chat.update")[-1]["text"]
    assert final.startswith("*Verdict*") and "design-review workflow> · <https://agents.example/runs/" in final
    opened = s.get(link)
    assert opened["statusCode"] == 200 and opened["headers"]["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in opened["headers"]["Content-Security-Policy"]
    page = opened["body"]
    strict(page)
    assert run_id in page and "<svg" in page and "design.md" in page and "file_read" in page
    assert "&lt;script&gt;alert" in page and "<script" not in page  # the tool's markup, as text
    assert "\x1b" not in page and "\\x1b[2J" in page  # inert
    assert "jira-token" not in page and "xoxb-test" not in page and "***" in page  # declared secrets redacted
    assert "This link expires" in page and "private conversation" not in page

    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))
    tampered = link[:-1] + ("0" if link[-1] != "0" else "1")
    links = PageLinks(API, KEY)
    other = links.url("run-someone-else", time.time())  # a valid link to another run ...
    other_signature = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(other).query))["signature"]
    forged = {
        "altered signature": tampered,
        "another run's signature": link.replace(query["signature"], other_signature),
        "expired": links.url(run_id, time.time() - 8 * 86_400),
        "made private": link.replace("private=0", "private=1"),
        "another key": PageLinks(API, "some-other-key-0123456789").url(run_id, time.time()),
        "no signature": link.split("?")[0],
    }
    for why, url in forged.items():
        refused = s.get(url)
        assert refused["statusCode"] == 403 and run_id not in refused["body"], why
    assert "expired" in json.loads(s.get(forged["expired"])["body"])["error"]
    assert s.get(other)["statusCode"] == 404  # signed, but no such run: nothing to list or guess
    assert s.get(link.replace("/page?", "/other?"))["statusCode"] == 404


def test_without_a_key_no_link_is_made_and_no_page_is_served(system, scripted) -> None:
    s = system(scripted(reply("Fine.")), settings={"api_url": API})
    s.post("/slack/events", *slack_request(slack_mention("Ev710")))
    assert s.deliver() == ["answered"]
    assert "agents.example" not in s.apis.named("chat.update")[-1]["text"]
    forged = PageLinks(API, KEY).url("run-x", time.time())
    assert s.get(forged)["statusCode"] == 404  # pages are off: not even a signature check to probe


def test_the_runs_channel_gets_a_line_per_run_and_its_ratings(system, scripted) -> None:
    server = scripted(read_design, reply("Add a rollback plan."), reply("Private: fine."))
    settings = {"api_url": API, "runs_channel": "C0RUNS"}
    s = system(server, secrets={"RUN_PAGE_KEY": KEY}, settings=settings)
    _, link = answered(s)
    [line] = [m for m in s.apis.named("chat.postMessage") if m["channel"] == "C0RUNS"]
    assert "thread_ts" not in line  # a message of its own
    text = line["text"]
    assert text.startswith(":white_check_mark: *design-review* · slack app_mention in <#C0REVIEW> · completed · $")
    assert re.search(r" · \d+\.\d s · <https://agents\.example/runs/", text) and link in text
    values = feedback_buttons(s)
    rate(s, values["good"], "U0DANA")
    assert s.deliver() == ["rated"]
    [edited] = [u for u in s.apis.named("chat.update") if u["channel"] == "C0RUNS"]
    assert edited["text"] == text + " · rated :+1: 1 :-1: 0"
    assert "<li>dana: good</li>" in s.get(link)["body"]  # the rater by the name their click gave, not U0DANA

    s.apis.private.add("C0REVIEW")  # made private: the next run's line says less, its page says so
    s.post("/slack/events", *slack_request(slack_mention("Ev720", ts="1763800720.0")))
    assert s.deliver() == ["answered"]
    private_line = [m for m in s.apis.named("chat.postMessage") if m["channel"] == "C0RUNS"][-1]["text"]
    assert "a private conversation" in private_line and "C0REVIEW" not in private_line
    assert "agents.example" not in private_line  # no link: the conversation's words stay where they were said
    answer = [u for u in s.apis.named("chat.update") if u["channel"] == "C0REVIEW"][-1]["text"]
    [private_link] = re.findall(r"<(https://agents\.example/runs/[^|>]+)\|what it did>", answer)
    page = s.get(private_link)["body"]
    assert "From a private conversation" in page


def test_a_streamed_answer_ends_with_the_pages_link(system, scripted) -> None:
    """Pages x streaming: the streamed message ends as the answer does, the page's link in its footer."""
    from agent_runtime.testing import Paced

    from tests.slack_support import streamed_text

    s = system(scripted(Paced(reply("The design needs a rollback plan. " * 20), interval=0.002)),
               secrets={"RUN_PAGE_KEY": KEY}, settings={"api_url": API})  # fmt: skip
    s.apis.streams = True
    s.post("/slack/events", *slack_request(slack_mention("Ev730")))
    assert s.deliver() == ["answered"]
    text = streamed_text(s)
    assert text.startswith("The design needs a rollback plan.")
    [link] = re.findall(r"<(https://agents\.example/runs/[^|>]+)\|what it did>_$", text.strip())
    assert s.get(link)["statusCode"] == 200


def test_a_channel_slack_will_not_describe_counts_as_private_and_a_broken_secret_costs_only_the_link(
    system,
    scripted,
) -> None:
    """conversations.info refused (the app lacks channels:read): the run is private — its line in the runs channel
    has no link and no channel; and a secret that cannot be read loses the answer's link, never the answer."""
    from agent_runtime.service.reports import Reports

    s = system(scripted(reply("Fine.")), secrets={"RUN_PAGE_KEY": KEY},
               settings={"api_url": API, "runs_channel": "C0RUNS"})  # fmt: skip
    s.apis.refuse["conversations.info"] = "missing_scope"
    s.post("/slack/events", *slack_request(slack_mention("Ev740")))
    assert s.deliver() == ["answered"]
    [line] = [m["text"] for m in s.apis.named("chat.postMessage") if m["channel"] == "C0RUNS"]
    assert "a private conversation" in line and "agents.example" not in line and "C0REVIEW" not in line
    [link] = re.findall(r"<(https://[^|>]+)\|what it did>", s.apis.named("chat.update")[-1]["text"])
    assert "From a private conversation" in s.get(link)["body"]

    def unreadable(name: str) -> str | None:
        raise TimeoutError("Secrets Manager did not answer")

    from agent_runtime.record import RunRecord

    reports = Reports(
        s.worker.process.config,
        s.worker.process.runs,
        unreadable,
        lambda: s.worker.process.replies,
        s.worker.process.log,
        time.time,
    )
    [summary] = s.worker.process.runs.list_runs(limit=1)
    event = s.worker.process.runs.load_event(summary.run_id)
    assert event is not None
    assert reports.page(event, RunRecord(summary.run_id, "design-review", "gpt-4o")) == (None, True)
