"""What a script sends the playground's actions (``POST /play/ui/<action>``): an issue's ``labels`` as a list of
strings or one comma-separated string, stored as JIRA would hold them and routed by them; anything else a 400
naming ``labels``. Was: ``str()`` of the list made the one label ``"['design-review']"``, and the issue went to no
workflow, silently. A body that is not JSON is a 400 saying so, in the page's one shape (``{"error": …}``), not the
parser's "Expecting value: line 1 column 1".

Real paths: serve's playground over HTTP, its webhook routing the issue as JIRA's ``jira:issue_created``."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest
from agent_runtime.playground.workspace import ISSUE
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.playground_support import page_token, playground

REVIEWS = """\
name: reviews
description: Reviews the issues labelled design-review.
prompt: You review.
model: {name: gpt-4.1-mini, context_window: 128000}
triggers:
  jira: {projects: [PROJ], events: [comment_created], labels: [design-review]}
"""
ACTIONS = ["message", "click", "react", "pane", "ticket", "comment", "hook", "fire"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with playground(tmp_path_factory.mktemp("bodies"), {"reviews": REVIEWS}) as server:
        yield server, page_token(server.url)


def post(url: str, action: str, data: bytes, token: str) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json", "X-Playground-Token": token}
    request = urllib.request.Request(f"{url}/play/ui/{action}", data=data, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


label = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
words = st.lists(st.one_of(label, st.just("design-review")), max_size=12)
not_labels = st.one_of(
    st.integers(),
    st.booleans(),
    st.dictionaries(label, label, max_size=2),
    st.lists(st.one_of(st.integers(), st.none(), st.dictionaries(label, label, max_size=1)), min_size=1, max_size=3),
    st.lists(label, min_size=1, max_size=3).map(lambda given: [*given, 7]),
    st.tuples(label, label).map(lambda pair: [f"{pair[0]} {pair[1]}"]),  # JIRA's labels hold no space
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=st.one_of(words, words.map(",".join), words.map(", ".join), words.map(" ".join), not_labels))
def test_an_issues_labels_are_a_list_or_a_comma_separated_string_and_anything_else_is_a_400(
    served: Any, labels: Any
) -> None:
    server, token = served
    body = {"user": "U0DANA", "project": "PROJ", "summary": "The new export", "labels": labels}
    status, said = post(server.url, "ticket", json.dumps(body).encode(), token)
    if isinstance(labels, str) or (isinstance(labels, list) and all(isinstance(w, str) for w in labels)):
        given = labels if isinstance(labels, list) else re.split(r"[\s,]+", labels)
        if all(not re.search(r"[\s,]", w) for w in given):
            assert status == 200, said
            issue = server.playground.workspace.get(ISSUE, said["key"])
            assert issue["fields"].get("labels", []) == [w for w in given if w][:10]
            return
    assert status == 400 and said["error"].startswith("labels: "), (labels, said)


def test_an_issue_labelled_by_a_list_goes_to_the_workflow_its_label_names(served: Any) -> None:
    server, token = served
    body = {"user": "U0DANA", "project": "PROJ", "summary": "Review the export", "labels": ["design-review"]}
    status, made = post(server.url, "ticket", json.dumps(body).encode(), token)
    assert status == 200 and server.playground.workspace.get(ISSUE, made["key"])["fields"]["labels"] == [
        "design-review"
    ]
    comment = {"user": "U0DANA", "key": made["key"], "text": "Ready for a look."}
    status, said = post(server.url, "comment", json.dumps(comment).encode(), token)
    assert status == 200 and said["sent"]["answer"] == {"status": "queued", "workflow": "reviews"}, said


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(action=st.sampled_from(ACTIONS), data=st.one_of(st.binary(max_size=40), st.text(max_size=40).map(str.encode)))
@example(action="ticket", data=b"labels=design-review")
@example(action="message", data=b"{'user': 'U0DANA'}")
def test_a_body_that_is_not_json_is_a_400_saying_so(served: Any, action: str, data: bytes) -> None:
    try:
        json.loads(data or b"{}")
    except ValueError:
        status, said = post(served[0].url, action, data, served[1])
        assert (status, said) == (400, {"error": "the request's body is not JSON (a JSON object, as the page sends)"})
