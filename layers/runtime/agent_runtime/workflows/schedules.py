"""The workflow's ``triggers.schedule``: when it runs by itself — an EventBridge Scheduler expression as AWS takes
it (``cron(0 9 ? * MON-FRI *)``, ``rate(1 day)``), a time zone, the message it starts with and where its answer
goes (a Slack channel, a JIRA issue, or only the run record) — and the next time each one fires.

The same expression is handed to EventBridge Scheduler on deploy and evaluated here for ``workflows list`` and
for ``serve``, which fires schedules locally; so the accepted syntax is the subset both agree on: numbers, names
(JAN-DEC, SUN-SAT), ranges, lists, steps, ``*`` and ``?`` (one of day-of-month and day-of-week). ``L``, ``W`` and
``#`` are AWS-only and refused with a line that says so. A rate ticks at whole multiples of its period (UTC)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..sections import check_keys
from .oauth import check_person

KEYS = ("name", "expression", "timezone", "message", "answer_to", "owner")
MAX_SCHEDULES = 10
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
ANSWER_TO = re.compile(r"record|slack:[A-Z0-9]{2,40}|jira:[A-Z][A-Z0-9_]{0,20}-\d{1,9}")
_RATE = re.compile(r"rate\(([1-9][0-9]{0,5}) (minute|minutes|hour|hours|day|days)\)")  # ASCII digits only
_CRON = re.compile(r"cron\(([^()]+)\)")
_NUMBER = re.compile(r"[0-9]{1,4}")  # a cron value or step: ASCII digits, short ("²" and 5,000 digits are not)
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]{0,29}(/[A-Za-z0-9_+-]{1,30}){0,2}")  # America/Argentina/Buenos_Aires
_MONTHS = {
    m: i for i, m in enumerate(["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], 1)
}
_DAYS = {d: i for i, d in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"], 1)}  # EventBridge: 1 = Sunday
# (name, low, high, names) per field: minutes hours day-of-month month day-of-week year
_NONE: dict[str, int] = {}
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minutes", 0, 59, _NONE),
    ("hours", 0, 23, _NONE),
    ("day-of-month", 1, 31, _NONE),
    ("month", 1, 12, _MONTHS),
    ("day-of-week", 1, 7, _DAYS),
    ("year", 1970, 2199, _NONE),
)
SEARCH_DAYS = 366 * 5  # a cron that matches nothing sooner (e.g. 29 February on a weekday) is "never"


class ExpressionError(ValueError):
    """A schedule expression this runtime (and EventBridge Scheduler) would not take, said in one line."""


@dataclass(frozen=True, slots=True)
class Schedule:
    name: str
    expression: str
    timezone: str = "UTC"
    message: str = "Run on schedule."
    answer_to: str = "record"  # record | slack:<channel id> | jira:<issue key>
    owner: str | None = None  # the person its runs act for (slack:U0123): whose connections its tools use

    def next_after(self, moment: datetime) -> datetime | None:
        """The first time after ``moment`` (aware) it fires, in its time zone; None if never."""
        return next_fire(self.expression, ZoneInfo(self.timezone), moment)


def next_fire(expression: str, zone: ZoneInfo, moment: datetime) -> datetime | None:
    rate = _RATE.fullmatch(expression)
    if rate is not None:
        period = int(rate[1]) * {"m": 60, "h": 3600, "d": 86_400}[rate[2][0]]
        seconds = int(moment.timestamp()) // period * period + period
        return datetime.fromtimestamp(seconds, UTC).astimezone(zone)
    fields = parse_cron(expression)
    start = moment.astimezone(zone).replace(second=0, microsecond=0) + timedelta(minutes=1)
    for offset in range(SEARCH_DAYS):
        day = (start + timedelta(days=offset)).date()
        if not _day_matches(fields, day.year, day.month, day.day, day.isoweekday() % 7 + 1):
            continue
        for hour in sorted(fields[1]):
            for minute in sorted(fields[0]):
                candidate = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
                if candidate >= start and _exists(candidate):
                    return candidate
    return None


def check_expression(expression: object) -> str:
    """The expression, if this runtime and EventBridge Scheduler both take it; ``ExpressionError`` (one line)
    otherwise."""
    if not isinstance(expression, str):
        raise ExpressionError("is required: cron(...) or rate(...), as EventBridge Scheduler takes it")
    if not expression.isascii() or len(expression) > 256:
        raise ExpressionError(f"must be ASCII, at most 256 characters; got {expression[:60]!r}")
    if expression.startswith("rate("):
        _check_rate(expression)
    else:
        parse_cron(expression)
    return expression


def _check_rate(expression: str) -> None:
    found = re.fullmatch(r"rate\(([0-9]{1,6}) (minute|hour|day)(s?)\)", expression)
    if found is None:
        raise ExpressionError(f"must be rate(N minutes|hours|days), N a whole number; got {expression!r}")
    if found[1].startswith("0"):
        raise ExpressionError(f"a rate's number must be from 1 to 999999, without leading zeros; got {found[1]!r}")
    if (found[1] == "1") == (found[3] == "s"):
        raise ExpressionError("rate(1 day), rate(2 days): singular for 1, plural otherwise (EventBridge's rule)")


def parse_cron(expression: str) -> tuple[set[int], ...]:
    """The six fields of ``cron(...)`` as sets of values (day-of-month or day-of-week ``?``: the empty set)."""
    found = _CRON.fullmatch(expression) if expression.isascii() else None
    if found is None:
        raise ExpressionError(
            f"must be cron(minutes hours day-of-month month day-of-week year) or rate(N unit); got {expression[:60]!r}"
        )
    parts = found[1].split()
    if len(parts) != 6:
        raise ExpressionError(
            f"cron takes 6 fields (minutes hours day-of-month month day-of-week year); got {len(parts)}"
        )
    if (parts[2] == "?") == (parts[4] == "?"):
        raise ExpressionError("one of day-of-month and day-of-week must be '?' (EventBridge's rule), not both")
    if any("?" in part for n, part in enumerate(parts) if n not in (2, 4)):
        raise ExpressionError("'?' stands only for day-of-month or day-of-week")
    return tuple(_field(part, *spec) for part, spec in zip(parts, _FIELDS, strict=True))


def _field(text: str, name: str, low: int, high: int, names: Mapping[str, int]) -> set[int]:
    if text == "?":
        return set()
    if any(mark in text for mark in ("L", "W", "#")) and not any(n in text.upper() for n in names):
        raise ExpressionError(f"{name}: L, W and # are not supported here (they are AWS-only); got {text!r}")
    values: set[int] = set()
    for item in text.split(","):
        base, _, step = item.partition("/")
        first, last = (low, high) if base == "*" else _range(base, name, low, high, names)
        if "/" in item and (not _NUMBER.fullmatch(step) or int(step) == 0):
            raise ExpressionError(f"{name}: a step must be a whole number from 1 to 9999; got {item!r}")
        last = high if step and base != "*" and "-" not in base else last
        values.update(range(first, last + 1, int(step or 1)))
    return values


def _range(text: str, name: str, low: int, high: int, names: Mapping[str, int]) -> tuple[int, int]:
    ends = [_value(end, name, low, high, names) for end in text.split("-", 1)]
    if ends[0] > ends[-1]:
        raise ExpressionError(f"{name}: {text!r} runs backwards")
    return ends[0], ends[-1]


def _value(text: str, name: str, low: int, high: int, names: Mapping[str, int]) -> int:
    value = int(text) if _NUMBER.fullmatch(text) else names.get(text.upper())
    if value is None or not low <= value <= high:
        raise ExpressionError(
            f"{name}: {text!r} is not a value from {low} to {high}"
            + (f" or {'/'.join(list(names)[:3])}…" if names else "")
        )
    return value


def _day_matches(fields: tuple[set[int], ...], year: int, month: int, day: int, weekday: int) -> bool:
    _, _, days, months, weekdays, years = fields
    return year in years and month in months and (day in days if days else weekday in weekdays)


def _exists(moment: datetime) -> bool:
    """False for a wall-clock time a DST change skips (02:30 on the spring-forward night): it does not fire."""
    back = moment.astimezone(UTC).astimezone(moment.tzinfo)
    return (back.hour, back.minute) == (moment.hour, moment.minute)


def parse_schedule_section(value: Any, report: Callable[[str, str], None]) -> tuple[Schedule, ...]:
    """``schedule``: one mapping or a list of them (at most ten)."""
    items = [value] if isinstance(value, Mapping) else value
    if not isinstance(items, Sequence) or isinstance(items, str) or not items:
        report("triggers.schedule", "must be a mapping (expression, timezone, message, answer_to) or a list of them")
        return ()
    if len(items) > MAX_SCHEDULES:
        report("triggers.schedule", f"at most {MAX_SCHEDULES} schedules a workflow; {len(items)} given")
    found = [_schedule(item, n, len(items) > 1, report) for n, item in enumerate(items[:MAX_SCHEDULES])]
    names = [s.name for s in found if s is not None]
    if len(set(names)) != len(names):
        report("triggers.schedule", "each schedule needs a name of its own")
    return tuple(s for s in found if s is not None)


def _schedule(item: Any, number: int, listed: bool, report: Callable[[str, str], None]) -> Schedule | None:
    where = f"triggers.schedule[{number}]" if listed else "triggers.schedule"
    if not isinstance(item, Mapping):
        report(where, "must be a mapping (expression, timezone, message, answer_to)")
        return None
    check_keys(where, item, KEYS, report)
    name, expression = item.get("name", f"schedule-{number + 1}"), item.get("expression")
    zone, message, answer = item.get("timezone", "UTC"), item.get("message"), item.get("answer_to", "record")
    problems = [
        ("name", isinstance(name, str) and NAME.fullmatch(name) is not None, "lowercase letters, digits, hyphens"),
        ("message", isinstance(message, str) and bool(message.strip()), "the message the run starts with (text)"),
        (
            "answer_to",
            isinstance(answer, str) and ANSWER_TO.fullmatch(answer) is not None,
            "record, slack:<channel id> (C0123ABC) or jira:<issue key> (PROJ-12)",
        ),
    ]
    for key, ok, why in problems:
        if not ok:
            report(f"{where}.{key}", f"must be {why}; got {item.get(key)!r}")
    when = _valid_when(where, expression, zone, report)  # said too when another key is wrong
    owner = check_person(item.get("owner"), f"{where}.owner", report)
    ok = all(ok for _, ok, _ in problems) and when and (owner is not None or item.get("owner") is None)
    return Schedule(str(name), str(expression), str(zone), str(message).strip(), str(answer), owner) if ok else None


def _valid_when(where: str, expression: Any, zone: Any, report: Callable[[str, str], None]) -> bool:
    try:
        check_expression(expression)
    except ExpressionError as error:
        report(f"{where}.expression", str(error))
        return False
    if not valid_zone(zone):
        report(f"{where}.timezone", f"must be an IANA time zone like Europe/Paris; got {str(zone)[:60]!r}")
        return False
    return True


def valid_zone(zone: object) -> bool:
    """An IANA name the zone database has: its shape first (a 300-character name is no file to look for)."""
    if not isinstance(zone, str) or not _ZONE.fullmatch(zone):
        return False
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True
