"""``GET /runs/{run_id}/page`` as the webhook serves it: the link checked, the page made and redacted, the headers.

The webhook only maps what this raises to its answers (403 for a link that does not hold, 404 for pages off or a
run the store no longer has, 500 for a record that does not read as a run); everything a page is lives here."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..ids import RUN_ID
from ..redaction import Redactor
from ..stores import RunStore
from ..stores.base import Store
from ..triggers import fields
from ..views.parsing import Unreadable
from ..workflows import Workflow
from .build import page_for
from .html import CSP
from .links import LinkRefused, verify

HEADERS = {  # the page's own CSP too: nothing but inline style and data: images, never indexed or cached
    "Content-Security-Policy": CSP,
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
    "X-Content-Type-Options": "nosniff",
}


class PageNotServed(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def declared_secrets(workflows: Iterable[Workflow]) -> set[str]:
    """The secret names the workflows declare: their tools' ``${secret:NAME}`` and their webhooks' keys."""
    names: set[str] = set()
    for workflow in workflows:
        names |= workflow.tools.secrets()
        names |= {workflow.triggers.webhook.secret} if workflow.triggers.webhook is not None else set()
    return names


def served(
    run_id: str,
    query: Mapping[str, str],
    *,
    key: str | None,
    store: Callable[[], Store] | None,
    secrets: Callable[[], Sequence[str]],
    now: float,
) -> tuple[str, bool]:
    """The page's HTML and whether it is private; ``PageNotServed`` otherwise."""
    if not key or store is None:
        raise PageNotServed(404, "run pages are not enabled (no run_page_key)")
    try:
        fields.token(run_id, "the run id", RUN_ID, status=403)
        link = verify(key, run_id, query, now)
    except (LinkRefused, fields.FieldError) as error:
        raise PageNotServed(403, str(error)) from None
    note = f"This link expires {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(link.expires))}."
    try:
        page = page_for(RunStore(store()), run_id, private=link.private, redact=Redactor(secrets()), note=note)
    except Unreadable:  # where it fails is for `runs show`, not for whoever holds a link
        raise PageNotServed(500, "the run's record cannot be read: `runs show RUN_ID --json` prints it") from None
    if page is None:
        raise PageNotServed(404, "no such run (its record has expired?)")
    return page, link.private
