"""Schedule expressions: the next time a cron fires is the first minute a plain minute-by-minute scan finds, for
any fields, any time zone (DST changes included) and any starting moment; rates tick at multiples of their
period; and every mistake is one line of ``workflows validate``."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from agent_runtime.workflows import WorkflowError, load_workflow
from agent_runtime.workflows.schedules import ExpressionError, Schedule, next_fire, parse_cron
from hypothesis import given, settings
from hypothesis import strategies as st

ZONES = ["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]


def scan(fields: tuple[set[int], ...], zone: ZoneInfo, moment: datetime, days: int = 9) -> datetime | None:
    """The slow truth: every real minute after ``moment``, in order, as the zone's wall clock shows it."""
    minutes, hours, dom, months, dow, years = fields
    at = moment.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(days * 24 * 60):
        local = at.astimezone(zone)
        day_ok = local.day in dom if dom else (local.isoweekday() % 7 + 1) in dow
        if local.minute in minutes and local.hour in hours and local.month in months and local.year in years and day_ok:
            return local
        at += timedelta(minutes=1)
    return None


def values(low: int, high: int) -> st.SearchStrategy[str]:
    single = st.integers(low, high).map(str)
    span = st.tuples(st.integers(low, high), st.integers(low, high)).map(lambda p: f"{min(p)}-{max(p)}")
    step = st.tuples(st.integers(low, high), st.integers(1, 20)).map(lambda p: f"{p[0]}/{p[1]}")
    return st.one_of(st.just("*"), st.lists(st.one_of(single, span, step), min_size=1, max_size=3).map(",".join))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(minute=values(0, 59), hour=values(0, 23), weekday=st.booleans(), day=values(1, 7), zone=st.sampled_from(ZONES),
       start=st.datetimes(datetime(2026, 1, 1), datetime(2027, 12, 31)))  # fmt: skip
def test_the_next_fire_is_the_first_minute_a_scan_finds(
    minute: str, hour: str, weekday: bool, day: str, zone: str, start: datetime
) -> None:
    expression = f"cron({minute} {hour} ? * {day} *)" if weekday else f"cron({minute} {hour} * * ? *)"
    fields, tz = parse_cron(expression), ZoneInfo(zone)
    moment = start.replace(tzinfo=UTC)
    assert next_fire(expression, tz, moment) == scan(fields, tz, moment)


def test_dst_nights_and_names() -> None:
    paris = ZoneInfo("Europe/Paris")
    spring = datetime(2026, 3, 28, 12, tzinfo=UTC)  # the night of 29 March 2026 has no 02:30 in Paris
    assert next_fire("cron(30 2 * * ? *)", paris, spring) == datetime(2026, 3, 30, 2, 30, tzinfo=paris)
    weekday = next_fire("cron(0 9 ? * MON-FRI *)", paris, datetime(2026, 11, 27, 9, 0, tzinfo=paris))  # Friday
    assert weekday == datetime(2026, 11, 30, 9, 0, tzinfo=paris)  # Monday
    assert next_fire("cron(0 0 29 FEB ? 2027)", paris, spring) is None  # never: 2027 has no 29 February
    hourly = next_fire("rate(1 hour)", ZoneInfo("UTC"), datetime(2026, 5, 1, 10, 17, tzinfo=UTC))
    assert hourly == datetime(2026, 5, 1, 11, 0, tzinfo=UTC)
    assert Schedule("d", "rate(5 minutes)").next_after(datetime(2026, 5, 1, 10, 17, 5, tzinfo=UTC)) == datetime(
        2026, 5, 1, 10, 20, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("expression", "said"),
    [
        ("0 9 * * *", "must be cron(minutes"),
        ("cron(0 9 * * *)", "cron takes 6 fields"),
        ("cron(0 9 * * MON *)", "one of day-of-month and day-of-week must be '?'"),
        ("cron(0 9 L * ? *)", "L, W and # are not supported here"),
        ("cron(0 25 * * ? *)", "hours: '25' is not a value from 0 to 23"),
        ("cron(0 9 ? * FUNDAY *)", "day-of-week: 'FUNDAY' is not a value"),
        ("cron(30-10 9 * * ? *)", "runs backwards"),
    ],
)
def test_a_bad_expression_says_why_in_a_line(expression: str, said: str) -> None:
    with pytest.raises(ExpressionError, match=said.replace("(", r"\(").replace("?", r"\?")):
        parse_cron(expression)


