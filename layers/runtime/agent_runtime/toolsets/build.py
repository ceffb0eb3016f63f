"""The tools a workflow declares, built for one run: MCP servers, OpenAPI operations, Python functions, built-ins.

MCP sessions and OpenAPI documents are kept per process (one listing per cold start); the tools themselves are
made per run, since built-ins close over the run's origin (the Slack thread or JIRA issue it started from).
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, ToolError
from ..workflows.tools import McpServerSettings, OpenApiSettings, ToolSettings
from .secrets import Redactor, Secrets, env_secret, expand, expand_headers

if TYPE_CHECKING:  # Tool: annotations only (the worker's init imports this module; the tools load with a run)
    from ..chat.replies import JiraReplier, SlackReplier
    from ..tools.decorator import Tool
    from ..workflows import Workflow
    from .mcp import McpSession

logger = logging.getLogger(__name__)
logging.getLogger("httpx2").setLevel(logging.WARNING)  # its INFO lines carry URLs, which may carry a secret
_SESSIONS: dict[tuple[str, str, tuple[tuple[str, str], ...]], McpSession] = {}
_SESSIONS_LOCK = threading.Lock()  # serve's lanes build runs at once: two must not each open a server's session


@dataclass(frozen=True)
class ToolEnv:
    """What declared tools may use besides the workflow: secrets, the tools path, the chat clients, the origin."""

    secrets: Secrets = env_secret
    tools_path: tuple[str, ...] = ()
    slack: SlackReplier | None = None
    jira: JiraReplier | None = None
    origin: Mapping[str, str] = field(default_factory=dict)  # source, and channel/thread_ts or issue_key

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> ToolEnv:
        """Local runs: ``AGENT_TOOLS_PATH``, and Slack/JIRA clients when their variables are set."""
        env = os.environ if env is None else env
        # Locally the repository's tools/ folder, as the ToolsLayer's /opt/python is on Lambda's path.
        path = tuple(p for p in env.get("AGENT_TOOLS_PATH", "tools").split(os.pathsep) if p)
        fields: dict[str, object] = {"tools_path": path, "slack": _slack(env), "jira": _jira(env)}
        return cls(**(fields | overrides))  # type: ignore[arg-type]


def _slack(env: Mapping[str, str]) -> SlackReplier | None:
    from ..chat.replies import SlackReplier

    token = env.get("SLACK_BOT_TOKEN")
    return SlackReplier(token, base_url=env.get("SLACK_API_URL") or "https://slack.com/api/") if token else None


def _jira(env: Mapping[str, str]) -> JiraReplier | None:
    from ..chat.replies import JiraReplier

    url, email, token = env.get("JIRA_BASE_URL"), env.get("JIRA_EMAIL"), env.get("JIRA_API_TOKEN")
    return JiraReplier(url, email, token) if url and email and token else None


@dataclass
class DeclaredTools:
    tools: list[Tool] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)  # MCP server → why: this run goes without its tools
    left_out: dict[str, str] = field(default_factory=dict)  # MCP server → the tools of it left out, and why
    without: dict[str, str] = field(default_factory=dict)  # built-in tool → why it is not in this run (credentials)
    toolsets: dict[str, str] = field(default_factory=dict)  # tool name → its toolset (a source's name, python, builtin)

    def add(self, toolset: str, tools: list[Tool]) -> None:
        self.tools += tools
        self.toolsets |= {item.name: toolset for item in tools}

    def only(self, offered: Callable[[str], bool] | None) -> DeclaredTools:
        """The tools ``offered`` keeps (a requester's, under the workflow's access.tools; None: every one)."""
        if offered is None:
            return self
        kept = [item for item in self.tools if offered(item.name)]
        names = {item.name for item in kept}
        toolsets = {name: toolset for name, toolset in self.toolsets.items() if name in names}
        return replace(self, tools=kept, toolsets=toolsets)

    @property
    def notes(self) -> list[str]:
        """For the system prompt: the model is told which tools it will not find, and why."""
        return (
            [
                f"Tools of the MCP server {name!r} are unavailable in this run: {why}"
                for name, why in self.unreachable.items()
            ]
            + [
                f"Some tools of the MCP server {name!r} are left out of this run: {why}"
                for name, why in self.left_out.items()
            ]
            + [f"The built-in tool {name!r} is unavailable in this run: {why}" for name, why in self.without.items()]
        )


def declared_tools(workflow: Workflow, env: ToolEnv, *, offline: bool = False, quiet: bool = False) -> DeclaredTools:
    """Raises ConfigError for what the workflow must fix (a missing secret, an unknown tool in allow, a
    malformed document); an unreachable MCP server, or a built-in without its credentials, only costs its tools,
    said in the prompt and in one log line each (``quiet``: not logged, for ``validate``, which says it)."""
    settings: ToolSettings = workflow.tools
    base_dir = workflow.path.parent if workflow.path else None
    found = DeclaredTools()
    for server in settings.mcp:
        if not offline:
            tools = _acting(_mcp(server, env, found, settings), server.as_requester)
            found.add(server.name, _with_approval(tools, settings, server))
    for api in settings.openapi:
        if offline and api.spec.startswith(("https://", "http://")):
            continue
        found.add(api.name, _with_approval(_acting(_openapi(api, env, base_dir), api.as_requester), settings, api))
    if settings.python:
        from .python import python_tools

        made = [
            t
            for ref in settings.python
            for t in _acting(python_tools([ref], env.tools_path), settings.requester.get(ref))
        ]
        found.add("python", _with_approval(made, settings))
    if settings.builtin and not offline:
        from .builtin import builtin_tools, without_credentials

        made = builtin_tools(settings.builtin, slack=env.slack, jira=env.jira, origin=env.origin)
        found.add("builtin", _with_approval(made, settings))
        found.without = without_credentials(settings.builtin, slack=env.slack, jira=env.jira)
        for name, why in found.without.items() if not quiet else ():
            logger.warning("tools.builtin %r is left out of this run: %s", name, why)
    return found


def _acting(tools: list[Tool], provider: str | None) -> list[Tool]:
    """The tools of a source declared ``as_requester``: called with the requester's own token (``identity``)."""
    return [dataclasses.replace(t, as_requester=provider) for t in tools] if provider else tools


