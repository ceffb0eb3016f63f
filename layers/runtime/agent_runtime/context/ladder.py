"""The degradation ladder: what compaction does when masking and a summary cannot make the window fit.

Each rung loses less than the next, and nothing leaves the window without a way back (a file id to read):

1. **offload** — the largest messages still inline (the newest, unused tool output; a pasted log; a long answer;
   an earlier summary) become virtual files, each with a preview sized to the room left, or only a pointer;
   previews of virtual files already in the window shrink to their pointer;
2. **arguments** — tool calls whose arguments alone are large keep their id and name; the arguments become a
   virtual file;
3. **drop** — the oldest turns leave the window; one message names the archive that holds them verbatim.

Neither rung ever splits a tool call from its result: messages are replaced one for one, and turns are dropped
whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .. import messages as msgs
from ..messages import Message, text_of
from .counter import TokenCounter
from .history import FOLD_MARK, MASK_MARK, SUMMARY_MARK, VIRTUAL_MARK
from .identifiers import extract, identifiers_in

# (text, label, file stem, preview tokens) -> the inline stand-in (header, preview, pointer); stores the file.
Offloader = Callable[[str, str, str, int], str]
Measure = Callable[[list[Message]], int]
MIN_OFFLOAD_TOKENS = 120  # smaller messages cost about what their pointer would
MIN_PREVIEW_TOKENS = 50  # a smaller preview is noise: give the pointer alone
MAX_NAMED = 24  # identifiers a stand-in names (ticket keys, ids, paths): what the model must not lose sight of
_VIRTUAL_ID = re.compile(re.escape(VIRTUAL_MARK) + r"(file-[0-9a-f]+)")
_NAMED = re.compile(r"^\[named in (?:them|it): (.+)\]$", re.MULTILINE)


def offload_largest(
    messages: list[Message],
    *,
    measure: Measure,
    goal: int,
    offloader: Offloader,
    counter: TokenCounter,
    preview_cap: int,
    among: set[int] | None = None,
) -> tuple[list[Message], int]:
    """Offload the largest messages (of ``among``, when given), one at a time, until the window measures
    ``goal`` or less. Returns the new list and how many messages were offloaded (0: nothing big enough)."""
    result = list(messages)
    names = msgs.tool_names(messages)
    left = set(range(len(messages))) if among is None else set(among)
    count = 0
    while measure(result) > goal:
        index = _largest(result, left, counter)
        if index is None:
            break
        left.discard(index)
        count += 1
        result[index] = _offloaded(
            result, index, names, measure=measure, goal=goal, offloader=offloader, cap=preview_cap
        )
    return result, count


def offload_arguments(
    messages: list[Message], *, measure: Measure, goal: int, offloader: Offloader, counter: TokenCounter
) -> tuple[list[Message], int]:
    """Tool calls whose arguments alone are large (a whole document passed to a tool, a thousand-line patch):
    the largest become virtual files until the window measures ``goal``. The call keeps its id and name, so its
    result stays paired; its arguments become a JSON object pointing at the file."""
    result = list(messages)
    sizes = [
        (counter.text(call["function"]["arguments"]), i, j)
        for i, message in enumerate(result)
        for j, call in enumerate(_calls(message))
        if message["role"] == "assistant"
    ]
    count = 0
    for tokens, i, j in sorted(sizes, reverse=True):
        if tokens < MIN_OFFLOAD_TOKENS or measure(result) <= goal:
            break
        calls = _calls(result[i])
        function = calls[j]["function"]
        stand_in = offloader(function["arguments"], f"arguments of {function['name']}", f"{function['name']}-args", 0)
        calls[j] = {**calls[j], "function": {**function, "arguments": json.dumps({"arguments_in_file": stand_in})}}
        result[i] = {**result[i], "tool_calls": calls}
        count += 1
    return result, count


def newest_outputs(messages: list[Message]) -> set[int]:
    """The results of the last batch of tool calls: not yet seen by the model, so offloaded last, and with
    the largest preview that fits."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=len(messages))
    return {i for i in range(last + 1, len(messages)) if messages[i]["role"] == "tool"}