def test_a_schedule_sections_mistakes_each_get_one_line(tmp_path: Path) -> None:
    head = "name: flow\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 8000}\ntriggers:\n"
    (tmp_path / "flow.yaml").write_text(head + "  schedule:\n    - {expression: 'rate(1 days)', message: hi,"
                                        " timezone: Mars/Olympus, answer_to: 'slack:#general', when: 9}\n"
                                        "    - {expression: 'cron(0 9 ? * MON-FRI *)', message: ''}\n")  # fmt: skip
    with pytest.raises(WorkflowError) as caught:
        load_workflow(str(tmp_path / "flow.yaml"), tmp_path)
    problems = [f"{p.key}: {p.why}" for p in caught.value.problems]
    assert any(p.startswith("triggers.schedule[0].when: unknown key") for p in problems)
    assert any(p.startswith("triggers.schedule[0].expression: rate(1 day), rate(2 days)") for p in problems)
    assert any(p.startswith("triggers.schedule[0].answer_to: must be record, slack:<channel id>") for p in problems)
    assert any(p.startswith("triggers.schedule[1].message: must be the message") for p in problems)
    assert all("\n" not in p for p in problems)
    (tmp_path / "flow.yaml").write_text(head + "  schedule: {expression: 'cron(0 9 ? * MON-FRI *)', message: go,"
                                        " timezone: Europe/Paris, answer_to: 'slack:C0DIGEST'}\n")  # fmt: skip
    [daily] = load_workflow(str(tmp_path / "flow.yaml"), tmp_path).triggers.schedules
    assert (daily.name, daily.timezone, daily.answer_to) == ("schedule-1", "Europe/Paris", "slack:C0DIGEST")


def test_serve_fires_the_ticks_in_its_window_and_none_it_missed(tmp_path: Path) -> None:
    from agent_runtime.triggers.schedules import due, tick_event

    head = "name: flow\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 8000}\ntriggers:\n"
    (tmp_path / "flow.yaml").write_text(head + "  schedule:\n"
                                        "    - {name: hourly, expression: 'rate(1 hour)', message: a}\n"
                                        "    - {name: nine, expression: 'cron(0 9 * * ? *)', message: b,"
                                        " answer_to: 'jira:OPS-7'}\n")  # fmt: skip
    flow = load_workflow(str(tmp_path / "flow.yaml"), tmp_path)
    at = datetime(2026, 11, 27, 8, 59, 50, tzinfo=UTC)
    [hourly, nine] = due([flow], at, at + timedelta(seconds=15))  # 09:00:00 UTC: both
    assert (hourly.schedule, hourly.at, nine.schedule) == ("hourly", "2026-11-27T09:00:00Z", "nine")
    assert due([flow], at + timedelta(seconds=15), at + timedelta(seconds=30)) == []  # each once
    assert due([flow], at - timedelta(days=3), at - timedelta(days=3)) == []  # an empty window fires nothing
    event = tick_event(flow, nine)
    assert event is not None and event.reply_to == {"issue_key": "OPS-7"} and event.text == "b"
    assert tick_event(flow, hourly) is not None and tick_event(flow, hourly).reply_to == {}  # only the record
    assert tick_event(flow, replace(nine, at="2026-11-28T09:00:00Z")).dedup_key != event.dedup_key  # a new day