def _with_approval(
    tools: list[Tool], settings: ToolSettings, source: McpServerSettings | OpenApiSettings | None = None
) -> list[Tool]:
    """Each tool's approval mode: its override by name, else its source's, else the section's."""
    return [dataclasses.replace(t, approval=settings.approval_for(t.name, source)) for t in tools]


def _mcp(server: McpServerSettings, env: ToolEnv, found: DeclaredTools, settings: ToolSettings) -> list[Tool]:
    from .mcp import McpSession, mcp_tools

    where = f"tools.mcp {server.name!r}"
    if server.command and os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        raise ConfigError(f"{where}: stdio servers (command) run only locally; in Lambda use a streamable HTTP url")
    used: list[str] = []
    headers = expand_headers(server.headers, env.secrets, where, used)
    url = expand(server.url, env.secrets, f"{where} url", used) if server.url else None
    # One session per source as declared (its name and timeout travel with it) and per resolved secret values.
    key = (repr(dataclasses.replace(server, headers={})), url or "", tuple(sorted(headers.items())))
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            session = _SESSIONS[key] = McpSession(dataclasses.replace(server, url=url), headers, Redactor(used))
    try:
        # A server whose tools may be deferred needs no allow: list, however many it lists (toolsearch).
        tools, problems = mcp_tools(server, session, searchable=settings.search.mode(server.name) != "never")
    except (ToolError, ConfigError) as error:  # unreachable, a listing error or timeout, too many tools
        logger.warning("server=<%s> | MCP server unusable; its tools are left out of this run", server.name)
        found.unreachable[server.name] = str(error)
        return []
    except Exception as error:  # whatever a hostile listing does: it costs that server's tools, not the run
        logger.warning("server=<%s>, error=<%s> | MCP listing failed", server.name, type(error).__name__)
        found.unreachable[server.name] = f"its listing could not be read ({type(error).__name__})"
        return []
    if problems:
        found.left_out[server.name] = "; ".join(problems)[:2_000]
    return tools


def _openapi(api: OpenApiSettings, env: ToolEnv, base_dir: Path | None) -> list[Tool]:
    from .openapi import load_spec, openapi_tools

    where = f"tools.openapi {api.name!r}"
    used: list[str] = []
    headers = expand_headers(api.headers, env.secrets, where, used)
    return openapi_tools(api, load_spec(api, base_dir), headers, Redactor(used))


