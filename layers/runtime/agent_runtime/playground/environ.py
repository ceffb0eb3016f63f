"""The playground's Slack and JIRA as a workflow's Python tools find them: in the environment variables the
runtime's own clients are made from (``toolsets.build.ToolEnv.from_env``) and the tools read themselves.

serve's trigger settings point at the playground (``Playground.configure``), but a tool in ``AGENT_TOOLS_PATH``
runs in serve's process and reads ``os.environ``: without these, ``os.environ["JIRA_BASE_URL"]`` raised, or its
client reached the real service. Each service's variables are set together, for this process and while it serves,
and only where the person set none of them: their own are kept (a half-set group would mix their token with the
page's address). Two playgrounds in one process (tests) share the first one's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

SERVICES = (
    ("SLACK_BOT_TOKEN", "SLACK_API_URL", "SLACK_BOT_USER_ID"),
    ("JIRA_BASE_URL", "JIRA_EMAIL", "JIRA_API_TOKEN"),
)


class Exported:
    """The variables set for the tools, unset again by :meth:`close` (another server in the process starts clean)."""

    def __init__(self, settings: Mapping[str, str], environ: MutableMapping[str, str] | None = None) -> None:
        self.environ = os.environ if environ is None else environ
        unset = [names for names in SERVICES if not any(self.environ.get(name) for name in names)]
        self.names = [name for names in unset for name in names if settings.get(name)]
        for name in self.names:
            self.environ[name] = settings[name]

    def close(self) -> None:
        for name in self.names:
            self.environ.pop(name, None)
        self.names = []
