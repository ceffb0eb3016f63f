"""The sources a process takes, registered once at wiring time (``service/setup.py``, ``service/serve.py`` and the
webhook's ``create_app``): the one that owns an event, and the first workflow it says takes the event."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .base import Routed, Source, first_match

if TYPE_CHECKING:
    from ..workflows import Workflow

UNKNOWN = Source()  # an event of no registered source (stored by a deployment that had it): the defaults


class Sources:
    """One source per event source and kind (a source without kinds: every kind no other of its name lists), one
    per route."""

    def __init__(self, *sources: Source) -> None:
        self.sources = sources
        self._kinds: dict[tuple[str, str | None], Source] = {}
        routes: dict[str, Source] = {}
        for source in sources:
            for kind in source.kinds or (None,):
                if self._kinds.setdefault((source.name, kind), source) is not source:
                    raise ConfigError(f"two sources take {source.name} events of kind {kind or 'any'}")
            if source.route is not None and routes.setdefault(source.route, source) is not source:
                raise ConfigError(f"two sources take the route {source.route}")

    def adding(self, *sources: Source) -> Sources:
        """These sources and ``sources`` (a deployment's own, registered where it is wired)."""
        return Sources(*self.sources, *sources)

    def of(self, event: Routed) -> Source:
        found = self._kinds.get((event.source, event.kind)) or self._kinds.get((event.source, None))
        return found if found is not None else UNKNOWN

    def route(self, event: Routed, workflows: Iterable[Workflow]) -> str | None:
        """The first workflow, by name, whose ``triggers`` take the event (as its source reads them)."""
        workflow = first_match(self.of(event), event, workflows)
        return workflow.name if workflow is not None else None

    def routed(self) -> tuple[Source, ...]:
        """The sources with a route of their own, in registration order."""
        return tuple(source for source in self.sources if source.route is not None)
