"""A Slack that cannot be reached, and the answer the tests of it count: shared by the worker's and serve's tests."""

from __future__ import annotations

import json
import socket

from tests.worker_support import System

ANSWER = "Payments, ticket 4711: " + "the service restarted cleanly. " * 50  # several batches of text


def closed_port() -> int:
    """A port nothing listens on (bound, then released): a Slack that cannot be reached."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers_posted(s: System) -> int:
    """How many times the answer went to Slack (streamed, posted or set as a message's text)."""
    return sum(json.dumps(body).count("ticket 4711") for _, body in s.apis.calls)
