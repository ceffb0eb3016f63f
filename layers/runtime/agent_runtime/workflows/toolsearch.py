"""The workflow's ``tools.search:`` section: tools disclosed progressively (``agent_runtime.toolsearch``).

```yaml
tools:
  mcp: [{name: github, url: ...}, {name: gitlab, url: ...}]   # whole servers, no allow: needed
  search:
    threshold_tokens: 6000        # default: 5 % of the window, at least 1,000; toolsets on auto are deferred past it
    defer: {github: always, builtin: never}   # per toolset (an mcp/openapi name, python, builtin)
    chooser: model                # model (default): a model call in a window of its own picks among the
                                  # lexical stage's candidates; lexical: the lexical stage alone
    chooser_model: gpt-4.1-nano   # default: the workflow's model
    results: 5                    # tools a search returns at most
    skills_listed: 20             # more skills than this: tool_search finds them too, the prompt lists none
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..sections import Report, check_keys, choice, integer, text

KEYS = ("threshold_tokens", "defer", "chooser", "chooser_model", "results", "candidates", "skills_listed")
MODES = ("auto", "always", "never")  # auto: deferred when the declared tools' schemas pass the threshold
CHOOSERS = ("model", "lexical")
UNNAMED_TOOLSETS = ("python", "builtin")  # toolsets without a name of their own in tools:
MAX_RESULTS = 20
MAX_CANDIDATES = 60
MAX_TOOLS_WITHOUT_ALLOW = 64  # an MCP server never deferred that lists more needs allow: (and auto defers it)


@dataclass(frozen=True, slots=True)
class SearchSettings:
    threshold_tokens: int | None = None  # None: 5 % of the window the workflow uses, at least 1,000 tokens
    defer: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # toolset -> mode
    chooser: str = "model"
    chooser_model: str | None = None  # None: the workflow's model
    results: int = 5
    candidates: int = 20  # what the lexical stage hands the chooser
    skills_listed: int = 20  # the most skills the system prompt lists; a larger catalogue is searched instead

    def mode(self, toolset: str) -> str:
        return self.defer.get(toolset, "auto")


def parse_search_section(data: Mapping[str, Any], report: Report, toolsets: tuple[str, ...]) -> SearchSettings:
    """``toolsets``: the names the section declares (mcp and openapi sources); python and builtin are always
    names here."""
    where = "tools.search"
    check_keys(where, data, KEYS, report)
    defer = data.get("defer", {})
    if not isinstance(defer, Mapping):
        report(f"{where}.defer", f"must map toolset names to {', '.join(MODES)}")
        defer = {}
    known = (*toolsets, *UNNAMED_TOOLSETS)
    for name, mode in defer.items():
        if name not in known:
            report(f"{where}.defer.{name}", f"no toolset of that name; declared: {', '.join(known)}")
        elif mode not in MODES:
            report(f"{where}.defer.{name}", f"must be one of {', '.join(MODES)}, not {mode!r}")
    threshold = integer(where, data, "threshold_tokens", 0, report, low=0) if "threshold_tokens" in data else None
    defaults = SearchSettings()
    return SearchSettings(
        threshold_tokens=threshold,
        defer=MappingProxyType({str(k): str(v) for k, v in defer.items() if k in known and v in MODES}),
        chooser=choice(where, data, "chooser", CHOOSERS, "model", report) or "model",
        chooser_model=text(where, data, "chooser_model", report, required=False),
        results=integer(where, data, "results", defaults.results, report, low=1, high=MAX_RESULTS),
        candidates=integer(where, data, "candidates", defaults.candidates, report, low=1, high=MAX_CANDIDATES),
        skills_listed=integer(where, data, "skills_listed", defaults.skills_listed, report, low=0),
    )
