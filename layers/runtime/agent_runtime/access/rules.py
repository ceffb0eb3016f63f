"""A workflow's access rules evaluated for one requester: may they start it, decide its approvals, reach a tool.

Every answer is a ``Verdict`` — the action, allowed or not, who, the groups they are in, and the reason in one line
— so what the webhook refuses, what the worker tells, what the run records and what its page shows are the same
words. A workflow without a rule for an action allows it, as it did before rules existed; a rule that names groups
lets in their members only. There is no mode that skips a rule that is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from .principal import Directory, DirectoryError, NoDirectory, Requester, looked_up, statically_in

if TYPE_CHECKING:
    from ..workflows import Workflow


@dataclass(frozen=True, slots=True)
class Verdict:
    action: str  # start | approve | tool
    allowed: bool
    who: str  # the requester's person id (slack:U0123)
    groups: tuple[str, ...]  # the workflow's access groups they are in
    reason: str  # one line: which rule decided, and for a refusal how to get in
    tool: str | None = None


class Access:
    """The rules of one workflow, with a directory for the groups only it can read (looked up once per person)."""

    def __init__(self, workflow: Workflow, directory: Directory | None = None) -> None:
        self.workflow, self.rules = workflow.name, workflow.access
        self.directory = directory or NoDirectory()
        self._found: dict[Requester, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def groups_of(self, who: Requester) -> tuple[str, ...]:
        """The workflow's groups ``who`` is in (a group the directory could not read counts as not)."""
        return self._lookup(who)[0]

    def _lookup(self, who: Requester) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if who not in self._found:
            groups: list[str] = []
            unread: list[str] = []
            for name, group in self.rules.groups.items():
                member = statically_in(group, who)
                if member is None:
                    try:
                        member = looked_up(group, who, self.directory)
                    except DirectoryError as error:
                        member, unread = False, [*unread, f"{name}: {error}"]
                groups += [name] if member else []
            self._found[who] = (tuple(groups), tuple(unread))
        return self._found[who]

    def at_door(self, who: Requester) -> Verdict | None:
        """The start decision from the ids the rules list alone (the webhook has no directory); None when a
        group only a directory can read might let ``who`` in."""
        start = self.rules.start
        if start is None:
            return None
        static = [statically_in(self.rules.groups[name], who) for name in start if name in self.rules.groups]
        if any(static):
            return self.may_start(who)
        return None if None in static else self.may_start(who)

    def may_start(self, who: Requester) -> Verdict:
        start = self.rules.start
        groups, unread = self._lookup(who)
        if start is None:
            return Verdict("start", True, who.person, groups, "no access.start rule: whoever its triggers hear")
        inside = [name for name in start if name in groups]
        if inside:
            return Verdict("start", True, who.person, groups, f"in {', '.join(inside)} (access.start)")
        why = f"you are not in {_names(start)}, the groups access.start lets in"
        why += f" (could not read {'; '.join(unread)})" if unread else ""
        return Verdict("start", False, who.person, groups, f"{why}: ask the {self.workflow} workflow's owner")

    def may_approve(self, who: Requester, approvers: Sequence[str], requester: str) -> Verdict:
        """``tools.approvers`` (ids, "requester") and ``access.approve`` (groups) together; neither: anyone."""
        groups, approve = self._lookup(who)[0], self.rules.approve
        if not approvers and approve is None:
            return Verdict("approve", True, who.person, groups, "no approvers named: anyone in the conversation")
        if who.user in approvers or ("requester" in approvers and who.user == requester):
            return Verdict("approve", True, who.person, groups, "named in tools.approvers")
        inside = [name for name in approve or () if name in groups]
        if inside:
            return Verdict("approve", True, who.person, groups, f"in {', '.join(inside)} (access.approve)")
        return Verdict("approve", False, who.person, groups, "not in tools.approvers nor an access.approve group")

    def offered(self, who: Requester) -> Callable[[str], bool] | None:
        """Which declared tools ``who``'s runs are offered (None: all of them, no access.tools rule)."""
        table = self.rules.tools
        if table is None:
            return None
        groups = self._lookup(who)[0]
        patterns = [pattern for name in groups for pattern in table.get(name, ())]
        return lambda tool: any(fnmatchcase(tool, pattern) for pattern in patterns)

    def may_call(self, who: Requester, tool: str) -> Verdict:
        allowed, groups = self.offered(who), self.groups_of(who)
        if allowed is None or allowed(tool):
            return Verdict("tool", True, who.person, groups, "offered to this requester", tool)
        return Verdict("tool", False, who.person, groups, f"no group of yours reaches {tool} (access.tools)", tool)


def _names(groups: Sequence[str]) -> str:
    return ", ".join(groups) if groups else "(none)"
