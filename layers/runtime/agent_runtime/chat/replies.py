"""Outbound: Slack (slack_sdk's WebClient, which retries 429s after Retry-After) and JIRA REST v3.

A reply is the run's one visible side effect, so each posting is journalled by the worker; these clients only
talk HTTP. Downloads are size-capped and never send credentials to another host than the one they belong to.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

import urllib3
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from ..actions import FEEDBACK, STOP
from ..adf import to_adf
from ..capped import read_capped
from .exceptions import ReplyError, Unreachable
from .mentions import neutralise
from .mrkdwn import to_mrkdwn
from .stream import UNREACHABLE

# The SDK logs an ERROR line for each failed attempt; the ReplyError its caller handles says it once.
logging.getLogger("slack_sdk.web.base_client").setLevel(logging.CRITICAL)
SLACK_CHUNK = 3_500  # characters per message: long answers continue in the thread
TIMEOUT = 30


class SlackReplier:
    def __init__(self, token: str, *, base_url: str = "https://slack.com/api/") -> None:
        self.token = token
        handlers = [RateLimitErrorRetryHandler(max_retry_count=3), ConnectionErrorRetryHandler(max_retry_count=2)]
        self.client = WebClient(token=token, base_url=base_url, timeout=TIMEOUT, retry_handlers=handlers)

    def _api(self, method: str, **arguments: Any) -> Any:
        """One Web API call (``chat.postMessage``) through the SDK's method of that name; Slack's error, by name,
        as a ReplyError."""
        if arguments.get("thread_ts") == "":  # a message of its own in the channel (a schedule's answer)
            arguments.pop("thread_ts")
        try:
            return getattr(self.client, method.replace(".", "_"))(**arguments)
        except SlackApiError as error:
            raise ReplyError(f"Slack {method} failed: {error.response.get('error')}") from None
        except UNREACHABLE as error:  # after the SDK's retries: refused, a timeout, a connection cut
            raise Unreachable(f"Slack {method} failed: {getattr(error, 'reason', None) or error}") from None

    def post(self, channel: str, thread_ts: str, text: str) -> str:
        return str(self._api("chat.postMessage", channel=channel, thread_ts=thread_ts, text=text)["ts"])

    def direct(self, user: str, text: str) -> str:
        """A message to ``user`` alone, in their direct conversation with the app (chat:write)."""
        return str(self._api("chat.postMessage", channel=user, text=text, unfurl_links=False)["ts"])

    def post_blocks(self, channel: str, thread_ts: str, blocks: list[dict[str, Any]], text: str) -> str:
        return str(self._api("chat.postMessage", channel=channel, thread_ts=thread_ts, blocks=blocks, text=text)["ts"])

    def ephemeral(self, channel: str, user: str, text: str, thread_ts: str | None = None) -> None:
        self._api("chat.postEphemeral", channel=channel, user=user, text=text, thread_ts=thread_ts)

    def usergroup_members(self, usergroup: str) -> frozenset[str]:
        """The user ids of a Slack user group (usergroups.users.list; needs usergroups:read)."""
        users = self._api("usergroups.users.list", usergroup=usergroup).get("users")
        return frozenset(str(user) for user in users or ())

    def reacted(self, channel: str, ts: str) -> dict[str, Any]:
        """The message a reaction was added to (reactions.get; needs reactions:read): its text, files, thread."""
        found = self._api("reactions.get", channel=channel, timestamp=ts, full=True).get("message")
        return found if isinstance(found, dict) else {}

    def is_private(self, channel: str) -> bool:
        """Whether only some people see ``channel`` (private, a direct or group message); unknown counts as private
        (``conversations.info`` needs channels:read and groups:read)."""
        try:
            info = self._api("conversations.info", channel=channel)["channel"]
        except (ReplyError, KeyError, TypeError):
            return True
        return bool(info.get("is_private") or info.get("is_im") or info.get("is_mpim") or not info.get("is_channel"))

    def update(self, channel: str, ts: str, text: str) -> None:
        self._api("chat.update", channel=channel, ts=ts, text=text)

    def delete(self, channel: str, ts: str) -> None:
        self._api("chat.delete", channel=channel, ts=ts)

    def stop_stream(self, channel: str, ts: str) -> None:
        """Ends a streaming message (its cursor goes); Slack refuses one no longer streaming."""
        self._api("chat.stopStream", channel=channel, ts=ts)

    def set_status(self, channel: str, thread_ts: str, status: str) -> None:
        """The app's "is working…" line under a direct-message thread (needs assistant:write); "" clears it.
        Slack clears it too when the app posts in the thread, or after two minutes without a new status."""
        self._api("assistant.threads.setStatus", channel_id=channel, thread_ts=thread_ts, status=status)

    def set_title(self, channel: str, thread_ts: str, title: str) -> None:
        """An assistant thread's title in the app's history (the assistant view)."""
        self._api("assistant.threads.setTitle", channel_id=channel, thread_ts=thread_ts, title=title)

    def suggest(self, channel: str, thread_ts: str | None, prompts: Sequence[tuple[str, str]]) -> None:
        """Prompts a person can click to start with: in an assistant thread, or (``thread_ts`` None: the agent
        view, where a thread_ts makes the call fail silently) in the conversation with the app."""
        listed = [{"title": title, "message": message} for title, message in prompts]
        self._api("assistant.threads.setSuggestedPrompts", channel_id=channel, thread_ts=thread_ts, prompts=listed)

    def update_blocks(self, channel: str, ts: str, blocks: list[dict[str, Any]], text: str) -> None:
        self._api("chat.update", channel=channel, ts=ts, blocks=blocks, text=text)

    def answer(
        self, channel: str, thread_ts: str, progress_ts: str | None, text: str, feedback: str | None = None
    ) -> None:
        """The answer replaces the progress message; what does not fit follows in the thread. ``feedback``: the
        last message carries the feedback buttons, each with this value (and its verdict)."""
        chunks = chunk(to_mrkdwn(neutralise(text)), SLACK_CHUNK)  # model text: no special mention notifies
        for number, part in enumerate(chunks):
            blocks = feedback_blocks(part, feedback) if feedback and number == len(chunks) - 1 else None
            if number == 0 and progress_ts and blocks:
                self.update_blocks(channel, progress_ts, blocks, part)
            elif number == 0 and progress_ts:  # no blocks: the working message's Stop button goes
                self.update_blocks(channel, progress_ts, [], part)
            elif blocks:
                self.post_blocks(channel, thread_ts, blocks, part)
            else:
                self.post(channel, thread_ts, part)

    def upload(self, channel: str, thread_ts: str, files: Sequence[tuple[str, bytes]]) -> None:
        """Files into the thread (files.getUploadURLExternal, upload, completeUploadExternal: needs files:write)."""
        uploads = [{"content": data, "filename": name, "title": name} for name, data in files]
        try:
            self.client.files_upload_v2(file_uploads=uploads, channel=channel, thread_ts=thread_ts)
        except (SlackApiError, SlackRequestError) as error:
            reason = error.response.get("error") if isinstance(error, SlackApiError) else str(error)
            raise ReplyError(f"Slack file upload failed: {reason}") from None

    def thread(
        self, channel: str, thread_ts: str, *, cursor: str | None = None, limit: int = 100
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a thread's messages (conversations.replies; needs channels:history / groups:history)."""
        page = self._api("conversations.replies", channel=channel, ts=thread_ts, cursor=cursor, limit=limit)
        following = (page.get("response_metadata") or {}).get("next_cursor") or None
        return list(page.get("messages") or []), following

    def download(self, url: str, limit: int) -> bytes:
        host = urllib.parse.urlparse(url).hostname or ""
        if not (host == "slack.com" or host.endswith(".slack.com") or url.startswith(self.client.base_url)):
            raise ReplyError(f"refusing to send the bot token to {host}")
        data, kind = fetch(url, {"Authorization": f"Bearer {self.token}"}, limit)
        if kind.startswith("text/html"):  # a missing files:read scope answers with a login page and 200
            raise ReplyError("Slack returned a web page instead of the file (is the files:read scope granted?)")
        return data


