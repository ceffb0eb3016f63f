"""What a thread id and a run id may be: checked where they come in (a route, a flag) and where they are stored.

Below every feature (the record, the inbound event and the stores mint and check them here), and apart from
``stores/runs.py`` so that the webhook checks an id without loading the run record and its events.
"""

from __future__ import annotations

import hashlib
import os
import re

from .errors import ConfigError

_THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$")
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")  # a run id, whole: what a route may take as one
RUN_PREFIX = "run-"
# The hex digits of a run id minted here, by the CLI (random) as by serve and the worker (an event's digest): one
# format whoever minted it. Ids of other shapes (the CLI's 16 digits before) still read: RUN_ID takes them.
RUN_ID_HEX = 24
# What an id a person copied from a run looks like (this format, the CLI's old digits, an eval case's): a `-t`
# of this shape naming nothing is likely a typo of one (cli/one_run.py), a name of one's choosing never is.
RUN_ID_SHAPE = re.compile(r"(run|eval)-[0-9a-f]{8,}")


def new_run_id(prefix: str = RUN_PREFIX) -> str:
    """A fresh run's id: ``prefix`` and RUN_ID_HEX random hex digits."""
    return prefix + os.urandom(RUN_ID_HEX // 2).hex()


def event_run_id(key: str) -> str:
    """The id of the run an event starts, from its dedup key: a redelivery finds its run (to resume, or answered)."""
    return RUN_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:RUN_ID_HEX]


def check_thread_id(thread_id: str) -> str:
    if not _THREAD_ID.fullmatch(thread_id):
        raise ConfigError(f"thread id {_said(thread_id)}: use up to 200 letters, digits, '.', '_', ':' or '-'")
    return thread_id


def check_run_id(run_id: str) -> str:
    """A run id given by a person (a flag, an argument): one the store may have kept, else a one-line error before
    anything is looked up (a path, a 5,000-character name the filesystem refuses)."""
    if not RUN_ID.fullmatch(run_id):
        raise ConfigError(f"run id {_said(run_id)} is not one: `runs list` shows them")
    return run_id


def _said(value: str) -> str:
    """An id refused, said back: its repr, cut (it may be as long as a command line)."""
    return repr(value) if len(value) <= 60 else f"{value[:60]!r}… ({len(value)} characters)"
