"""A page per run: the HTML (``html``), built from the store (``build``), served by the webhook's route (``route``)
behind signed, expiring links (``links``). Exports are lazy: the worker makes links at every answer and needs
none of the page's rendering (the chart, the transcript) at its cold start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .build import page_for
    from .html import RunPage, render
    from .links import KEY, LinkRefused, PageLinks, verify

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "page_for": ".build",
        "RunPage": ".html",
        "render": ".html",
        "KEY": ".links",
        "LinkRefused": ".links",
        "PageLinks": ".links",
        "verify": ".links",
    },
)

__all__ = ["KEY", "LinkRefused", "PageLinks", "RunPage", "page_for", "render", "verify"]
