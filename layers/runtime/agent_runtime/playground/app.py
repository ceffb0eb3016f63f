"""The playground: a page that looks and behaves like a Slack workspace (and a JIRA site) for the workflows, served
by ``agent-runtime serve`` on its own port, loopback only.

It is the other end of every integration for this process: ``serve``'s trigger settings are pointed at it (the
Slack Web API at ``/play/slack/api/``, JIRA's REST API at ``/play/jira``, secrets it makes for the process), and
what a person does on the page becomes the signed requests Slack and JIRA send, into ``serve``'s own webhook
routes. The webhook, the queue, the worker and the replies are the real ones and do not know.

Routes: ``/`` the page; ``/play/static/…`` its script and style; ``/play/ui/…`` its state, its changes (a long
poll) and its actions (POST, with the page's per-process token); ``/play/workflows/…`` the workflows' files (the
answer footer's prompt link); ``/play/slack/…`` and ``/play/jira/…`` the APIs the runtime calls.
"""

from __future__ import annotations

import json
import re
import secrets
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..config import RuntimeConfig
from ..triggers.config import TriggerConfig
from ..workflows import Workflow
from . import limits
from .actions import BadAction, Gone, click, comment, fire, hook, new_ticket, open_pane, react, say
from .deliver import Sent, post
from .environ import Exported
from .jira_api import JiraApi
from .layout import BOT_USER, JIRA_BOT_ACCOUNT, RUNS, Layout, layout_of
from .slack_api import SlackWebApi
from .slack_files import download, receive
from .slack_reads import MAX_PAGE  # noqa: F401 (its module's methods register with the Web API)
from .workspace import DELIVERY, FILE, Workspace

Reply = tuple[int, dict[str, str], bytes]
PREFIX = "/play/"
WAIT_SECONDS = 10.0  # a long poll's longest wait (serve lets a client stay silent 15 s)
ACTIONS: dict[str, Callable[[Any, dict[str, Any]], dict[str, Any]]] = {
    "message": say,
    "react": react,
    "click": click,
    "pane": open_pane,
    "ticket": new_ticket,
    "comment": comment,
    "hook": hook,
    "fire": fire,
}
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
# The page's own GET routes (one ending in / takes what follows it), each in docs/playground.md (a test checks).
GETS = ("/", "/play/static/", "/play/ui/state", "/play/ui/changes", "/play/ui/file/", "/play/workflows/")
STATIC = {"play.js": "text/javascript; charset=utf-8", "play.css": "text/css; charset=utf-8"}
_SAFE_PATH = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*")


