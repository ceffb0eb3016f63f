"""The worker process's services, built once; every handler reads them when it runs.

Features (the approval desk, answers, the pane, reports, stops) are made from it where a handler needs them, not
wired at construction: a client replaced after secrets load (``setup.load_secrets``), or a clock a test moves,
reaches every handler, and a new feature needs no line in the worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from aws_lambda_powertools import Logger, Metrics

from ..chat.channels import Channel, Replies
from ..chat.surface import channel_for
from ..config import RuntimeConfig
from ..deployment import Services, deployed
from ..models import Model
from ..sandbox import SandboxClient
from ..skills import SkillLibrary
from ..stores import RunStore, Store, ThreadStore
from ..toolsets.secrets import Secrets, env_secret
from ..triggers.event import TriggerEvent
from ..triggers.queue import EventQueue
from ..workflows import Workflow, load_workflow
from .answer import Answers
from .approvals import ApprovalDesk
from .metrics import RunMetrics
from .pane import Pane
from .reports import Reports
from .stops import Stops
from .wakeups import NoWakeups, Wakeups


@dataclass(eq=False)
class Process:
    config: RuntimeConfig
    store: Store
    queue: EventQueue | None
    models: Callable[[Workflow], AbstractContextManager[Model]]
    replies: Replies  # replaced once secrets load: read it at call time, never keep it
    log: Logger = field(default_factory=lambda: Logger(service="agent-runtime-worker"))
    sandbox: SandboxClient | None = None
    metrics: Metrics | None = None  # the handler's stack-wide counts; with them, each run's EMF metrics too
    max_attachment_bytes: int = 20 * 1024 * 1024
    progress_interval: float = 3.0
    secrets: Secrets = env_secret  # ${secret:NAME} in workflows' tools sections, the run page's key
    clock: Callable[[], float] = time.time  # approvals expire by it
    wakeups: Wakeups = field(default_factory=NoWakeups)  # a run waiting for approval is woken when it expires

    def __post_init__(self) -> None:
        self.runs, self.threads = RunStore(self.store), ThreadStore(self.store)
        self.skills = SkillLibrary(self.config.skills_dir)
        self.services = Services(self.config, self.skills, self.runs, self.sandbox)  # the agents' (once)

    def now(self) -> float:
        return self.clock()

    def workflow(self, name: str) -> Workflow:
        loaded = load_workflow(name, self.config.workflows_dir, skill_names=self.skills.names())
        return deployed(loaded, self.config)

    def channel(self, event: TriggerEvent, run_id: str) -> Channel:
        return channel_for(event, self.replies, self.runs, run_id)

    def approvers(self, event: TriggerEvent) -> tuple[str, ...]:
        return tuple(self.workflow(str(event.workflow)).tools.approvers)

    @property
    def desk(self) -> ApprovalDesk:
        return ApprovalDesk(self.runs, self.threads, self.channel, self.approvers, self.now)

    @property
    def answers(self) -> Answers:
        return Answers(self.config, self.runs, self.log, self.max_attachment_bytes, clock=self.now)

    @property
    def pane(self) -> Pane:
        return Pane(self.threads, self.replies, self.workflow, self.log)

    @property
    def reports(self) -> Reports:
        """Pages, the runs channel, each run's metrics (EMF lines, beside the handler's counts)."""
        emf = RunMetrics() if self.metrics is not None else None
        return Reports(self.config, self.runs, self.secrets, lambda: self.replies, self.log, self.now, emf)

    @property
    def stops(self) -> Stops:
        return Stops(
            self.runs,
            self.threads,
            approvers=self.approvers,
            channel=self.channel,
            queue=self.queue,
            log=self.log,
            clock=self.now,
        )
