"""The webhook's router: any request, any path — a route's answer, or a 404/405/400 that says why; never an
exception of its own. It routes as Powertools' ``APIGatewayHttpResolver`` (which it replaced for the cold start)
did, checked against it on the paths that resolver accepts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_runtime.errors import ConfigError
from agent_runtime.service._http import Response, Router
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler import Response as PowertoolsResponse
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.triggers_support import api_event

TEMPLATES = ("/slack/events", "/hooks/<name>", "/runs/<run_id>/stop", "/runs/<run_id>/page", "/oauth/<provider>/start")
# Characters Powertools' resolver takes in a path parameter (its _SAFE_URI, _UNSAFE_URI and \w), and a few it does not
SEGMENT = st.text(st.sampled_from("abcXYZ019-._~()'!*:@,;=+&$%<> []{}|^é"), min_size=1, max_size=12)
PATHS = st.lists(st.one_of(st.sampled_from(["slack", "events", "hooks", "runs", "stop", "page", "oauth"]), SEGMENT))


def event(method: str, path: str, stage: str = "$default") -> dict[str, Any]:
    raw = api_event(path, b"", {})
    raw["requestContext"]["http"]["method"] = method
    raw["requestContext"]["stage"] = stage
    return raw


def ours() -> Router:
    router = Router()
    for template in TEMPLATES:
        for method in ("GET", "POST") if template.endswith("page") else ("POST",):
            router.add(method, template, _answer(template))
    return router


def _answer(template: str) -> Any:
    return lambda raw, **params: Response(200, "application/json", json.dumps([template, params]))


def powertools() -> APIGatewayHttpResolver:
    app = APIGatewayHttpResolver()
    for template in TEMPLATES:
        answer = _answer(template)
        for method in ("GET", "POST") if template.endswith("page") else ("POST",):
            app.route(template, method)(lambda answer=answer, **params: _theirs(answer(None, **params)))
    return app


def _theirs(response: Response) -> PowertoolsResponse[str]:
    return PowertoolsResponse(response.status_code, response.content_type, response.body)


@settings(max_examples=300, deadline=None)
@given(segments=PATHS, method=st.sampled_from(["GET", "POST"]), trailing=st.booleans())
def test_any_path_gets_the_route_powertools_would_give_it_or_says_why_not(
    segments: list[str], method: str, trailing: bool
) -> None:
    path = "/" + "/".join(segments) + ("/" if trailing and segments else "")
    answer = ours().resolve(event(method, path))
    if answer["statusCode"] == 200:
        template, params = json.loads(answer["body"])
        assert all(value and "/" not in value for value in params.values())
        rebuilt = template
        for name, value in params.items():
            rebuilt = rebuilt.replace(f"<{name}>", value)
        assert rebuilt == path  # the whole path, each parameter one segment
    else:
        assert answer["statusCode"] in (404, 405) and json.loads(answer["body"])["error"]
    if all(set(s) <= set("abcXYZ019-._~()'!*:@,;=+&$%<> []{}|^é") for s in segments):  # what Powertools takes
        theirs = powertools().resolve(event(method, path), None)
        assert (theirs["statusCode"] == 200) == (answer["statusCode"] == 200), (path, theirs)
        if answer["statusCode"] == 200:
            assert json.loads(theirs["body"]) == json.loads(answer["body"])


def test_a_named_stage_is_not_part_of_the_path_and_the_answer_is_a_proxy_response() -> None:
    answer = ours().resolve(event("POST", "/prod/runs/r-1/stop", stage="prod"))
    assert answer == {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(["/runs/<run_id>/stop", {"run_id": "r-1"}]),
        "isBase64Encoded": False,
    }
    assert ours().resolve(event("POST", "/prod", stage="prod"))["statusCode"] == 404


def test_a_path_served_by_another_method_is_405_naming_the_methods_and_no_route_is_404() -> None:
    refused = ours().resolve(event("GET", "/slack/events"))
    assert refused["statusCode"] == 405 and refused["headers"]["Allow"] == "POST"
    assert ours().resolve(event("DELETE", "/runs/r-1/page"))["headers"]["Allow"] == "GET, POST"
    assert ours().resolve(event("POST", "/nowhere"))["statusCode"] == 404


@given(st.one_of(st.none(), st.integers(), st.dictionaries(st.sampled_from(["rawPath", "requestContext"]), st.none())))
def test_an_event_that_is_not_an_http_api_request_is_400(junk: Any) -> None:
    raw = junk if isinstance(junk, dict) else {"rawPath": junk, "requestContext": {"http": {"method": junk}}}
    assert ours().resolve(raw)["statusCode"] == 400


def test_two_routes_for_one_method_and_path_or_a_bad_route_are_refused_when_added() -> None:
    router = ours()
    with pytest.raises(ConfigError, match="two routes take POST /slack/events"):
        router.add("POST", "/slack/events", _answer("again"))
    with pytest.raises(ConfigError, match="a route is"):
        router.add("PATCH", "/x", _answer("x"))
    with pytest.raises(ConfigError, match="a route is"):
        router.add("GET", "x", _answer("x"))
