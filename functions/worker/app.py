"""Worker function: SQS (FIFO, one thread at a time) → run the workflow → persist → reply.

Partial batch failures are reported, so one failing message does not redeliver the others; one whose answer Slack
could not take is delivered again soon (``service/again.py``), any other keeps the queue's timeout.
"""

from __future__ import annotations

from typing import Any

from agent_runtime import telemetry
from agent_runtime.config import RuntimeConfig
from agent_runtime.deadline import Deadline
from agent_runtime.service.again import soon_when_unreachable
from agent_runtime.service.setup import worker_from_env
from agent_runtime.triggers.queue import decode
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

logger = Logger(service="agent-runtime-worker")
metrics = Metrics(namespace="AgentRuntime", service="worker")
worker, store = worker_from_env(logger, metrics)
margin = RuntimeConfig.from_env().deadline_margin_seconds
processor = SqsFifoPartialProcessor()


def record_handler(record: SQSRecord, lambda_context: Any) -> str:
    deadline = Deadline.from_lambda_context(lambda_context, margin_seconds=margin)
    received = int(record.attributes.approximate_receive_count or 1)
    with soon_when_unreachable(worker.process.queue, record.receipt_handle, received, logger):
        return worker.handle(decode(record.body, store), deadline=deadline)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        return process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )
    finally:
        telemetry.flush()  # spans still buffered are lost when Lambda freezes the environment