class JiraReplier:
    def __init__(self, base_url: str, email: str, token: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.auth = "Basic " + base64.b64encode(f"{email}:{token}".encode()).decode()

    def comment(self, issue_key: str, text: str) -> str:
        return self.comment_doc(issue_key, to_adf(text))

    def comment_doc(self, issue_key: str, doc: dict[str, Any]) -> str:
        """A comment given as an Atlassian document (what no Markdown may reshape)."""
        url = f"{self.base_url}/rest/api/3/issue/{urllib.parse.quote(issue_key)}/comment"
        body = json.dumps({"body": doc}).encode()
        headers = {"Authorization": self.auth, "Content-Type": "application/json", "Accept": "application/json"}
        data, _ = request("POST", url, headers, body, limit=1 << 20)
        return str(json.loads(data).get("id", ""))

    def get(self, path: str, params: dict[str, str] | None = None, *, limit: int = 8 << 20) -> Any:
        """GET a REST resource (``/rest/api/3/...``) as JSON."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        headers = {"Authorization": self.auth, "Accept": "application/json"}
        data, _ = request("GET", f"{self.base_url}{path}{query}", headers, None, limit=limit)
        return json.loads(data)

    def groups_of(self, account_id: str) -> frozenset[str]:
        """The names of the JIRA groups an account is in (GET /rest/api/3/user/groups)."""
        try:
            found = self.get("/rest/api/3/user/groups", {"accountId": account_id}, limit=1 << 20)
        except (ReplyError, ValueError) as error:
            raise ReplyError(f"JIRA user groups failed: {error}") from None
        return (
            frozenset(str(g.get("name")) for g in found if isinstance(g, dict))
            if isinstance(found, list)
            else frozenset()
        )

    def attach(self, issue_key: str, files: Sequence[tuple[str, bytes]]) -> None:
        """Files as the issue's attachments (one multipart request; JIRA wants X-Atlassian-Token: no-check).

        urllib3 encodes the parts as browsers do: a name from the sandboxed code cannot break their headers."""
        url = f"{self.base_url}/rest/api/3/issue/{urllib.parse.quote(issue_key)}/attachments"
        body, kind = urllib3.encode_multipart_formdata(
            [("file", (name, data, "application/octet-stream")) for name, data in files]
        )
        headers = {"Authorization": self.auth, "X-Atlassian-Token": "no-check", "Content-Type": kind}
        request("POST", url, headers | {"Accept": "application/json"}, body, limit=1 << 20)

    def download(self, url: str, limit: int) -> bytes:
        """JIRA redirects attachment content to a signed media URL: credentials go to the JIRA host only."""
        if not url.startswith(self.base_url + "/"):
            raise ReplyError(f"attachment URL {url} is not on {self.base_url}")
        data, _ = fetch(url, {"Authorization": self.auth}, limit)
        return data


def feedback_blocks(text: str, value: str) -> list[dict[str, Any]]:
    """A message's text as sections (3,000 characters each at most), then Slack's feedback buttons in a
    context_actions block; each button's value is ``value|good`` or ``value|bad``."""
    sections = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text[i : i + 3_000]}}
        for i in range(0, max(len(text), 1), 3_000)
    ]

    def button(label: str, verdict: str) -> dict[str, Any]:
        return {"text": {"type": "plain_text", "text": label}, "value": f"{value}|{verdict}"}

    buttons = {
        "type": "feedback_buttons",
        "action_id": FEEDBACK,
        "positive_button": button("Good answer", "good"),
        "negative_button": button("Bad answer", "bad"),
    }
    return [*sections, {"type": "context_actions", "elements": [buttons]}]


