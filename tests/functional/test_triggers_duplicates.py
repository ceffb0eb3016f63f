"""1,000 events, 30 % of them duplicates or retries, some SQS messages delivered twice: exactly one run and one
reply for each distinct user action.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter

from agent_runtime.testing import Reply, ScriptedRequest

from tests.triggers_support import jira_comment, jira_request, slack_mention, slack_request

UNIQUE_SLACK, UNIQUE_JIRA = 400, 300
SLACK_RETRIES, JIRA_UPDATED_DUPLICATES, JIRA_RETRIES = 150, 100, 50


def answer(request: ScriptedRequest) -> Reply:
    return Reply(text=f"answer to: {request.last_user_text()}")


def test_one_run_and_one_reply_per_distinct_event(system, scripted) -> None:
    server = scripted(*([answer] * (UNIQUE_SLACK + UNIQUE_JIRA)))
    s = system(server, local_store=True)  # the worker's store: the contract suite runs it on S3+DynamoDB too
    rng = random.Random(7)
    mentions = [
        slack_mention(f"Ev{n:04d}", ts=f"1763800000.{n:06d}", text=f"<@U0BOT> question {n}")
        for n in range(UNIQUE_SLACK)
    ]
    comments = [jira_comment(str(50_000 + n)) for n in range(UNIQUE_JIRA)]
    for n, comment in enumerate(comments):
        comment["issue"]["key"] = f"PROJ-{n}"
        comment["comment"]["body"] = f"jira question {n}"
    requests = [("/slack/events", slack_request(m)) for m in mentions]
    requests += [
        ("/slack/events", slack_request(m, **{"X-Slack-Retry-Num": "1"})) for m in rng.sample(mentions, SLACK_RETRIES)
    ]
    requests += [("/jira/webhook", jira_request(c)) for c in comments]
    updated = [
        {**c, "webhookEvent": "jira:issue_updated", "issue_event_type_name": "issue_commented"}
        for c in rng.sample(comments, JIRA_UPDATED_DUPLICATES)
    ]
    requests += [("/jira/webhook", jira_request(c)) for c in updated]
    requests += [("/jira/webhook", jira_request(c)) for c in rng.sample(comments, JIRA_RETRIES)]
    assert len(requests) == 1000
    rng.shuffle(requests)
    started = time.monotonic()
    statuses = Counter(json.loads(s.post(path, *signed)["body"])["status"] for path, signed in requests)
    assert statuses == {"queued": 700, "duplicate": 300}
    print(f"webhook: {time.monotonic() - started:.1f} s")
    started = time.monotonic()
    outcomes = Counter(s.deliver())
    print(f"worker: {time.monotonic() - started:.1f} s")
    assert outcomes == {"answered": 700}
    assert Counter(s.redeliver()) == {"duplicate": 700}  # SQS delivering every message a second time
    finals = [u["text"].split("\n\n_Answered by")[0] for u in s.apis.named("chat.update")]
    assert sorted(t for t in finals if t.startswith("answer to:")) == sorted(
        f"answer to: question {n}" for n in range(UNIQUE_SLACK)
    )
    assert len(s.apis.named("chat.postMessage")) == UNIQUE_SLACK  # one progress message each
    comments_posted = s.apis.named("jira.comment")
    assert sorted(c["path"] for c in comments_posted) == sorted(
        f"/rest/api/3/issue/PROJ-{n}/comment" for n in range(UNIQUE_JIRA)
    )
    assert len(server.requests) == 700  # one model call per run: nothing ran twice
