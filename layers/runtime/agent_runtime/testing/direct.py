"""The demo model calling a tool the person names by its name in their own words, with the values those words
give its parameters, as a model does: "post_comment on PAY-812: the fix is in", "use post_comment for PAY-812:
…", "call post_comment with ticket PAY-812 and text "the fix is in"" (``ticket=…``, ``text: …`` too). A required
value the words do not give is asked for in the answer instead of a call: never a value nothing names. Once the
calls ran (or were denied), the answer says what each did. A reply to that ask in the same thread ("text: the
fix is in", or just the text) goes on from the message it asked about: its values and this one's, nothing else.

A workflow's own mutating tool had never been called ("I could not find an answer to that"): its parameters were
neither a search's nor a value the words put beside their names, so approvals could not be tried offline.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..messages import text_of
from .acting import BODY, LINE, _line, outcome
from .assistant import RUNTIME_TOOLS, SEARCHED
from .reading import RANGE, _all_results, _question, _turns
from .steps import Reply, ScriptedCall, ScriptedRequest
from .words import own_words, spoken

PROSE = LINE | BODY | {"text", "message", "note", "reply", "comment", "content"}  # the person's sentence goes here
QUOTED = r"\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d|'([^'\n]+)'|`([^`\n]+)`"
TOKEN = r"[A-Za-z0-9][\w.#/@-]*"  # one value that is not a sentence: a key, an id, a name, a number
# After the tool's name: "on / for / to …" (and a parameter's name), a value, then a text after a colon or quoted.
POSITIONAL = (
    r"(?<![\w-]){tool}(?![\w-])(\s+(?:on|for|to|in|at|about))?(?:\s+(?:the\s+)?(?:{labels}))?(?:\s+({token}))?"
    r"(?:\s*:\s*(.+)|\s+(?:{quoted})|(?=[\s,.!?;]|$))"
)
KEYLIKE = re.compile(r".*(?:\d|[A-Z]|[-_.#/@]).*")  # a value by its shape, where no "on"/"for" says it is one
ASK = "I did not call {tool}: your message does not give its {what}. Ask again with {which} and I will call it."
ASKED_FOR = re.compile(r"^I did not call [\w.-]+: your message does not give its ", re.MULTILINE)
ANSWERING = "[the message to answer]\n"


def respond(request: ScriptedRequest) -> Reply | None:
    """The next call to a tool the person names, or the answer once each has run; None: they name none."""
    words = spoken(own_words(_question(request)))
    if RANGE.search(words):
        return None  # "pages 1 to 30 with read_page": every page of the range, one call each (``assistant``)
    specs = {t["function"]["name"]: t["function"] for t in request.body.get("tools", [])}
    bare = None
    if (asked := _asked_about(request)) is not None and not _named(asked[1], specs):
        words, bare = "\n".join(asked), asked[1]  # the reply to an ask: with the message it asked about
    named = [name for name in _named(words, specs) if _direct(specs[name], words)]
    if not named:
        return None
    made = _made(request)
    done, asks = [], []
    for name in named:
        args, missing = _answered(specs[name], *arguments(specs[name], words), bare)
        if missing:
            asks.append(_ask(name, missing, specs[name]))
        elif (key := (name, json.dumps(args, sort_keys=True))) not in made:
            return Reply(calls=(ScriptedCall(name, args),))
        else:
            done.append(outcome(name, made[key] or ""))
    return Reply(text="\n".join([*done, *asks]))


def _asked_about(request: ScriptedRequest) -> tuple[str, str] | None:
    """The words of the person's previous message and of their newest when the answer to the previous one asked
    for a value ("I did not call X: …"): the newest answers that ask (even a bare "the fix is in")."""
    turns = _turns(request)
    users = [i for i, m in enumerate(request.messages) if m["role"] == "user"]
    if len(turns) < 2 or len(users) < 2:
        return None
    answers = [m for m in request.messages[users[-2] : users[-1]] if m["role"] == "assistant"]
    if not answers or not ASKED_FOR.search(text_of(answers[-1])):
        return None
    earlier, latest = (spoken(own_words(turn.split(ANSWERING, 1)[-1])) for turn in turns[-2:])
    return earlier, latest


def _answered(
    spec: dict[str, Any], args: dict[str, Any], missing: list[str], bare: str | None
) -> tuple[dict[str, Any], list[str]]:
    """A reply to an ask that is only the value ("the fix is in") gives it to the one value asked for, when it
    names none of the tool's parameters."""
    if bare is None or len(missing) != 1 or any(_labelled(p, bare, spec) is not None for p in _properties(spec)):
        return args, missing
    value = _typed(bare.strip(), _properties(spec)[missing[0]])
    return (args, missing) if value is None else ({**args, missing[0]: value}, [])


