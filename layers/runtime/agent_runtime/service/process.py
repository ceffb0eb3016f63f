"""The worker process's services, built once; every handler reads them when it runs.

Features (the approval desk, answers, the pane, reports, stops) are made for each message from it and the
message's unit of work (``handlers.Delivery``), not wired at construction: a client replaced after secrets load
(``setup.load_secrets``), or a clock a test moves, reaches every handler, and a new feature needs no line in the
worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace

from aws_lambda_powertools import Logger, Metrics

from ..access import Access, Verdict
from ..chat.channels import Replies
from ..config import RuntimeConfig
from ..deployment import Services, deployed
from ..identity.flow import ConnectFlow
from ..inbound import TriggerEvent
from ..models import Model
from ..sandbox import SandboxClient
from ..skills import SkillLibrary
from ..sources import BUILTIN, Sources
from ..stores import RunStore, Store, ThreadStore
from ..toolsets.secrets import Secrets, env_secret
from ..triggers.queue import EventQueue
from ..workflows import Workflow, load_workflow
from .directory import ChatDirectory
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
    sources: Sources = BUILTIN  # the webhook's (setup and serve hand both the same): what differs per trigger source
    connect: ConnectFlow | None = None  # people's connections to OAuth providers (tools acting as the requester)

    def __post_init__(self) -> None:
        self.runs, self.threads = RunStore(self.store), ThreadStore(self.store)
        self.skills = SkillLibrary(self.config.skills_dir)
        self.services = Services(self.config, self.skills, self.runs, self.sandbox)  # the agents' (once)

    def now(self) -> float:
        return self.clock()

    def workflow(self, name: str) -> Workflow:
        loaded = load_workflow(name, self.config.workflows_dir, skill_names=self.skills.names())
        return deployed(loaded, self.config)

    def approvers(self, event: TriggerEvent) -> tuple[str, ...]:
        return tuple(self.workflow(str(event.workflow)).tools.approvers)

    def may_approve(self, event: TriggerEvent, user: str) -> Verdict:
        """Whether ``user`` may decide the approvals of the run ``event`` started: ``tools.approvers`` and the
        workflow's ``access.approve`` groups (read where the run was asked: its channel, its project)."""
        workflow = self.workflow(str(event.workflow))
        who = self.sources.of(event).requester(replace(event, user=user))  # the decider, where the run was asked
        return Access(workflow, ChatDirectory(self.replies)).may_approve(who, workflow.tools.approvers, event.user)