def _offloaded(
    result: list[Message],
    index: int,
    names: dict[str, str],
    *,
    measure: Measure,
    goal: int,
    offloader: Offloader,
    cap: int,
) -> Message:
    message = result[index]
    text = text_of(message)
    # The identifiers a user's message, an answer or a summary named stay in view (tool output's are left to
    # the file; the calls' arguments stay in the message anyway).
    named = [] if message["role"] == "tool" else identifiers_in(text)
    virtual = _VIRTUAL_ID.match(text)
    if virtual:  # already a file: its preview goes, its pointer stays
        fid = virtual.group(1)
        pointer = (
            f"{MASK_MARK}the preview of virtual file {fid} was removed to fit the window; read it with "
            f'file_read(id="{fid}") in parts or search it with file_regex]'
        )
        return _with_text(message, naming(pointer, named))
    label, stem = _label(message, names)
    bare = _with_text(message, naming(offloader(text, label, stem, 0), named))
    room = goal - measure([*result[:index], bare, *result[index + 1 :]])
    preview = min(cap, int(room * 0.8))
    if preview < MIN_PREVIEW_TOKENS:
        return bare
    return _with_text(message, naming(offloader(text, label, stem, preview), named))


def carried(messages: list[Message]) -> list[str]:
    """What earlier stand-ins named ("[named in them: ...]"): a pointer dropped again passes its names on (the
    extraction skips earlier compactions' messages, whose facts a summary would pin)."""
    return [
        name
        for message in messages
        for found in _NAMED.finditer(text_of(message))
        for name in found.group(1).split(" · ")
    ]


def naming(inline: str, named: list[str], limit: int = MAX_NAMED) -> str:
    """``inline`` plus the identifiers it no longer shows, at most ``limit`` of them: the extraction lists
    them by kind (URLs, e-mails, ticket keys, paths, ids, then dates and numbers), so the first ones matter most."""
    missing = [item for item in named if item not in inline][:limit]
    return f"{inline}\n[named in it: {' · '.join(missing)}]" if missing else inline


def _largest(messages: list[Message], among: set[int], counter: TokenCounter) -> int | None:
    """The biggest message of ``among`` that offloading can shrink: not the workflow's system prompt, not a
    pointer, not multi-part content (images)."""
    best, best_tokens = None, MIN_OFFLOAD_TOKENS
    leading = True
    for index, message in enumerate(messages):
        leading = leading and message["role"] == "system"
        if leading or index not in among or not isinstance(message.get("content"), str):
            continue
        if text_of(message).startswith(MASK_MARK):
            continue
        tokens = counter.message(message) - sum(counter.text(c["function"]["arguments"]) for c in _calls(message))
        if tokens > best_tokens:
            best, best_tokens = index, tokens
    return best


def _calls(message: Message) -> list[msgs.ToolCallDict]:
    return list(message.get("tool_calls", []))


def _label(message: Message, names: dict[str, str]) -> tuple[str, str]:
    role = message["role"]
    if role == "tool":
        name = names.get(message.get("tool_call_id", ""), "tool")
        return f"result of {name}", name
    if text_of(message).startswith(SUMMARY_MARK):
        return "compaction summary", "summary"
    if text_of(message).startswith(FOLD_MARK):  # the engine's rows of the model's own calls, not the person's words
        return "your earlier turns, folded (notes and calls)", "folded"
    return ("user message", "user") if role == "user" else ("assistant message", "assistant")


def _with_text(message: Message, text: str) -> Message:
    replaced: Message = {**message, "content": text}  # tool_call_id and tool_calls are kept: pairing holds
    return replaced


def drop_oldest(messages: list[Message], *, measure: Measure, goal: int, archive_id: str) -> tuple[list[Message], int]:
    """The last rung: drop whole turns, oldest first, until the window measures ``goal`` (or only the newest turn
    is left). A turn boundary is any message that is not a tool result, so no call loses its result."""
    lead = next((i for i, m in enumerate(messages) if m["role"] != "system"), len(messages))
    boundaries = [i for i in range(lead + 1, len(messages)) if messages[i]["role"] != "tool"]
    candidate, dropped = messages, 0
    for cut in boundaries:
        named = list(dict.fromkeys([*carried(messages[lead:cut]), *extract(messages[lead:cut])]))[: MAX_NAMED * 2]
        pointer = msgs.user(
            f"{SUMMARY_MARK} · messages {lead}-{cut - 1} left the window to make room; their full text is in "
            f"archive {archive_id}, readable with file_read and file_regex]"
            + (f"\n[named in them: {' · '.join(named)}]" if named else "")
        )
        candidate, dropped = [*messages[:lead], pointer, *messages[cut:]], cut - lead
        if measure(candidate) <= goal:
            break
    return candidate, dropped
