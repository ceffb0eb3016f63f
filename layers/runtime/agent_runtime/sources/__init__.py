"""Trigger sources: one module per source, each the one home of what differs between them — its route and parser,
the workflows it starts, "stop" written in its thread, the message its run starts from, where the answer goes, how
the runs channel names it, whether it is private, a decision said in it (``base.Source``).

A new source is its module and one line in ``BUILTIN`` (or, for one deployment, ``BUILTIN.adding(...)`` where it
is wired: ``service/setup.py``, ``service/serve.py``). The webhook and the worker take the registry they are
given; nothing else branches on an event's source.
"""

from __future__ import annotations

from .api import Api
from .base import Chat, Queued, Request, Routed, Source
from .jira import Jira
from .registry import Sources
from .schedule import Schedule
from .signed import SignedWebhook
from .slack_mention import SlackMention
from .slack_reaction import SlackReaction

BUILTIN = Sources(SlackMention(), SlackReaction(), Jira(), SignedWebhook(), Schedule(), Api())

__all__ = ["BUILTIN", "Chat", "Queued", "Request", "Routed", "Source", "Sources"]
