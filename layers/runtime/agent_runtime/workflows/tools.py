"""The workflow's ``tools:`` section: MCP servers, OpenAPI operations, Python functions and built-in tools.

```yaml
tools:
  mcp:
    - name: notion                       # tools appear as notion_<tool>
      url: https://mcp.notion.com/mcp
      headers: {Authorization: "Bearer ${secret:notion_token}"}
      allow: [search, fetch]             # or deny: [...]; default: every tool the server lists
      read_only: [search]                # override the server's hints (mutating: [...] too)
      timeout_seconds: 30
  openapi:
    - name: billing
      spec: specs/billing.yaml           # next to the workflow, or a URL
      base_url: https://billing.internal/api
      operations: [getInvoice, listInvoices]
      headers: {Authorization: "Bearer ${secret:billing_token}"}
  python: [my_tools.jira:find_duplicates, my_tools.ops]   # a function, or every @tool of a module
  # python: [{function: my_tools.gh:my_repos, as_requester: github}]   # with the requester's own token (oauth:)
  builtin: [slack_thread, jira_issue, jira_search]
  search: {threshold_tokens: 6000}       # tools disclosed progressively: see workflows/toolsearch.py
```
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..sections import Report, check_keys, choice, flag, integer, mapping, text
from .toolsearch import SearchSettings, parse_search_section

KEYS = (
    "mcp",
    "openapi",
    "python",
    "builtin",
    "approval",
    "approval_overrides",
    "approvers",
    "approval_timeout_hours",
    "search",
)
SOURCE_KEYS = ("name", "headers", "read_only", "mutating", "timeout_seconds", "approval", "as_requester")
PYTHON_KEYS = ("function", "as_requester")
MCP_KEYS = (*SOURCE_KEYS, "url", "command", "allow", "deny")
OPENAPI_KEYS = (*SOURCE_KEYS, "spec", "base_url", "operations", "allow_http")
APPROVAL_MODES = ("mutating", "always", "never")  # mutating: every call of a mutating tool asks first
BUILTINS = ("slack_thread", "jira_issue", "jira_search")
SOURCE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,23}$")  # the prefix of its tools' names: short, one word
PYTHON_REF = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")  # module:function, or a whole module
SECRET_REF = re.compile(r"\$\{secret:([A-Za-z0-9_]+)\}")
DEFAULT_TIMEOUT = 30
MAX_TIMEOUT = 900


@dataclass(frozen=True, slots=True)
class McpServerSettings:
    name: str
    url: str | None = None  # streamable HTTP
    command: tuple[str, ...] = ()  # stdio: local runs only (Lambda cannot spawn servers)
    headers: Mapping[str, str] = field(default_factory=dict)
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    mutating: tuple[str, ...] = ()
    timeout_seconds: int = DEFAULT_TIMEOUT
    approval: str | None = None  # this source's default; None: the section's
    as_requester: str | None = None  # an oauth provider: each call with the requester's own token (HTTP only)


@dataclass(frozen=True, slots=True)
class OpenApiSettings:
    name: str
    spec: str
    base_url: str | None = None  # default: the document's first server (on the document's own host, if remote)
    allow_http: bool = False  # plain http for the document and the requests beyond loopback (headers go in clear)
    operations: tuple[str, ...] | None = None  # default: every operation with an operationId
    headers: Mapping[str, str] = field(default_factory=dict)
    read_only: tuple[str, ...] = ()
    mutating: tuple[str, ...] = ()
    timeout_seconds: int = DEFAULT_TIMEOUT
    approval: str | None = None
    as_requester: str | None = None  # an oauth provider: each call with the requester's own token


@dataclass(frozen=True, slots=True)
class ToolSettings:
    mcp: tuple[McpServerSettings, ...] = ()
    openapi: tuple[OpenApiSettings, ...] = ()
    python: tuple[str, ...] = ()
    builtin: tuple[str, ...] = ()
    approval: str = "mutating"  # for every declared tool, unless its source or approval_overrides says otherwise
    approval_overrides: Mapping[str, str] = field(default_factory=dict)  # tool name (as the model sees it) → mode
    approvers: tuple[str, ...] = ()  # Slack user ids / JIRA account ids, or "requester"; empty: anyone
    approval_timeout_hours: int = 24
    search: SearchSettings = field(default_factory=SearchSettings)  # tools disclosed progressively
    requester: Mapping[str, str] = field(default_factory=dict)  # a python ref → the oauth provider it acts through

    def providers(self) -> dict[str, str]:
        """Each ``as_requester`` provider named, with where (for validation's messages)."""
        named = {f"tools.python {ref!r}": provider for ref, provider in self.requester.items()}
        sources: list[McpServerSettings | OpenApiSettings] = [*self.mcp, *self.openapi]
        for source in sources:
            if source.as_requester:
                named[f"tools {source.name!r}"] = source.as_requester
        return named

    def approval_for(self, tool: str, source: McpServerSettings | OpenApiSettings | None = None) -> str:
        return self.approval_overrides.get(tool) or (source.approval if source else None) or self.approval

    def secrets(self) -> set[str]:
        """Every ``${secret:NAME}`` the section refers to."""
        sources: list[McpServerSettings | OpenApiSettings] = [*self.mcp, *self.openapi]
        values = [v for source in sources for v in source.headers.values()]
        values += [source.url or "" for source in self.mcp]
        return {name for value in values for name in SECRET_REF.findall(value)}

    def __bool__(self) -> bool:
        return bool(self.mcp or self.openapi or self.python or self.builtin)


def parse_tools_section(data: Mapping[str, Any], report: Report) -> ToolSettings:
    check_keys("tools", data, KEYS, report)
    mcp = tuple(_mcp(item, f"tools.mcp[{i}]", report) for i, item in enumerate(_entries(data, "mcp", report)))
    openapi = tuple(
        _openapi(item, f"tools.openapi[{i}]", report) for i, item in enumerate(_entries(data, "openapi", report))
    )
    python, requester = _python(data, report)
    for ref in python:
        if not PYTHON_REF.fullmatch(ref):
            report("tools.python", f"{ref!r}: use 'package.module:function', or 'package.module' for all its tools")
    builtin = _names(data, "builtin", "tools", report)
    for name in builtin:
        if name not in BUILTINS:
            meant = difflib.get_close_matches(name, BUILTINS, n=1, cutoff=0.6)
            said = f"did you mean {meant[0]!r}?" if meant else f"available: {', '.join(BUILTINS)}"
            report("tools.builtin", f"unknown built-in tool {name!r}; {said}")
    seen: set[str] = set()
    sources: list[McpServerSettings | OpenApiSettings] = [*mcp, *openapi]
    for source in sources:
        if source.name in seen:
            report("tools", f"two sources are named {source.name!r}: their tools' names would collide")
        seen.add(source.name)
    overrides = mapping("tools", data, "approval_overrides", report)
    for name, mode in overrides.items():
        if mode not in APPROVAL_MODES:
            report(f"tools.approval_overrides.{name}", f"must be one of {', '.join(APPROVAL_MODES)}, not {mode!r}")
    return ToolSettings(
        mcp,
        openapi,
        python,
        tuple(n for n in builtin if n in BUILTINS),
        approval=choice("tools", data, "approval", APPROVAL_MODES, "mutating", report) or "mutating",
        approval_overrides={str(k): str(v) for k, v in overrides.items() if v in APPROVAL_MODES},
        approvers=_names(data, "approvers", "tools", report),
        approval_timeout_hours=integer("tools", data, "approval_timeout_hours", 24, report, low=1, high=24 * 30),
        search=parse_search_section(mapping("tools", data, "search", report), report, tuple(seen)),
        requester=requester,
    )


def _python(data: Mapping[str, Any], report: Report) -> tuple[tuple[str, ...], dict[str, str]]:
    """``python``: refs, or ``{function: ref, as_requester: provider}`` for one acting as the requester."""
    value = data.get("python", [])
    if not isinstance(value, list):
        report("tools.python", "must be a list of 'module:function' (or {function, as_requester})")
        return (), {}
    refs, requester = [], {}
    for item in value:
        if isinstance(item, Mapping):
            check_keys("tools.python", item, PYTHON_KEYS, report)
            ref, provider = item.get("function"), item.get("as_requester")
            if not isinstance(ref, str) or not isinstance(provider, str) or not ref or not provider:
                report("tools.python", "a mapping entry needs function: module:function and as_requester: <provider>")
                continue
            requester[ref] = provider
            item = ref
        if not isinstance(item, str) or not item:
            report("tools.python", "must be a list of strings (or {function, as_requester})")
            continue
        refs.append(item)
    return tuple(refs), requester


def _entries(data: Mapping[str, Any], key: str, report: Report) -> list[Mapping[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        report(f"tools.{key}", "must be a list of mappings")
        return []
    return value


def _names(data: Mapping[str, Any], key: str, where: str, report: Report) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        report(f"{where}.{key}", "must be a list of strings")
        return ()
    return tuple(value)


def _common(item: Mapping[str, Any], where: str, report: Report) -> dict[str, Any]:
    name = text(where, item, "name", report) or ""
    if name and not SOURCE_NAME.fullmatch(name):
        report(f"{where}.name", "use 1-24 lowercase letters, digits or '_', starting with a letter")
    headers = mapping(where, item, "headers", report)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        report(f"{where}.headers", "must map header names to strings")
        headers = {}
    return {
        "name": name,
        "headers": dict(headers),
        "read_only": _names(item, "read_only", where, report),
        "mutating": _names(item, "mutating", where, report),
        "timeout_seconds": integer(where, item, "timeout_seconds", DEFAULT_TIMEOUT, report, low=1, high=MAX_TIMEOUT),
        "approval": choice(where, item, "approval", APPROVAL_MODES, None, report),
        "as_requester": text(where, item, "as_requester", report, required=False),
    }


def _mcp(item: Mapping[str, Any], where: str, report: Report) -> McpServerSettings:
    check_keys(where, item, MCP_KEYS, report)
    url, command = text(where, item, "url", report, required=False), item.get("command")
    if (url is None) == (command is None):
        report(where, "give exactly one of 'url' (streamable HTTP) or 'command' (stdio, local runs only)")
    if url is not None and not url.startswith(("https://", "http://")):
        report(f"{where}.url", f"must be an http(s) URL, not {url!r}")
    if command is not None and (not isinstance(command, list) or not all(isinstance(c, str) for c in command)):
        report(f"{where}.command", "must be a list of strings (the program and its arguments)")
        command = None
    allow = _names(item, "allow", where, report) if "allow" in item else None
    deny = _names(item, "deny", where, report)
    if allow is not None and deny:
        report(where, "give 'allow' or 'deny', not both")
    if command is not None and item.get("as_requester") is not None:
        report(f"{where}.as_requester", "acting as the requester needs a server over HTTP (url), not a command")
    return McpServerSettings(
        url=url, command=tuple(command or ()), allow=allow, deny=deny, **_common(item, where, report)
    )


def _openapi(item: Mapping[str, Any], where: str, report: Report) -> OpenApiSettings:
    check_keys(where, item, OPENAPI_KEYS, report)
    spec = text(where, item, "spec", report) or ""
    base_url = text(where, item, "base_url", report, required=False)
    operations = _names(item, "operations", where, report) if "operations" in item else None
    allow_http = flag(where, item, "allow_http", report)
    return OpenApiSettings(
        spec=spec, base_url=base_url, operations=operations, allow_http=allow_http, **_common(item, where, report)
    )
