"""The application service: the worker that runs a queued message to its answer, ``serve`` (the webhook and the
worker in one local process), approval decisions and wake-ups, the "working…" progress. The top floor: it uses
``runtime``, ``chat`` and ``triggers``; nothing below imports it."""
