"""How a stored item becomes its typed value: one validator per type (pydantic, built once, on first use), and
what a stored item that is not what it should be raises — where, never what it held (it may be a secret)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from ..errors import RunError

T = TypeVar("T")


class Unreadable(RunError):
    """A stored record or row that does not read as one (a number that is not one, a list for a map): damaged, or
    written by something else. Says where; ``runs show --json`` prints the record as it is stored."""


def parsed(kind: type[T], data: object, what: str) -> T:
    """``data`` (a stored item's JSON) as ``kind``: a field an earlier version did not write takes its default, a
    number written as text is read as one; anything else that does not fit raises ``Unreadable``."""
    from pydantic import ValidationError

    if not isinstance(data, Mapping):
        raise Unreadable(f"{what}: not a JSON object")
    try:
        found: T = _adapter(kind).validate_python(data)
        return found
    except ValidationError as error:
        where = "; ".join(_where(problem["loc"]) + ": " + problem["msg"] for problem in error.errors()[:3])
        raise Unreadable(f"{what} cannot be read ({where})") from None


_ADAPTERS: dict[type[Any], Any] = {}  # one validator per type, built on first use (two threads may both build it)


def _adapter(kind: type[Any]) -> Any:
    from pydantic import TypeAdapter

    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind)
    return _ADAPTERS[kind]


def _where(location: tuple[int | str, ...]) -> str:
    """A problem's place (``model_calls[3].usage``): keys cut, as they come from the stored item."""
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else f".{str(part)[:40]}"
    return text.lstrip(".") or "the item"


def redacted(value: T, redact: Callable[[str], str]) -> T:
    """A typed value (a stored run, its events) with every text in it redacted, as ``redaction.redacted`` does
    for JSON: keys of a mapping stay (the program's names), values are the run's text."""
    return cast(T, _redacted(value, redact))


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {item.name: _redacted(getattr(value, item.name), redact) for item in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    if isinstance(value, Mapping):
        return {key: _redacted(item, redact) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_redacted(item, redact) for item in value)
    return value
