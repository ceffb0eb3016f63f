"""The gate a call of a tool that acts as the requester waits at, as a call needing approval waits at its own: the
person connected (a fresh token: the call runs), asked and not answered yet (the call waits, unanswered; the run is
checkpointed and a "connected" message resumes it, in another invocation), declined, or past its time.

What was asked is kept in the run state (the connections slot, by call id) and recorded as events; the token itself
never: it is read from the vault for each invocation and lives in the call's context only (``credentials``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..approvals.gate import Decision, arguments_hash
from ..credentials import CURRENT, TokenRejected
from ..errors import ToolError
from ..events import ConnectAsked, ConnectSettled
from ..redaction import Redactor
from ..tools.decorator import Tool, render_result
from .connections import Connections, Need
from .waiting import CONNECTIONS, ConnectEntry

if TYPE_CHECKING:
    from ..models import ToolCall
    from ..steps import Run


SETTLED = {"connected": Decision.APPROVED, "denied": Decision.DENIED}


class ConnectGate:
    """Lets a call of an ``as_requester`` tool through once its person is connected; asks them once otherwise."""

    def __init__(self, connections: Connections, providers: Mapping[str, str]) -> None:
        self.connections, self.providers = connections, providers  # tool name → its provider

    def asks(self, tool: Tool) -> bool:
        return tool.name in self.providers

    def waiting(self, run: Run, call: ToolCall) -> str:
        entry = CONNECTIONS.get(run.state.context).get(call.id)
        provider = entry["provider"] if entry else "a provider"
        return f"{self.connections.person} to connect {provider} (for {call.name})"

    def refusal(self, tool: str, decision: Decision, who: str | None) -> str:
        if decision is Decision.EXPIRED:
            return f"not run: {who or 'the person'} did not connect in time. Do not retry it unasked."
        return f"not run: {who or 'the connection was declined'}. Do not retry it; say so in your answer."

    def check(self, run: Run, call: ToolCall) -> tuple[Decision, str | None]:
        provider = self.providers[call.name]
        why = self.connections.unusable(provider)
        if why is not None:
            return Decision.DENIED, f"{call.name} acts as the requester through {provider}, and {why}"
        entries = CONNECTIONS.use(run.state.context)
        entry = entries.get(call.id)
        if self.connections.credential(provider) is not None:  # connected (now, or before): it runs
            pending = entry is not None and entry["status"] == Decision.PENDING
            return self._settle(run, call, entry, "connected") if entry and pending else (Decision.APPROVED, None)
        if entry is not None and entry["status"] != Decision.PENDING:
            entries.pop(call.id)  # connected once, revoked since: asked again
            entry = None
        if entry is None:
            return self._ask(run, call, provider, entries)
        return self._pending(run, call, entry)

    def _pending(self, run: Run, call: ToolCall, entry: ConnectEntry) -> tuple[Decision, str | None]:
        asker = self.connections.asker
        status = asker.status(entry["ask"]) if asker is not None else "gone"
        if status in SETTLED:
            return self._settle(run, call, entry, status)
        if self.connections.clock() >= entry["expires_at"] or status == "gone":
            return self._settle(run, call, entry, "expired")
        return Decision.PENDING, None

    def _ask(
        self, run: Run, call: ToolCall, provider: str, entries: dict[str, ConnectEntry]
    ) -> tuple[Decision, str | None]:
        person, asker, now = str(self.connections.person), self.connections.asker, self.connections.clock()
        if asker is None:
            return Decision.DENIED, f"{person} has not connected {provider}, and nobody can ask them here"
        same = next((e for e in entries.values() if e["provider"] == provider and e["status"] == "pending"), None)
        expires = now + self.connections.timeout_hours * 3600
        asked = asker.ask(Need(person, provider, run.state.run_id, call.name, expires)) if same is None else None
        if asked is not None and asked.refused:
            return Decision.DENIED, f"{person} has not connected {provider}: {asked.refused}"
        if asked is not None and asked.connected:
            return self.check(run, call)
        ask = same["ask"] if same is not None else str(asked.ask if asked else "")
        entries[call.id] = ConnectEntry(
            tool=call.name,
            arguments_sha256=arguments_hash(call.arguments),
            requested_at=now,
            expires_at=same["expires_at"] if same is not None else expires,
            status=Decision.PENDING,
            by=None,
            decided_at=None,
            provider=provider,
            person=person,
            ask=ask,
        )
        run.record.event(ConnectAsked(call=call.id, tool=call.name, provider=provider, person=person))
        return Decision.PENDING, None

    def _settle(self, run: Run, call: ToolCall, entry: ConnectEntry, status: str) -> tuple[Decision, str | None]:
        decision = SETTLED.get(status, Decision.EXPIRED)
        entry["status"], entry["decided_at"] = str(decision), self.connections.clock()
        entry["by"] = entry["person"]
        run.record.event(
            ConnectSettled(
                call=call.id, tool=call.name, provider=entry["provider"], person=entry["person"], outcome=status
            )
        )
        if decision is Decision.DENIED:
            return decision, f"{entry['person']} declined to connect {entry['provider']}"
        return decision, entry["person"]


def bound(tool: Tool, connections: Connections) -> Tool:
    """``tool`` called with its requester's credential (in the call's context alone), and whatever it returns or
    raises redacted of the token. A token the provider refuses is forgotten: the next call asks again."""
    provider, call = str(tool.as_requester), tool.fn

    def with_credential(*args: Any, **kwargs: Any) -> str:
        found = connections.live.get(provider) or connections.credential(provider)
        if found is None:
            why = connections.unusable(provider) or f"{connections.person} has not connected {provider}"
            raise ToolError(f"this tool acts as the requester through {provider}: {why}")
        redact = Redactor([found.access_token])
        token = CURRENT.set(found)
        try:
            return redact(render_result(call(*args, **kwargs)))
        except TokenRejected as error:
            connections.forget(provider)
            raise ToolError(
                redact(f"{error}: the connection is forgotten; calling the tool again asks {found.person} to connect")
            ) from None
        except ToolError as error:
            raise type(error)(redact(str(error))) from None
        except Exception as error:  # a tool's own failure: its text may quote the header it sent
            raise ToolError(redact(f"{type(error).__name__}: {error}")) from None
        finally:
            CURRENT.reset(token)

    return dataclasses.replace(tool, fn=with_credential)


def gated(tools: list[Tool], connections: Connections) -> tuple[list[Tool], ConnectGate | None]:
    """The tools, those acting as the requester bound to ``connections``, and the gate their calls wait at."""
    made = [bound(item, connections) if item.as_requester else item for item in tools]
    if not any(item.as_requester for item in made):
        return made, None
    return made, ConnectGate(connections, {item.name: str(item.as_requester) for item in made if item.as_requester})
