"""A page per run: the HTML (``html``), and the signed, expiring links the stack serves it behind (``links``)."""

from __future__ import annotations

from .build import page_for
from .html import RunPage, render
from .links import KEY, LinkRefused, PageLinks, verify

__all__ = ["KEY", "LinkRefused", "PageLinks", "RunPage", "page_for", "render", "verify"]
