"""OpenTelemetry traces with the GenAI semantic conventions, over OTLP/HTTP, when an endpoint is configured.

``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) turns it on; without one nothing of
OpenTelemetry's SDK is imported. Spans: ``invoke_agent {workflow}`` per run (a helper's nested under the parent's
``execute_tool subagent``), ``chat {model}`` per model call, ``execute_tool {name}`` per tool call; compaction,
masking, virtual files and approvals are span events with our own attributes. No prompt, message or payload
content unless ``AGENT_LOG_PAYLOADS=1`` (then tool arguments only). ``flush()`` before a Lambda invocation
returns: a frozen environment loses whatever is still buffered.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .hooks import Hook
from .redaction import scrub
from .run_context import CURRENT_CALL

if TYPE_CHECKING:
    from .messages import Message
    from .models import ContextLengthExceededError, ModelError, ModelResponse, ToolCall
    from .steps import Run
    from .tools import ToolOutcome

FLUSH_SECONDS = 0.8  # what a handler waits for its spans to leave, at most (the budget a dead collector costs)
EXPORT_SECONDS = 5.0  # one export, retries included (OTEL_EXPORTER_OTLP_TIMEOUT overrides)
EVENT_KINDS = ("compaction", "masking", "folding", "virtual_file", "approval_requested", "approval_decided", "subagent")
_LOCK = threading.Lock()
_PROVIDERS: dict[str, Any] = {}
_EXPORTERS: list[Any] = []  # the providers' exporters, for forget()
_OPEN: dict[tuple[str, str], Any] = {}  # (run id, call id) → a running subagent call's span (its helper's parent)


def enabled(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return bool(env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def tracer() -> Any:
    """The runtime's tracer, on its own provider (batching, OTLP/HTTP), made once per endpoint."""
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "")
    with _LOCK:
        if endpoint not in _PROVIDERS:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            name = os.environ.get("OTEL_SERVICE_NAME") or "agent-runtime"
            provider = TracerProvider(resource=Resource.create({"service.name": name}))
            timeout = float(os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT") or EXPORT_SECONDS)  # the SDK's: 10
            exporter = OTLPSpanExporter(timeout=timeout)
            provider.add_span_processor(BatchSpanProcessor(exporter))
            _PROVIDERS[endpoint] = provider
            _EXPORTERS.append(exporter)
        return _PROVIDERS[endpoint].get_tracer("agent_runtime")


def flush(seconds: float = FLUSH_SECONDS) -> None:
    """Export what is buffered (call before a Lambda invocation returns), waiting ``seconds`` at most: the export
    runs in a thread of its own, since the exporter's own timeout and retries (10 s for a collector that never
    answers, 7 s for one that refuses) would otherwise sit on the request's path (Slack wants its answer in 3 s).
    A no-op when tracing is off."""
    providers = list(_PROVIDERS.values())
    if not providers:
        return
    done = threading.Event()

    def export() -> None:
        try:
            for provider in providers:
                provider.force_flush(int(seconds * 1000))
        finally:
            done.set()

    threading.Thread(target=export, name="otel-flush", daemon=True).start()
    done.wait(seconds)


def forget() -> None:
    """Stop every provider and drop it, for tests, whose collectors come and go: one left to a gone collector goes
    on exporting to it, retrying with ``random``'s jitter, in threads of its own (and flush() would wait on it).
    A Lambda environment has one endpoint for its life and never calls this."""
    with _LOCK:
        providers, exporters = list(_PROVIDERS.values()), list(_EXPORTERS)
        _PROVIDERS.clear()
        _EXPORTERS.clear()
    for exporter in exporters:
        exporter.shutdown()  # first: a retry under way stops now, not at the export's timeout
    for provider in providers:
        provider.shutdown()


def inject(carrier: MutableMapping[str, str]) -> None:
    """The current trace context into a queue message (W3C traceparent), when tracing is on."""
    if enabled():
        from opentelemetry.propagate import inject as otel_inject

        otel_inject(carrier)


def extract(carrier: Mapping[str, str] | None) -> Any:
    """A trace context taken from a queue message (None: start a new trace)."""
    if not carrier or not enabled():
        return None
    from opentelemetry.propagate import extract as otel_extract

    return otel_extract(dict(carrier))


class TelemetryHook(Hook):
    """Spans for one run. ``parent`` is a context from the queue message (the webhook's trace)."""

    def __init__(self, *, parent: Any = None, payloads: bool = False) -> None:
        self.tracer, self.parent, self.payloads = tracer(), parent, payloads
        self._run: Any = None
        self._chat: Any = None
        self._tools: dict[str, Any] = {}
        self._seen = 0

    def _context(self, span: Any) -> Any:
        from opentelemetry import trace

        return trace.set_span_in_context(span)

    def on_run_start(self, run: Run) -> None:
        run_id = run.state.run_id
        parent = _OPEN.get((run_id.rsplit(".sub", 1)[0], CURRENT_CALL.get() or "")) if ".sub" in run_id else None
        context = self._context(parent) if parent is not None else self.parent
        self._run = self.tracer.start_span(
            f"invoke_agent {run.workflow.name}",
            context=context,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": run.workflow.name,
                "gen_ai.agent.id": run_id,
                "gen_ai.request.model": run.record.model,
                "agent_runtime.resumed": run.state.turn > 0,
            },
        )
        self._seen = 0  # hooks before this one may already have recorded events (a virtual file)

    def before_model_call(self, run: Run, messages: list[Message]) -> list[Message]:
        if self._chat is None:
            self._chat = self.tracer.start_span(
                f"chat {run.record.model}",
                context=self._context(self._run),
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": run.record.model,
                    "gen_ai.system": "openai",
                },
            )
        return messages

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        span, self._chat = self._chat, None
        if span is None:
            return
        span.set_attribute("gen_ai.response.model", response.model)
        span.set_attribute("gen_ai.response.id", response.id)
        span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
        if response.usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", response.usage.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", response.usage.completion_tokens)
            span.set_attribute("gen_ai.usage.cached_input_tokens", response.usage.cached_tokens)
        span.set_attribute("agent_runtime.attempts", response.attempts)
        span.end()
        self._events(run)

    def on_model_error(self, run: Run, error: ModelError) -> bool:
        self._fail_chat(error)
        return False

    def on_context_overflow(self, run: Run, error: ContextLengthExceededError) -> bool:
        self._fail_chat(error)
        return False

    def _fail_chat(self, error: Exception) -> None:
        span, self._chat = self._chat, None
        if span is not None:
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
            span.end()

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
        }
        if self.payloads:
            attributes["gen_ai.tool.call.arguments"] = scrub(call.arguments)[:4_000]  # redacted whole, then cut
        span = self.tracer.start_span(
            f"execute_tool {call.name}", context=self._context(self._run), attributes=attributes
        )
        self._tools[call.id] = span
        if call.name == "subagent":
            _OPEN[(run.state.run_id, call.id)] = span
        return None

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        span = self._tools.pop(outcome.call.id, None)
        if span is not None:
            if outcome.is_error:
                from opentelemetry.trace import Status, StatusCode

                span.set_status(Status(StatusCode.ERROR, "the tool returned an error"))
            span.set_attribute("agent_runtime.tool.result_chars", len(outcome.content))
            span.end()
        if outcome.call.name == "subagent":
            _OPEN.pop((run.state.run_id, outcome.call.id), None)
        return outcome

    def after_step(self, run: Run) -> None:
        self._events(run)

    def on_run_end(self, run: Run) -> None:
        self._events(run)
        for span in [*self._tools.values(), *([self._chat] if self._chat is not None else [])]:
            span.end()  # calls cut off by the deadline or a failure
        self._tools.clear()
        if self._run is None:
            return
        totals = run.record.usage_totals()
        self._run.set_attribute("gen_ai.usage.input_tokens", totals["prompt_tokens"])
        self._run.set_attribute("gen_ai.usage.output_tokens", totals["completion_tokens"])
        self._run.set_attribute("agent_runtime.status", str(run.record.status))
        for part, dollars in run.record.ledger.breakdown().items():  # the run's cost: total, helpers, estimated...
            self._run.set_attribute(f"agent_runtime.cost_usd.{part}", dollars)
        if run.record.status.value == "failed":
            from opentelemetry.trace import Status, StatusCode

            self._run.set_status(Status(StatusCode.ERROR, _failure(run)))
        self._run.end()

    def _events(self, run: Run) -> None:
        """Our own events on the run's span: numbers and ids only (the record's event, flattened)."""
        if self._run is None:
            return
        for event in run.record.events[self._seen :]:
            data = event.to_dict()
            nested = data.pop("cache", None)  # masking and folding: the cache-break estimate, flattened
            data |= {f"cache.{k}": v for k, v in nested.items()} if isinstance(nested, dict) else {}
            if data["type"] in EVENT_KINDS:
                attributes = {
                    f"agent_runtime.{k}": scrub(v) if isinstance(v, str) else v
                    for k, v in data.items()
                    if k not in ("type", "at") and isinstance(v, str | int | float | bool)
                }
                self._run.add_event(data["type"], attributes=attributes)
        self._seen = len(run.record.events)


@contextmanager
def span(name: str, attributes: Mapping[str, str | int | bool] | None = None) -> Iterator[None]:
    """A span around a block when tracing is on (the webhook's, so the run's trace starts at the request)."""
    if not enabled():
        yield
        return
    with tracer().start_as_current_span(name, attributes=dict(attributes or {})):
        yield


def _failure(run: Run) -> str:
    """A failed run's span status: the error's class and HTTP status, never its message (an endpoint's error body
    can be 200 KB and quote the user's message; the run record keeps the reason)."""
    failed = next((event for event in reversed(run.record.events) if event["type"] == "failed"), None)
    if failed is None:
        return "failed"
    code = failed.get("status_code")
    return str(failed["error"]) + (f" (HTTP {code})" if code else "")