HOSTILE_NUMBERS = st.one_of(
    st.integers(0, 99_999).map(str),
    st.sampled_from(
        ["00", "0", "-1", "+5", " 5", "5 ", "1_0", "²", "①", "\u0665", "\uff15", "1e3", "0x10", "", "9" * 4_301]
    ),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=3),
    st.integers(4_290, 5_000).map(lambda n: "9" * n),
)
CRON_TOKENS = st.one_of(
    HOSTILE_NUMBERS,
    st.sampled_from(["*", "?", "L", "W", "#", "5L", "3#2", "MON", "jul", "FUNDAY", "JAN-MAR", "MON-FRI", "1-5"]),
    st.tuples(HOSTILE_NUMBERS, HOSTILE_NUMBERS).map(lambda p: f"{p[0]}-{p[1]}"),
    st.tuples(st.sampled_from(["*", "0", "5", "1-10", "MON"]), HOSTILE_NUMBERS).map(lambda p: f"{p[0]}/{p[1]}"),
)
CRON_FIELD = st.lists(CRON_TOKENS, min_size=1, max_size=3).map(",".join)
EXPRESSIONS = st.one_of(
    st.sampled_from(["rate(5 minutes)", "rate(1 day)", "cron(0 9 ? * MON-FRI *)", "cron(0/15 * * * ? *)"]),
    st.tuples(HOSTILE_NUMBERS, st.sampled_from(["minute", "minutes", "hour", "hours", "day", "days", "weeks"])).map(
        lambda p: f"rate({p[0]} {p[1]})"
    ),
    st.lists(CRON_FIELD, min_size=5, max_size=7).map(lambda f: f"cron({' '.join(f)})"),
    st.text(max_size=40),
    st.integers(-5, 5),
    st.none(),
)
TIME_ZONES = st.one_of(
    st.sampled_from(ZONES),
    st.sampled_from(["", "Mars/Olympus", "../etc", "/etc/localtime", "UTC\x00", "zone.tab", "Europe/Paris "]),
    st.integers(200, 400).map(lambda n: "a" * n),
    st.text(max_size=20),
)


@settings(max_examples=250, deadline=None, derandomize=True)
@given(expression=EXPRESSIONS, zone=TIME_ZONES)
def test_every_schedule_is_a_clear_line_of_validation_or_computes_its_next_time(
    expression: object, zone: object
) -> None:
    """Hostile numbers (other scripts' digits, 4,300+ digits, signs, spaces, a step of 00, a rate of 0) and zones
    (overlong, paths, NUL): a schedule is either refused by a line that names its key — never an exception — or
    fires next at a time after now (or never, for a date that does not come)."""
    from agent_runtime.workflows.schedules import parse_schedule_section

    said: list[tuple[str, str]] = []
    found = parse_schedule_section({"expression": expression, "timezone": zone, "message": "go"},
                                   lambda key, why: said.append((key, why)))  # fmt: skip
    assert bool(found) != bool(said)
    assert all(key.startswith("triggers.schedule.") and why and "\n" not in why for key, why in said)
    now = datetime(2026, 11, 27, 8, 59, 50, tzinfo=UTC)
    for schedule in found:
        upcoming = schedule.next_after(now)
        assert upcoming is None or upcoming > now


@pytest.mark.parametrize(
    ("expression", "said"),
    [
        ("rate(0 minutes)", "from 1 to 999999"),
        ("rate(00 hours)", "from 1 to 999999"),
        ("rate(\u0665 minutes)", "must be ASCII"),
        ("cron(0/00 9 * * ? *)", "a step must be a whole number from 1"),
        ("cron(² 9 * * ? *)", "must be ASCII"),
        ("cron(" + "9" * 5000 + " 9 * * ? *)", "at most 256 characters"),
        ("cron(0 ? * * ? *)", "'?' stands only for"),
    ],
)
def test_the_holes_a_red_team_found_are_validation_lines(expression: str, said: str) -> None:
    from agent_runtime.workflows.schedules import check_expression

    with pytest.raises(ExpressionError, match=said.replace("(", r"\(").replace("?", r"\?")):
        check_expression(expression)
