"""The workflow's ``triggers:`` section: which Slack and JIRA events start it, and the signed webhook it takes
from other systems (GitHub, or any sender that signs with HMAC). No section: started only by name."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..sections import check_keys, flag
from .oauth import check_person
from .schedules import Schedule, parse_schedule_section

SLACK_KEYS = ("channels", "direct_messages", "suggested_prompts", "reactions")
EMOJI = re.compile(r"[a-z0-9_+'-]{1,100}")  # an emoji's name as Slack sends it: "jira", "+1", "white_check_mark"
MAX_PROMPTS = 4  # Slack shows at most four suggested prompts
JIRA_KEYS = ("projects", "issue_types", "labels", "events")
JIRA_EVENTS = ("comment_created", "issue_created")
WEBHOOK_KEYS = ("secret", "signature", "events", "message", "identities")
SIGNATURES = ("github", "hmac", "notion")  # X-Hub-Signature-256; X-Signature-256 of "timestamp.body"; Notion's
SECRET_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")  # a key of the integrations secret (locally: its env variable)
MESSAGE_PATH = re.compile(r"\$?(\.?[A-Za-z_][A-Za-z0-9_-]*|\[\d{1,4}\])+")  # $.pull_request.title, items[0].name


@dataclass(frozen=True, slots=True)
class SlackTrigger:
    channels: tuple[str, ...] = ()  # channel ids where a mention starts the workflow; "*" for any
    direct_messages: bool = False
    # Offered when a person opens a direct message (the app's agent or assistant pane): (title, message) pairs.
    suggested_prompts: tuple[tuple[str, str], ...] = ()
    reactions: tuple[str, ...] = ()  # an emoji added to a message in one of ``channels`` starts it (names, no colons)


@dataclass(frozen=True, slots=True)
class JiraTrigger:
    projects: tuple[str, ...] = ()  # project keys; "*" for any
    issue_types: tuple[str, ...] = ()  # empty: any
    labels: tuple[str, ...] = ()  # empty: any; else the issue must carry one of them
    events: tuple[str, ...] = JIRA_EVENTS


@dataclass(frozen=True, slots=True)
class WebhookTrigger:
    """``POST /hooks/<workflow>``: verified with the integrations secret's ``secret`` key, deduplicated by the
    delivery id; the JSON body is the run's file ``delivery.json`` and ``message`` (a JSON path) its message."""

    secret: str
    signature: str = "github"
    events: tuple[str, ...] = ()  # X-GitHub-Event names or Notion's types (page.created) it takes; empty: any
    message: str | None = None
    # sender (GitHub's login, Notion's author id) → the person its runs act for (slack:U0123): whose connections
    # its tools use; a sender not here acts for nobody
    identities: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TriggerSettings:
    """What starts the workflow; each source reads its own part (``sources``: which events match)."""

    slack: SlackTrigger | None = None
    jira: JiraTrigger | None = None
    webhook: WebhookTrigger | None = None  # its own route: never matched by routing
    schedules: tuple[Schedule, ...] = ()  # when it runs by itself (EventBridge Scheduler; serve locally)


def parse_triggers_section(data: Mapping[str, Any], report: Callable[[str, str], None]) -> TriggerSettings:
    check_keys("triggers", data, ("slack", "jira", "webhook", "schedule"), report)
    slack, jira, webhook, schedule = data.get("slack"), data.get("jira"), data.get("webhook"), data.get("schedule")
    return TriggerSettings(
        slack=_slack(slack, report) if slack is not None else None,
        jira=_jira(jira, report) if jira is not None else None,
        webhook=_webhook(webhook, report) if webhook is not None else None,
        schedules=parse_schedule_section(schedule, report) if schedule is not None else (),
    )


def _webhook(data: Any, report: Callable[[str, str], None]) -> WebhookTrigger | None:
    where = "triggers.webhook"
    if not isinstance(data, Mapping):
        report(where, "must be a mapping (secret, signature, events, message)")
        return None
    check_keys(where, data, WEBHOOK_KEYS, report)
    secret, signature, message = data.get("secret"), data.get("signature", "github"), data.get("message")
    if not isinstance(secret, str) or not SECRET_KEY.fullmatch(secret):
        report(f"{where}.secret", "must name a key of the integrations secret (lower case: github_webhook_secret)")
    if signature not in SIGNATURES:
        report(f"{where}.signature", f"must be one of {', '.join(SIGNATURES)}; got {signature!r}")
    if message is not None and not (isinstance(message, str) and MESSAGE_PATH.fullmatch(message)):
        report(f"{where}.message", f"must be a JSON path into the body, like $.pull_request.title; got {message!r}")
    events = _names(data, "events", where, report)
    if events and signature not in ("github", "notion"):
        report(f"{where}.events", "are GitHub's X-GitHub-Event or Notion's event types: only with github or notion")
    identities = _identities(data.get("identities", {}), f"{where}.identities", report)
    if not isinstance(secret, str) or signature not in SIGNATURES:
        return None
    return WebhookTrigger(secret, str(signature), events, message, identities)