class Playground:
    def __init__(
        self, state_dir: Path, url: str, workflows: Sequence[Workflow], *, fire: Callable[[str, str], str]
    ) -> None:
        self.url, self.fire, self.token = url, fire, secrets.token_urlsafe(24)
        self.origins = {url, url.replace("127.0.0.1", "localhost")}
        self.workspace = Workspace(state_dir / "playground")
        self.workflows = tuple(workflows)
        self.layout: Layout = layout_of(workflows)
        self.workflows_dir: Path | None = None
        self.triggers = TriggerConfig()
        self.exported = Exported({})
        self.model = "the embedded demo model"
        self.slack = SlackWebApi(self.workspace, self.layout, token="", base=f"{url}/play/slack/api/")
        self.jira = JiraApi(self.workspace, email="agent@playground.invalid", token="", base=f"{url}/play/jira")

    def configure(self, triggers: TriggerConfig, runtime: RuntimeConfig) -> tuple[TriggerConfig, RuntimeConfig]:
        """The settings ``serve`` runs with: Slack and JIRA here, with secrets made for this process (a secret the
        environment sets is kept: a webhook's, the run pages' key)."""
        token, jira_token = f"xoxb-playground-{_made()}", _made()
        env = {**triggers.env, "AGENT_SECRETS_NAME": "", "SLACK_BOT_TOKEN": token, "SLACK_SIGNING_SECRET": _made()}
        env |= {"SLACK_API_URL": self.slack.base, "SLACK_BOT_USER_ID": BOT_USER, "JIRA_BASE_URL": self.jira.base}
        env |= {"JIRA_EMAIL": "agent@playground.invalid", "JIRA_API_TOKEN": jira_token, "JIRA_WEBHOOK_SECRET": _made()}
        env |= {"JIRA_BOT_ACCOUNT_ID": JIRA_BOT_ACCOUNT}
        for key in ["RUN_PAGE_KEY", *(str(rule["secret"]).upper() for rule in self.layout.hooks)]:
            env[key] = triggers.env.get(key) or _made()
        self.triggers = TriggerConfig.from_env(env)
        self.exported = Exported(env)  # the workflows' Python tools read these where the person set none
        self.slack.token, self.jira = (
            token,
            JiraApi(self.workspace, email=env["JIRA_EMAIL"], token=jira_token, base=self.jira.base),
        )
        runtime = replace(
            runtime,
            workflows_url=runtime.workflows_url or f"{self.url}/play/workflows",
            runs_channel=runtime.runs_channel or RUNS,
        )
        self.layout = self.slack.layout = layout_of(self.workflows, runtime.runs_channel)
        self.workflows_dir, self.model = runtime.workflows_dir, _model(runtime)
        return self.triggers, runtime

    def secret(self, key: str) -> str:
        return self.triggers.secret(key) or ""

    def send(self, route: str, body: bytes, headers: dict[str, str], what: str, kind: str = "application/json") -> Sent:
        sent = post(self.url, route, body, headers, kind)
        self.log(sent.route, sent.status, sent.answer, what)
        return sent

    def log(self, route: str, status: int, answer: Any, what: str) -> None:
        """What the page sent and what came back (the webhook's answer): the page's list of deliveries."""
        key = f"{time.time_ns():020d}-{secrets.token_hex(3)}"  # in the order sent, two at once both kept
        self.workspace.put(DELIVERY, key, {"route": route, "status": status, "answer": answer, "what": what})

    def handle(self, verb: str, path: str, query: str, headers: Mapping[str, str], body: bytes) -> Reply | None:
        """The playground's answer to a request for one of its routes; None for the others (the webhook's)."""
        if path != "/" and not path.startswith(PREFIX):
            return None
        lowered = {k.lower(): v for k, v in headers.items()}
        if f"http://{lowered.get('host', '')}" not in self.origins:  # another name for this address: rebinding
            return _error(421, "the playground answers at 127.0.0.1 or localhost only")
        if path.startswith("/play/slack/"):
            return self._slack(verb, path.removeprefix("/play/slack/"), lowered, query, body)
        if path.startswith("/play/jira/"):
            status, data, kind = self.jira.serve(verb, path.removeprefix("/play/jira"), lowered, query, body)
            return status, {"Content-Type": kind}, data
        if verb == "GET":
            return self._get(path, query)
        if verb == "POST" and path.startswith("/play/ui/"):
            return self._act(path.removeprefix("/play/ui/"), lowered, body)
        return _error(405, f"{verb[:20]} is not a method of the playground's routes", {"Allow": "GET, POST"})

    def body_limit(self, path: str) -> tuple[int, str] | None:
        """The largest request body the playground takes on ``path`` (its page posts a message's files in one
        request, base64), with the refusal past it; None on a route that is not the playground's."""
        if path != "/" and not path.startswith(PREFIX):
            return None
        files = f"the playground takes up to {limits.megabytes(limits.MAX_FILES)} of files in a message"
        return limits.MAX_BODY, f"the request is over {limits.MAX_BODY:,} bytes: {files} (Slack: 1 GB a file)"

    def _slack(self, verb: str, rest: str, headers: Mapping[str, str], query: str, body: bytes) -> Reply:
        if rest.startswith("api/files-pri/") and verb == "GET":
            file_id = rest.removeprefix("api/files-pri/").split("/", 1)[0]
            authorised = secrets.compare_digest(headers.get("authorization", ""), f"Bearer {self.slack.token}")
            status, data, kind = download(self.slack, file_id, authorised)
            self.slack.calls.append(("files-pri", "ok" if status == 200 and authorised else "refused"))
            return status, {"Content-Type": kind}, data
        if rest.startswith("upload/") and verb == "POST" and rest.count("/") == 2:
            _, file_id, key = rest.split("/")
            status, data = receive(self.slack, file_id, key, body)
            return status, {"Content-Type": "text/plain"}, data
        if rest.startswith("api/") and verb in ("GET", "POST"):
            status, data = self.slack.serve(rest.removeprefix("api/"), headers, query, body)
            return status, {"Content-Type": "application/json; charset=utf-8"}, data
        return _error(404, "not found")

    def _get(self, path: str, query: str) -> Reply:
        """The page's GET routes, by ``GETS``: a route not there is not served (so the doc cannot miss one)."""
        route = next((r for r in GETS if path == r or (r.endswith("/") and r != "/" and path.startswith(r))), None)
        rest = path.removeprefix(route or "")
        if route == "/":
            page = resources.files(__package__).joinpath("static/index.html").read_text(encoding="utf-8")
            return (
                200,
                {"Content-Type": "text/html; charset=utf-8", **PAGE_HEADERS},
                page.replace("{{token}}", self.token).encode(),
            )
        if route == "/play/static/" and rest in STATIC:
            return (
                200,
                {"Content-Type": STATIC[rest], **PAGE_HEADERS},
                resources.files(__package__).joinpath(f"static/{rest}").read_bytes(),
            )
        if route in ("/play/ui/state", "/play/ui/changes"):
            return _json(200, self.state() if route == "/play/ui/state" else self.changes(query))
        if route == "/play/ui/file/":
            status, data, kind = download(self.slack, rest.rsplit("/", 1)[-1], True)
            return status, {"Content-Type": kind, "Content-Disposition": "attachment", **PAGE_HEADERS}, data
        if route == "/play/workflows/":
            return self._workflow_file(rest)
        return _error(404, "not found")

    def state(self) -> dict[str, Any]:
        return {"layout": self.layout.to_dict(), "model": self.model, "url": self.url, "max_files": limits.MAX_FILES}

    def changes(self, query: str) -> dict[str, Any]:
        try:
            after = int(urllib.parse.parse_qs(query).get("after", ["-1"])[0])
        except ValueError:
            after = -1
        wait = WAIT_SECONDS if after >= 0 else 0.0  # the page's first call (-1) asks for everything, at once
        version, records = self.workspace.changes(max(after, 0), wait)
        shown = [r for r in records if r["kind"] != FILE]  # an upload's key stays with the API
        return {"version": version, "records": shown}

    def _act(self, name: str, headers: Mapping[str, str], body: bytes) -> Reply:
        if not secrets.compare_digest(headers.get("x-playground-token", ""), self.token):
            return _json(403, {"error": "the page's token is missing or wrong (reload the page)"})
        if headers.get("origin") and headers["origin"] not in self.origins:
            return _json(403, {"error": "another origin"})
        if name not in ACTIONS:
            return _json(404, {"error": f"no such action: {name[:40]!r}"})
        try:
            request = json.loads(body or b"{}")
        except ValueError:  # was the parser's own words ("Expecting value: line 1 column 1 (char 0)")
            return _json(400, {"error": "the request's body is not JSON (a JSON object, as the page sends)"})
        try:
            if not isinstance(request, dict):
                raise BadAction("the request is not a JSON object")
            return _json(200, ACTIONS[name](self, request))
        except Gone as gone:
            return _json(200, {"gone": str(gone)})
        except (BadAction, ValueError) as error:
            return _json(400, {"error": str(error)})

    def _workflow_file(self, relative: str) -> Reply:
        """A workflow's file as text (its prompt: the answers' footer links here), inside the workflows folder."""
        folder = self.workflows_dir
        if folder is None or not _SAFE_PATH.fullmatch(relative) or ".." in relative.split("/"):
            return _error(404, "not found")
        target = (folder / relative).resolve()
        if not target.is_file() or not target.is_relative_to(folder.resolve()):
            return _error(404, "not found")
        return 200, {"Content-Type": "text/plain; charset=utf-8", **PAGE_HEADERS}, target.read_bytes()

    def close(self) -> None:
        self.exported.close()
        self.workspace.close()


def _made() -> str:
    return secrets.token_hex(16)


def _model(runtime: RuntimeConfig) -> str:
    if runtime.use_demo_model:
        return (
            "the embedded demo model (no OPENAI_BASE_URL or OPENAI_API_KEY): canned, following this repository's "
            "example workflows and calling a tool you name"
        )
    return f"the model at OPENAI_BASE_URL{f' ({runtime.model_override})' if runtime.model_override else ''}"


def _json(status: int, body: dict[str, Any]) -> Reply:
    return status, {"Content-Type": "application/json", "Cache-Control": "no-store"}, json.dumps(body).encode()


def _error(status: int, text: str, headers: dict[str, str] | None = None) -> Reply:
    """A refusal in the shape of every other of serve's: JSON with its ``error``."""
    return status, {**(headers or {}), "Content-Type": "application/json"}, json.dumps({"error": text}).encode()
