"""Outbound HTTP on real local servers: JIRA attachments follow the redirect without credentials, 429s are
retried after Retry-After, Slack refuses to send the bot token elsewhere, oversized downloads stop at the cap.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agent_runtime.adf import to_adf
from agent_runtime.chat.exceptions import ReplyError
from agent_runtime.chat.replies import JiraReplier, SlackReplier, chunk


@contextmanager
def server(routes: dict) -> Iterator[tuple[str, list]]:
    seen: list = []

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append((self.command, self.path, self.headers.get("Authorization"), body))
            status, headers, payload = routes[self.path](len(seen))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _handle

        def log_message(self, *args: object) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{http.server_address[1]}", seen
    finally:
        http.shutdown()


def test_jira_attachments_follow_the_redirect_without_credentials() -> None:
    with server({"/media/abc": lambda n: (200, {"Content-Type": "application/pdf"}, b"%PDF-1.7")}) as (media, got):
        redirect = {"/rest/api/3/attachment/content/10": lambda n: (303, {"Location": f"{media}/media/abc"}, b"")}
        with server(redirect) as (jira, asked):
            data = JiraReplier(jira, "bot@example.com", "token").download(
                f"{jira}/rest/api/3/attachment/content/10", 1 << 20
            )
    assert data == b"%PDF-1.7"
    assert asked[0][2].startswith("Basic ")  # credentials to JIRA
    assert got[0][2] is None  # none to the media host


def test_comments_are_retried_after_retry_after_on_429() -> None:
    def comment(n: int):
        return (429, {"Retry-After": "1"}, b"") if n == 1 else (201, {}, b'{"id": "99"}')

    with server({"/rest/api/3/issue/PROJ-1/comment": comment}) as (jira, seen):
        started = time.monotonic()
        assert JiraReplier(jira, "bot@example.com", "token").comment("PROJ-1", "*Done*") == "99"
    assert len(seen) == 2 and time.monotonic() - started >= 1.0


def test_downloads_stop_at_the_size_cap_and_tokens_stay_home() -> None:
    with server({"/files/big": lambda n: (200, {}, b"x" * 5000)}) as (base, _):
        slack = SlackReplier("xoxb-test", base_url=f"{base}/")
        with pytest.raises(ReplyError, match=r"^the file is 5,000 bytes, over the limit of 1,000 bytes$"):
            slack.download(f"{base}/files/big", 1000)
        with pytest.raises(ReplyError, match=r"refusing to send the bot token to evil\.example"):
            slack.download("https://evil.example/files/x", 1000)


def test_long_answers_are_chunked_on_line_boundaries_and_adf_keeps_structure() -> None:
    text = "\n".join(f"line {n} " + "x" * 50 for n in range(200))
    parts = chunk(text, 3500)
    assert "".join(p + "\n" for p in parts).rstrip("\n") == text and all(len(p) <= 3500 for p in parts)
    doc = to_adf("# Verdict\n\n1. first\n2. second\n\n```\ncode\n```\nSee <https://x.example|the doc> and `cfg`.")
    assert [n["type"] for n in doc["content"]] == ["heading", "orderedList", "codeBlock", "paragraph"]
    link = doc["content"][3]["content"][1]
    assert link == {
        "type": "text",
        "text": "the doc",
        "marks": [{"type": "link", "attrs": {"href": "https://x.example"}}],
    }


def test_markdown_answers_become_slack_mrkdwn_outside_code() -> None:
    from agent_runtime.chat.mrkdwn import to_mrkdwn

    answer = (
        "## Verdict\n**Not ready**: see [the handbook](https://wiki.example/h).\n- one\n  * two\n"
        "```\n**kept** # as is\n```\nand `**code**` stays; *already mrkdwn* too; snake__case__name."
    )
    assert to_mrkdwn(answer) == (
        "*Verdict*\n*Not ready*: see <https://wiki.example/h|the handbook>.\n• one\n  • two\n"
        "```\n**kept** # as is\n```\nand `**code**` stays; *already mrkdwn* too; snake__case__name."
    )


def test_jira_attachment_names_from_the_sandbox_cannot_break_the_multipart_headers() -> None:
    hostile = 'chart"\r\nContent-Type: text/html\r\n\r\nx.csv'
    route = {"/rest/api/3/issue/PROJ-1/attachments": lambda n: (200, {}, b"[]")}
    with server(route) as (jira, seen):
        JiraReplier(jira, "bot@example.com", "token").attach("PROJ-1", [(hostile, b"a,b\n"), ("naïve.csv", b"1")])
    [(method, _, auth, body)] = seen
    assert method == "POST" and auth.startswith("Basic ")
    boundary = body.split(b"\r\n", 1)[0]
    parts = body.split(boundary)[1:-1]
    headers = [part.split(b"\r\n\r\n", 1)[0].strip().split(b"\r\n") for part in parts]
    assert headers[0] == [
        b'Content-Disposition: form-data; name="file"; '
        b'filename="chart%22%0D%0AContent-Type: text/html%0D%0A%0D%0Ax.csv"',
        b"Content-Type: application/octet-stream",
    ]  # quote, CR and LF escaped as browsers do: still one part with two headers
    assert headers[1][0].endswith('filename="naïve.csv"'.encode())
    assert [part.split(b"\r\n\r\n", 1)[1] for part in parts] == [b"a,b\n\r\n", b"1\r\n"]


def test_redirect_chains_are_bounded_and_loops_are_a_reply_error() -> None:
    """Was: a second redirect escaped fetch() as _Redirect; the worker posted nothing."""
    with server({"/media/final": lambda n: (200, {}, b"ok")}) as (media, got):
        hops = {
            "/a/10": lambda n: (302, {"Location": "/a/11"}, b""),  # same origin: credentials still go along
            "/a/11": lambda n: (302, {"Location": f"{media}/media/final"}, b""),
            "/loop": lambda n: (302, {"Location": "/loop"}, b""),
            "/ftp": lambda n: (302, {"Location": "ftp://example.com/x"}, b""),
        }
        with server(hops) as (jira, asked):
            replier = JiraReplier(jira, "bot@example.com", "token")
            assert replier.download(f"{jira}/a/10", 1 << 20) == b"ok"
            with pytest.raises(ReplyError, match="more than 3 redirects"):
                replier.download(f"{jira}/loop", 1 << 20)
            with pytest.raises(ReplyError, match="redirected to a ftp URL"):
                replier.download(f"{jira}/ftp", 1 << 20)
    assert [a[2] is not None for a in asked[:2]] == [True, True] and got[0][2] is None
