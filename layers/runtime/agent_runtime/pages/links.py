"""Signed, expiring links to a run's page, served by the stack (``GET /runs/{run_id}/page``).

A link opens one run and nothing else: it carries the run id, when it expires and whether the run came from a
private conversation, all signed with HMAC-SHA256 by the integrations secret's ``run_page_key``. A changed id, time
or mark, an expired link or another key's signature is refused; rotating the key revokes every link at once. The
page lists no other run. Links last ``AGENT_RUN_PAGE_DAYS`` days (default 7)."""

from __future__ import annotations

import hashlib
import hmac
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from ..triggers import fields

KEY = "run_page_key"  # the integrations secret's key (locally RUN_PAGE_KEY)
_MARK = re.compile(r"[01]")


class LinkRefused(Exception):
    """A link that does not open its page: why, for the log and the 403's body."""


@dataclass(frozen=True, slots=True)
class PageLinks:
    base_url: str  # the stack's API (AGENT_API_URL), or serve's address locally
    key: str
    days: float = 7.0  # AGENT_RUN_PAGE_DAYS

    def url(self, run_id: str, now: float, *, private: bool = False) -> str:
        expires = int(now + self.days * 86_400)
        mark = "1" if private else "0"
        query = urllib.parse.urlencode(
            {"expires": expires, "private": mark, "signature": signature(self.key, run_id, expires, mark)}
        )
        return f"{self.base_url}/runs/{urllib.parse.quote(run_id, safe='')}/page?{query}"


def signature(key: str, run_id: str, expires: int, private: str) -> str:
    message = f"run-page\n{run_id}\n{expires}\n{private}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class Link:
    """A link that holds: when it expires (Unix seconds) and whether its page is private."""

    expires: int
    private: bool


def verify(key: str, run_id: str, query: Mapping[str, str], now: float) -> Link:
    """The link, once it holds; ``LinkRefused`` otherwise. Its fields are read by the requests' one strict parser
    (anyone can write them): a malformed one is refused like a forged one."""
    try:
        expires = fields.number(query.get("expires"), "expires", high=fields.UNIX_TIME_HIGH)
        mark = fields.token(query.get("private"), "private", _MARK)
        given = fields.signature(query.get("signature"), "signature", prefix="")
    except fields.FieldError as error:
        raise LinkRefused(f"not a page link ({error.reason})") from None
    if not fields.same(signature(key, run_id, expires, mark), given):
        raise LinkRefused("the link's signature does not match (another run's, altered, or the key was rotated)")
    if expires < now:
        raise LinkRefused("the link has expired: 'agent-runtime runs link RUN_ID' makes a new one")
    return Link(expires, mark == "1")
