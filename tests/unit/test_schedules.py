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
