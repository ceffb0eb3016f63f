"""Keys built from what a sender says (an emoji's name, an event id) never make two distinct deliveries one: a
thread id or a dedup key that two of them share loses one, or runs one in the other's conversation."""

from __future__ import annotations

import json

from agent_runtime.ids import check_thread_id
from agent_runtime.inbound import TriggerEvent
from agent_runtime.triggers.slack import parse
from hypothesis import given, settings
from hypothesis import strategies as st

# Slack's emoji names: lowercase letters, digits, '_', '-', '+' (":+1:"), "'" and a skin tone after "::".
NAMES = st.text(st.sampled_from("abz09_-+'.:é"), min_size=1, max_size=120)


def reacted(reaction: str) -> TriggerEvent | None:
    item = {"type": "message", "channel": "C0REVIEW", "ts": "1763800000.000100"}
    event = {"type": "reaction_added", "user": "U0DANA", "reaction": reaction, "item": item}
    body = {"type": "event_callback", "team_id": "T0TEAM", "event_id": "Ev1", "event": event}
    found = parse(json.dumps(body).encode(), bot_user_id="U0BOT")
    return found if isinstance(found, TriggerEvent) else None


def test_thumbs_up_and_thumbs_down_on_one_message_keep_threads_of_their_own() -> None:
    up, down = reacted("+1"), reacted("-1")
    assert up is not None and down is not None
    assert up.thread_id != down.thread_id
    assert up.dedup_key != down.dedup_key


@settings(max_examples=150, deadline=None, derandomize=True)
@given(first=NAMES, second=NAMES)
def test_two_emoji_names_never_share_a_thread_or_a_key(first: str, second: str) -> None:
    """Each thread id a run can keep (or the event is not one), each one emoji's alone."""
    one, other = reacted(first), reacted(second)
    for made in (one, other):
        if made is not None:
            check_thread_id(made.thread_id)
    if first != second and one is not None and other is not None:
        assert one.thread_id != other.thread_id, (first, second)
        assert one.dedup_key != other.dedup_key, (first, second)
