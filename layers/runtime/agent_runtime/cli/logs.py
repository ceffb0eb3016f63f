"""The CLI's logged lines on the terminal: one plain sentence in the CLI's ``agent-runtime: warning: …`` style.

The runtime logs in the structured form meant for Lambda's logs (``attempt=<1>, delay=<0.46>, why=<HTTP 501> |
model call failed, retrying``): searchable there, noise on a person's terminal. ``serve`` keeps that form (its
lines are its logs, as on AWS); the other commands say the sentence with its values after it.
"""

from __future__ import annotations

import logging
import re

from .. import inert

STRUCTURED = re.compile(r"(?P<fields>\w+=<[^<>]*>(?:, \w+=<[^<>]*>)*) \| (?P<text>.+)", re.S)
FIELD = re.compile(r"(\w+)=<([^<>]*)>")
SELF_NAMED = frozenset({"why", "error", "problem", "reason"})  # their values say what they are: no key before them
LOG_FORMAT = "%(levelname)s %(message)s"  # serve's: the structured form, as in Lambda's logs


class TerminalFormatter(logging.Formatter):
    """``agent-runtime: warning: model call failed, retrying (attempt 1, delay 0.46, HTTP 501)``."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return f"agent-runtime: {record.levelname.lower()}: {inert.terminal(plain(record.getMessage()))}"


def plain(message: str) -> str:
    """A structured message as a sentence with its values in brackets; any other message as it is."""
    match = STRUCTURED.fullmatch(message)
    if match is None:
        return message
    values = [value if key in SELF_NAMED else f"{key} {value}" for key, value in FIELD.findall(match["fields"])]
    return f"{match['text']} ({', '.join(values)})"


def configure(level: int, *, structured: bool) -> None:
    """The root logger's one handler on stderr: the structured form for ``serve``, sentences for the rest."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT) if structured else TerminalFormatter())
    logging.basicConfig(level=level, handlers=[handler])
