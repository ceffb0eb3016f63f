"""One queue message reads and writes its run and thread in few places (issue 49: about twelve before): the
handler's unit of work (service/unit.py: one query per partition, typed items, writes through it), the run's own
checkpoints and record (the persistence hook, through the loop's hook chain), and nothing else — whatever the
message. Counted by a store that notes, for every read or write of a run's or thread's item, the first place
outside the store's package that asked (files aside: a thread's files are blobs of their own)."""

from __future__ import annotations

from typing import Any

from agent_runtime.actions import FEEDBACK, STOP
from agent_runtime.testing import call, reply

from tests.approvals_support import approval_value, click, mention
from tests.store_spy import Spy
from tests.triggers_support import slack_request

LIMIT = 4


def places(spy: Spy) -> set[str]:
    return {place.split(":")[0] for place in spy.places}


def test_each_message_reads_and_writes_its_run_and_thread_in_at_most_four_places(system, scripted, ops) -> None:
    ops()
    server = scripted(call("restart_service", {"service": "payments"}), reply("Restarted payments."), reply("Up."))
    spies: list[Spy] = []

    def spied(store: Any) -> Spy:
        spies.append(Spy(store))
        return spies[-1]

    s = system(server, wrap=spied)
    [spy] = spies
    seen: dict[str, set[str]] = {}

    def handled(name: str, expected: list[str]) -> None:
        spy.places.clear()
        spy.queries.clear()
        assert s.deliver() == expected
        seen[name] = places(spy)

    s.post("/slack/events", *slack_request(mention("Ev1", "restart payments", "1763800001.0")))
    handled("event", ["awaiting_approval"])
    s.post("/slack/events", *slack_request(mention("Ev2", "and is it up?", "1763800002.0")))
    handled("event behind a decision", ["deferred"])
    value, _ = approval_value(s)
    click(s, value, "U0DANA")
    handled("decision", ["answered", "answered"])  # the run, then the message that waited behind it
    click(s, value, "U0DANA")
    handled("a late click", ["duplicate"])
    run_id = value.split("|")[0]
    click(s, f"{run_id}|slack-T0TEAM-C0OPS-1763800000.000100|good", "U0DANA", action=FEEDBACK)
    handled("a rating", ["rated"])
    click(s, f"{run_id}|slack-T0TEAM-C0OPS-1763800000.000100", "U0DANA", action=STOP)
    handled("a stop on an answered run", ["ignored"])
    assert max(spy.queries.values()) == 1, spy.queries  # each partition read in one query, once per message
    assert all(len(found) <= LIMIT for found in seen.values()), seen
    assert set().union(*seen.values()) <= {"service/unit.py", "hooks.py", "cli/running.py"}, seen
