"""Lambda SnapStart: what the functions do before their snapshot is taken and after each restore.

With SnapStart (python3.12+), Lambda runs a published version's init once, snapshots the environment's memory and
disk, and starts every later environment from that snapshot, possibly days later and many times over. So init does
everything expensive (imports, boto3 clients and their endpoint data, the ``openai`` client, workflows, skills,
tool schemas, encodings), and what must be unique or fresh per environment is redone after each restore:

- ``random``'s state (every restored environment would otherwise draw the same retry jitter);
- connection pools (a socket opened before the snapshot is dead after it);
- secrets and anything built from them (never fetched into the snapshot; fetched again after each restore, so a
  rotated token is picked up) and Powertools' parameter cache, whose entries were fetched in another life;
- clients that hold any of these (the ``openai`` client, MCP sessions).

Hooks are registered with ``snapshot-restore-py``, which Lambda's python3.12+ runtimes ship and whose registries
the runtime interface client runs (before-snapshot hooks newest first, after-restore hooks in order). Where it is
not installed (a laptop, python3.11) they are kept here; :func:`run_before_snapshot` and :func:`run_after_restore`
run them as the runtime would, for tests.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any, TypeVar

Hook = TypeVar("Hook", bound=Callable[[], Any])
INIT_TYPE = "AWS_LAMBDA_INITIALIZATION_TYPE"
SNAP_START = "snap-start"

_BEFORE: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
_AFTER: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []


def snapshotting() -> bool:
    """This init is the one a snapshot will be taken of (Lambda says so in the environment)."""
    return os.environ.get(INIT_TYPE) == SNAP_START


def before_snapshot(hook: Hook) -> Hook:
    _registries()[0].append((hook, (), {}))
    return hook


def after_restore(hook: Hook) -> Hook:
    _registries()[1].append((hook, (), {}))
    return hook


def run_before_snapshot() -> None:
    """What the runtime interface client does before the snapshot: newest hook first, each run once."""
    before = _registries()[0]
    while before:
        hook, args, kwargs = before.pop()
        hook(*args, **kwargs)


def run_after_restore() -> None:
    for hook, args, kwargs in list(_registries()[1]):
        hook(*args, **kwargs)


def _registries() -> tuple[list[Any], list[Any]]:
    try:
        import snapshot_restore_py as hooks  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:  # not in Lambda, or python3.11: nobody else will run them
        return _BEFORE, _AFTER
    return hooks.get_before_snapshot(), hooks.get_after_restore()


def close_connections(*clients: Any) -> None:
    """Drop the pooled connections of boto3 clients (the clients stay usable: pools refill on demand)."""
    for client in clients:
        if client is not None:
            client.close()


def fresh_process_state() -> None:
    """What every restored environment redoes whatever the function: its own random state, no cached secret."""
    random.seed()  # from os.urandom, different in each environment
    try:
        from aws_lambda_powertools.utilities import parameters
    except ImportError:  # the package does not need Powertools outside Lambda
        return
    parameters.clear_caches()  # type: ignore[no-untyped-call]


def install() -> None:
    """Register the process-wide after-restore hook once; the functions' setups register their own."""
    if not any(hook is fresh_process_state for hook, _, _ in _registries()[1]):
        after_restore(fresh_process_state)
