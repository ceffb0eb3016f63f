"""Typed slots of a run's persisted state (``RunState.context``).

The state stays plain JSON (checkpoints, threads and resumes store it as is), but no module writes it with a bare
string key: each component declares its slot — the key and the shape of its value, in the module that owns it —
and reads and writes through it. A key can be declared once; ``owned_keys()`` lists them all, so a test can check
that every key a stored run carries has an owner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")

_OWNERS: dict[str, str] = {}


class Slot(Generic[T]):
    """One component's part of the run state: ``key`` in the JSON, values of type ``T``."""

    __slots__ = ("factory", "key")

    def __init__(self, key: str, factory: Callable[[], T], *, owner: str) -> None:
        if key in _OWNERS:
            raise ValueError(f"run-state key {key!r} is already owned by {_OWNERS[key]}")
        _OWNERS[key] = owner
        self.key, self.factory = key, factory

    def get(self, state: Mapping[str, Any]) -> T:
        """The stored value, or a fresh default (not stored: reading never adds a key)."""
        return cast(T, state[self.key]) if self.key in state else self.factory()

    def use(self, state: MutableMapping[str, Any]) -> T:
        """The stored value, created if absent: for containers the owner updates in place."""
        if self.key not in state:
            state[self.key] = self.factory()
        return cast(T, state[self.key])

    def set(self, state: MutableMapping[str, Any], value: T) -> None:
        state[self.key] = value

    def clear(self, state: MutableMapping[str, Any]) -> None:
        state.pop(self.key, None)

    def __repr__(self) -> str:
        return f"Slot({self.key!r}, owner={_OWNERS[self.key]})"


def owned_keys() -> dict[str, str]:
    """Every declared key and the module that owns it (only modules imported so far)."""
    return dict(_OWNERS)