def _identities(value: Any, where: str, report: Callable[[str, str], None]) -> dict[str, str]:
    if not isinstance(value, Mapping):
        report(where, "must map senders (GitHub logins, Notion author ids) to people (slack:U0123)")
        return {}
    found = {}
    for sender, person in value.items():
        if not isinstance(sender, str) or not sender or any(c.isspace() for c in sender) or len(sender) > 200:
            report(where, f"{str(sender)[:60]!r}: a sender is an id without spaces")
        elif (checked := check_person(person, f"{where}.{sender}", report)) is not None:
            found[sender] = checked
    return found


def _slack(data: Any, report: Callable[[str, str], None]) -> SlackTrigger:
    if not isinstance(data, Mapping):
        report("triggers.slack", "must be a mapping (channels, direct_messages, suggested_prompts)")
        return SlackTrigger()
    check_keys("triggers.slack", data, SLACK_KEYS, report)
    dms = flag("triggers.slack", data, "direct_messages", report)
    prompts = _prompts(data.get("suggested_prompts", []), report)
    if prompts and not dms:
        report("triggers.slack.suggested_prompts", "are offered in direct messages: set direct_messages: true")
    reactions = tuple(name.strip(":") for name in _names(data, "reactions", "triggers.slack", report))
    for name in reactions:
        if not EMOJI.fullmatch(name):
            report("triggers.slack.reactions", f"{name!r} is not an emoji name (like jira or white_check_mark)")
    channels = _names(data, "channels", "triggers.slack", report)
    if reactions and not channels:
        report("triggers.slack.reactions", "start the workflow in the listed channels: list them (or '*')")
    return SlackTrigger(channels, dms, prompts, reactions)


def _prompts(value: Any, report: Callable[[str, str], None]) -> tuple[tuple[str, str], ...]:
    """Each prompt a string (its title and message) or a mapping with ``title`` and ``message``."""
    where = "triggers.slack.suggested_prompts"
    if not isinstance(value, Sequence) or isinstance(value, str):
        report(where, "must be a list of prompts (strings, or mappings with title and message)")
        return ()
    if len(value) > MAX_PROMPTS:
        report(where, f"Slack shows at most {MAX_PROMPTS} prompts; {len(value)} given")
    prompts = []
    for number, item in enumerate(value[:MAX_PROMPTS]):
        pair = (item, item) if isinstance(item, str) else _pair(item)
        if pair is None or not all(part.strip() for part in pair):
            report(f"{where}[{number}]", "must be a non-empty string or a mapping with non-empty title and message")
            continue
        prompts.append(pair)
    return tuple(prompts)


def _pair(item: Any) -> tuple[str, str] | None:
    if not isinstance(item, Mapping) or set(item) != {"title", "message"}:
        return None
    title, message = item["title"], item["message"]
    return (title, message) if isinstance(title, str) and isinstance(message, str) else None


def _jira(data: Any, report: Callable[[str, str], None]) -> JiraTrigger:
    if not isinstance(data, Mapping):
        report("triggers.jira", "must be a mapping (projects, issue_types, labels, events)")
        return JiraTrigger()
    check_keys("triggers.jira", data, JIRA_KEYS, report)
    events = _names(data, "events", "triggers.jira", report) or JIRA_EVENTS
    for name in events:
        if name not in JIRA_EVENTS:
            report("triggers.jira.events", f"unknown event {name!r}; allowed: {', '.join(JIRA_EVENTS)}")
    projects = _names(data, "projects", "triggers.jira", report)
    if not projects:
        report("triggers.jira.projects", "name at least one project key (or '*')")
    return JiraTrigger(
        projects,
        _names(data, "issue_types", "triggers.jira", report),
        _names(data, "labels", "triggers.jira", report),
        events,
    )


def _names(data: Mapping[str, Any], key: str, where: str, report: Callable[[str, str], None]) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, Sequence) or isinstance(value, str) or not all(isinstance(v, str) for v in value):
        report(f"{where}.{key}", "must be a list of strings")
        return ()
    return tuple(value)