def working_blocks(text: str, value: str | None) -> list[dict[str, Any]]:
    """A working run's message: its progress, then the Stop button (its value ``run_id|thread_id``)."""
    section = {"type": "section", "text": {"type": "mrkdwn", "text": text[:3_000]}}
    if not value:
        return [section]
    stop = {
        "type": "button",
        "action_id": STOP,
        "text": {"type": "plain_text", "text": "Stop"},
        "value": value,
        "confirm": {
            "title": {"type": "plain_text", "text": "Stop this run?"},
            "text": {"type": "mrkdwn", "text": "It ends at its next step; the thread keeps its work."},
            "confirm": {"type": "plain_text", "text": "Stop"},
            "deny": {"type": "plain_text", "text": "Keep going"},
        },
    }
    return [section, {"type": "actions", "elements": [stop]}]


def chunk(text: str, size: int) -> list[str]:
    parts: list[str] = []
    while len(text) > size:
        cut = text.rfind("\n", 0, size)
        cut = cut if cut > size // 2 else size
        parts.append(text[:cut])
        text = text[cut:].lstrip("\n")
    return [*parts, text] if text or not parts else parts


MAX_REDIRECTS = 3


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def fetch(url: str, headers: dict[str, str], limit: int) -> tuple[bytes, str]:
    """GET with the credentials, following at most ``MAX_REDIRECTS`` redirects (http and https only). Each hop
    is checked again: credentials go along only while every hop so far stayed on the URL's own origin."""
    origin = urllib.parse.urlparse(url)[:2]  # scheme and host:port: another port is another server
    current, sent = url, headers
    for _ in range(MAX_REDIRECTS + 1):
        try:
            return request("GET", current, sent, None, limit=limit, what="the file")
        except _Redirect as redirect:
            target = urllib.parse.urlparse(redirect.location)
            if target.scheme not in ("http", "https"):
                raise ReplyError(f"a download redirected to a {target.scheme or 'relative'} URL: refused") from None
            current = redirect.location
            sent = sent if target[:2] == origin else {}
    raise ReplyError(f"GET {urllib.parse.urlparse(url).path}: more than {MAX_REDIRECTS} redirects (a loop?)")


