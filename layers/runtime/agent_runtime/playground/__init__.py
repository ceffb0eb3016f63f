"""A local playground for ``agent-runtime serve``: a page that looks and behaves like a Slack workspace (and a
JIRA site) for the workflows, with Slack's Web API and JIRA's REST API served beside it, so every surface of a
workflow can be tried in a browser with nothing deployed (``app``: the routes; ``actions`` and ``deliver``: what
the page's clicks become; ``slack_api``, ``slack_reads``, ``slack_files``, ``jira_api``: the APIs the runtime
calls; ``workspace``: what they keep; ``layout``: the workspace drawn from the workflows; ``limits``: Slack's)."""

from __future__ import annotations

from .app import Playground

__all__ = ["Playground"]
