"""The EMF lines a run prints: found among what was printed, checked with Powertools' own types, grouped."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import typing_extensions
from aws_lambda_powertools.metrics.provider.cloudwatch_emf import types as emf

emf.NotRequired = typing_extensions.NotRequired  # type: ignore[attr-defined]  (imported for type checkers only)
SCHEMA = pydantic.TypeAdapter(emf.CloudWatchEMFOutput)


def blobs(text: str) -> list[dict[str, Any]]:
    """The EMF lines among what was printed, each checked: Powertools' shape, and every name it declares present."""
    found = []
    for line in text.splitlines():
        if line.startswith('{"_aws"'):
            blob = json.loads(line)
            SCHEMA.validate_python(blob, strict=True)
            [directive] = blob["_aws"]["CloudWatchMetrics"]
            assert directive["Namespace"] == "AgentRuntime"
            names = [*directive["Dimensions"][0], *(m["Name"] for m in directive["Metrics"])]
            assert all(name in blob for name in names)
            found.append(blob)
    return found


def by_dimensions(found: list[dict[str, Any]]) -> dict[frozenset[str], list[dict[str, Any]]]:
    grouped: dict[frozenset[str], list[dict[str, Any]]] = {}
    for blob in found:
        grouped.setdefault(frozenset(blob["_aws"]["CloudWatchMetrics"][0]["Dimensions"][0]), []).append(blob)
    return grouped