@functools.cache
def _opener() -> urllib.request.OpenerDirector:
    """One opener for the process: building one makes an SSL context (the CA bundle read again, ~13 ms a call)."""
    return urllib.request.build_opener(_NoRedirect)


class _Redirect(Exception):
    def __init__(self, location: str) -> None:
        self.location = location


def request(
    method: str, url: str, headers: dict[str, str], body: bytes | None, *, limit: int, what: str = "the answer"
) -> tuple[bytes, str]:
    """One HTTP call with up to three retries on 429/503 after Retry-After (capped at 30 s each); its answer, up to
    ``limit`` bytes (over it: a ReplyError naming ``what`` was too big)."""
    opener = _opener()
    for attempt in range(4):
        try:
            with opener.open(
                urllib.request.Request(url, data=body, headers=headers, method=method), timeout=TIMEOUT
            ) as r:
                return read_capped(r, limit, ReplyError, what), r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            if method == "GET" and error.code in (301, 302, 303, 307, 308) and error.headers.get("Location"):
                raise _Redirect(urllib.parse.urljoin(url, error.headers["Location"])) from None
            if error.code in (429, 503) and attempt < 3:
                time.sleep(min(float(error.headers.get("Retry-After") or 2**attempt), 30.0))
                continue
            raise ReplyError(f"{method} {urllib.parse.urlparse(url).path} failed: HTTP {error.code}") from None
        except urllib.error.URLError as error:
            raise ReplyError(f"{method} {url} failed: {error.reason}") from None
    raise ReplyError(f"{method} {url}: still rate limited after retries")
