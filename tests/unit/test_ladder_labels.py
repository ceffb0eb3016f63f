"""The ladder's stand-in says whose words left the window: a fold of the model's own turns (its notes and calls)
had been offloaded as a "user message", which a model reads as something the person wrote."""

from __future__ import annotations

from agent_runtime import messages as m
from agent_runtime.context.counter import TokenCounter
from agent_runtime.context.history import FOLD_MARK, SUMMARY_MARK
from agent_runtime.context.ladder import offload_largest
from hypothesis import given, settings
from hypothesis import strategies as st

COUNTER = TokenCounter("gpt-4.1")
KINDS = {
    "fold": (f'{FOLD_MARK}3 earlier turns of yours]\n- read_page {{"page": 4}} → file-0a1b2c', "your earlier turns"),
    "summary": (f"{SUMMARY_MARK} #1 · replaces messages 1-9]\n## Requests and intent", "compaction summary"),
    "person": ("Here is the runbook draft:", "user message"),
}


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(sorted(KINDS)), words=st.integers(200, 600))
def test_an_offloaded_message_is_labelled_by_whose_words_it_holds(kind: str, words: int) -> None:
    head, label = KINDS[kind]
    window = [m.system("You help."), m.user(head + "\n" + "routine update " * words), m.user("And now?")]
    labels: list[str] = []

    def offloader(text: str, what: str, stem: str, preview: int) -> str:
        labels.append(what)
        return f"[virtual file file-0123456789ab: {what}]"

    offload_largest(window, measure=COUNTER.messages, goal=100, offloader=offloader, counter=COUNTER, preview_cap=0)
    assert labels and labels[0].startswith(label), labels
