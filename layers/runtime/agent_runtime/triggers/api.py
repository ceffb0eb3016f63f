"""The API: ``POST /runs`` starts a named workflow with a message; its caller is authenticated by IAM or the API key
(the stop route, ``POST /runs/{run_id}/stop``, authenticates its caller the same way)."""

from __future__ import annotations

import secrets as token_source
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..ids import check_thread_id
from ..inbound import TriggerEvent
from . import fields
from .config import TriggerConfig
from .exceptions import RejectedRequest
from .payload import parse_json, raw_body

if TYPE_CHECKING:
    from ..workflows import Workflow


def caller(raw: Mapping[str, Any], config: TriggerConfig) -> str:
    """Who calls the /runs routes: the IAM caller's ARN, or "api-key" (the key checked); else a 401."""
    headers = {k.lower(): v for k, v in (raw.get("headers") or {}).items()}
    key = config.secret("api_key")
    iam = ((raw.get("requestContext") or {}).get("authorizer") or {}).get("iam")
    if key:
        given = fields.text(headers.get("authorization"), "Authorization (Bearer and the API key)")
        if not fields.same(given, f"Bearer {key}"):
            raise RejectedRequest(401, "missing or wrong API key (Authorization: Bearer ...)")
    elif not iam:
        raise RejectedRequest(401, "the /runs route needs IAM authorization or an API key")
    return str(iam.get("userArn") if isinstance(iam, dict) else "api-key")


def parse(raw: Mapping[str, Any], config: TriggerConfig, workflows: Sequence[Workflow]) -> TriggerEvent:
    """A run of the named workflow, its caller checked first; a 400 for a body without its strings, an unknown
    workflow or a thread id the store would refuse."""
    user = caller(raw, config)
    body = parse_json(raw_body(raw), "the body")
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("workflow"), str)
        or not isinstance(body.get("message"), str)
    ):
        raise RejectedRequest(400, "the body needs 'workflow' and 'message' strings")
    if body["workflow"] not in {w.name for w in workflows}:
        raise RejectedRequest(400, f"unknown workflow {body['workflow'][:80]!r}")  # said back: cut
    request_id = str(body.get("request_id") or token_source.token_hex(12))
    thread = str(body.get("thread_id") or f"api-{request_id}")
    try:
        check_thread_id(thread)
    except ConfigError:  # the id is not said back: it may be as long as the body
        said = "thread_id" if body.get("thread_id") else "api-<request_id>"
        raise RejectedRequest(
            400, f"the thread id ({said}) must be up to 200 letters, digits, '.', '_', ':' or '-'"
        ) from None
    return TriggerEvent(
        source="api",
        kind="api",
        dedup_key=f"api:{request_id}",
        text=body["message"],
        user=user,
        thread_id=thread,
        correlation_id=request_id,
        workflow=body["workflow"],
    )