def _named(words: str, specs: dict[str, dict[str, Any]]) -> list[str]:
    """The workflow's own tools the words name by name, in the order they name them."""
    places = {
        name: found.start()
        for name in specs
        if name not in RUNTIME_TOOLS and (found := re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", words))
    }
    return sorted(places, key=places.__getitem__)


def _direct(spec: dict[str, Any], words: str) -> bool:
    """Whether the words ask this call: a search named with only its terms stays a search (``assistant``)."""
    required = _required(spec)
    if not all(p.lower() in SEARCHED for p in required) or not required:
        return True
    return any(_labelled(p, words, spec) is not None for p in _properties(spec))


def arguments(spec: dict[str, Any], words: str) -> tuple[dict[str, Any], list[str]]:
    """The values the words give the tool's parameters (by their names, then by place: the value after the
    tool's name and the text after it), and the required parameters they give none."""
    props = _properties(spec)
    given = {p: v for p in props if (v := _labelled(p, words, spec)) is not None}
    slots = [p for p in _required(spec) if p not in given]
    target, text = _positional(spec["name"], list(props), words)
    prose = [p for p in slots if p.lower() in PROSE]
    if text is not None and not prose and len(slots) == 1 + (target is not None):
        prose = slots[-1:]  # the text goes to the one parameter the target leaves
    for p in prose:
        if text is not None:
            given[p] = _typed(_line(text) if p.lower() in LINE else text, props[p])
    rest = [p for p in slots if p not in given]
    rest = rest if len(rest) == 1 else [p for p in rest if p.lower() not in PROSE]
    if target is not None and len(rest) == 1 and target not in given.values():  # not a value its label gave
        given[rest[0]] = _typed(target, props[rest[0]])
    kept = {p: v for p, v in given.items() if v is not None}
    return kept, [p for p in _required(spec) if p not in kept]


def _labelled(param: str, words: str, spec: dict[str, Any]) -> Any:
    """The value the words put after the parameter's name: quoted, after ``:`` or ``=``, after the name in a
    "with … and …" list ("with service billing-api and team payments"), or one key-like value ("ticket
    PAY-812"). An unquoted value ends at a comma, the line's end or where another parameter's label begins
    ("text=", "text:", "and text"): "ticket=PAY-816 text=hello" gives the ticket PAY-816."""
    others = "|".join(_label(p) for p in _properties(spec) if p != param) or "(?!)"
    stop = rf"(?:{others})\s*[:=]|\band\s+(?:{others})"
    # The value starts on a character no whitespace run before it can take (two side by side, each tried at every
    # space of a long run, made a pasted run of spaces quadratic), and stops before a label, so each match is
    # read once and the next begins after it.
    value = rf"((?!{stop})[^\s,;](?:(?!{stop})[^,;\n])*)"
    label = _label(param)
    patterns = (
        rf"{label}\s*(?:[:=]\s*)?(?:{QUOTED})",
        rf"{label}\s*[:=]\s*{value}",
        rf"{label}\s+([A-Z][A-Z0-9]*-\d+|\d+)(?![\w-])",
        rf"(?:\bwith|\band|,)\s+{label}\s+{value}",
    )
    for number, pattern in enumerate(patterns):
        for found in re.finditer(pattern, words, re.IGNORECASE | re.MULTILINE):
            said = next((g for g in found.groups() if g), "").strip()
            said = said.rstrip(".!?").strip() if number == 3 else said  # the sentence's end, in a list read bare
            if (typed := _typed(said, _properties(spec)[param])) is not None:
                return typed
    return None


def _label(param: str) -> str:
    """A parameter's name as words write it: ``ticket_id``, ``ticket id``."""
    return rf"(?<![\w-]){'[ _]'.join(map(re.escape, param.split('_')))}(?![\w-])"


def _positional(tool: str, params: list[str], words: str) -> tuple[str | None, str | None]:
    """What follows the tool's name: a value ("on PAY-812", or one shaped like a key), then a text after a colon
    or in quotes."""
    labels = "|".join("[ _]".join(map(re.escape, p.split("_"))) for p in params) or "(?!)"
    pattern = POSITIONAL.format(tool=re.escape(tool), labels=labels, token=TOKEN, quoted=QUOTED)
    found = re.search(pattern, words, re.IGNORECASE | re.MULTILINE)
    if found is None:
        return None, None
    preposition, target, *texts = found.groups()
    target = target.rstrip(".") if target else None
    text = next((t.strip() for t in texts if t and t.strip()), None)
    if target and not preposition and not KEYLIKE.fullmatch(target):
        target = None  # "call X with …", "X please": no value
    return target, text


def _typed(value: str, prop: dict[str, Any]) -> Any:
    """The value as the parameter takes it; None: it cannot take it (a word for a number, a value off its enum)."""
    if prop.get("enum") and value not in [str(v) for v in prop["enum"]]:
        return None
    if prop.get("type") == "integer":
        return int(value) if re.fullmatch(r"-?\d+", value) else None
    if prop.get("type") == "number":
        return float(value) if re.fullmatch(r"-?\d+(?:\.\d+)?", value) else None
    return value if prop.get("type", "string") == "string" and value else None


def _ask(tool: str, missing: list[str], spec: dict[str, Any]) -> str:
    described = [
        f"{p} ({d.rstrip('.')})" if (d := str(_properties(spec)[p].get("description", "")).strip()) else p
        for p in missing
    ]
    what = " and ".join(described)
    return ASK.format(tool=tool, what=what, which=" and ".join(f"`{p}: …`" for p in missing))


def _made(request: ScriptedRequest) -> dict[tuple[str, str], str | None]:
    """Its calls so far and their results (None: not shown): every result in the window by its call's id, a turn a
    Stop or a spend limit's "answer now" ended included (not only the latest batch's)."""
    results = _all_results(request)
    made: dict[tuple[str, str], str | None] = {}
    for message in request.messages:
        for call in message.get("tool_calls", []):
            try:
                args = json.loads(call["function"]["arguments"] or "{}")
            except ValueError:
                continue
            made[(call["function"]["name"], json.dumps(args, sort_keys=True))] = results.get(call["id"])
    return made


def _properties(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return dict(spec.get("parameters", {}).get("properties", {}))


def _required(spec: dict[str, Any]) -> list[str]:
    return [p for p in spec.get("parameters", {}).get("required", []) if p in _properties(spec)]