def check_names(tools: list[Tool], taken: list[str]) -> None:
    """Declared tools may not reuse a name: the runtime's own, or another source's."""
    seen = set(taken)
    for item in tools:
        if item.name in seen:
            raise ConfigError(f"tools: two tools are named {item.name!r} (rename a source or filter its tools)")
        seen.add(item.name)


@dataclass(frozen=True)
class Findings:
    """What ``workflows validate`` says of a tools section: errors fail it; warnings are what a run here goes
    without (a built-in tool whose credentials are not set)."""

    errors: list[str]
    warnings: list[str]


def validate_tools(workflow: Workflow, env: ToolEnv, taken: list[str], *, offline: bool = False) -> Findings:
    """Every problem of the workflow's declared tools, one line each, each source checked on its own (one
    broken source hides no other). Always: local OpenAPI documents, Python imports, unique names. Unless
    ``offline``: secrets and credentials set, each MCP server reachable and its listing against allow/deny,
    remote documents; a source whose secret is missing is not reached (the missing secret is its error)."""
    settings, errors = workflow.tools, []
    if offline:  # the file itself: no secret store, no server, no credentials needed
        given = env.secrets
        env = dataclasses.replace(env, secrets=lambda name: given(name) or "offline")
    missing = {name for name in settings.secrets() if not env.secrets(name)}
    unset = [  # what this machine lacks, not the file's fault: a warning (a run here fails until it is set)
        f"tools: secret {name!r} is not set (environment variable {name.upper()} locally): a run here fails until it is"
        for name in sorted(missing)
    ]
    tools: list[Tool] = []
    for part in _sources(settings, missing):
        try:
            found = declared_tools(dataclasses.replace(workflow, tools=part), env, offline=offline, quiet=True)
        except ConfigError as error:
            errors.append(str(error))
            continue
        tools += found.tools
        errors += [f"tools.mcp {name!r}: {why}" for name, why in {**found.unreachable, **found.left_out}.items()]
    try:
        check_names(tools, taken)
    except ConfigError as error:
        errors.append(str(error))
    return Findings(errors, [*unset, *(_without(settings, env) if not offline else [])])


def _sources(settings: ToolSettings, missing: set[str]) -> list[ToolSettings]:
    """The section split into one source each (the section's approval settings kept), but those whose secrets
    are missing."""
    from ..workflows.tools import SECRET_REF

    def ready(source: McpServerSettings | OpenApiSettings) -> bool:
        values = [*source.headers.values(), getattr(source, "url", None) or ""]
        return not {name for value in values for name in SECRET_REF.findall(value)} & missing

    alone = dataclasses.replace(settings, mcp=(), openapi=(), python=(), builtin=())
    return [
        *(dataclasses.replace(alone, mcp=(s,)) for s in settings.mcp if ready(s)),
        *(dataclasses.replace(alone, openapi=(s,)) for s in settings.openapi if ready(s)),
        *(dataclasses.replace(alone, python=(ref,)) for ref in settings.python),
        dataclasses.replace(alone, builtin=settings.builtin),
    ]


def _without(settings: ToolSettings, env: ToolEnv) -> list[str]:
    from .builtin import without_credentials

    lacking = without_credentials(settings.builtin, slack=env.slack, jira=env.jira)
    return [f"tools.builtin {name!r}: {why}: a run here goes without it" for name, why in lacking.items()]


def close_sessions(*, wait: float = 0.0) -> None:
    """Forget every MCP session (a SnapStart restore leaves their connections dead); the next use reconnects.
    ``wait``: seconds each transport may take to close (at exit: stdio servers end with the process)."""
    while True:
        with _SESSIONS_LOCK:
            if not _SESSIONS:
                return
            session = _SESSIONS.popitem()[1]
        session.close(wait=wait)


def _close_at_exit() -> None:
    """No stdio server outlives the CLI or the worker; a remote session's goodbye to a server already gone is
    not worth a warning at exit."""
    logging.getLogger("mcp").setLevel(logging.ERROR)
    close_sessions(wait=4.0)  # mcp.CLOSE_SECONDS


atexit.register(_close_at_exit)
