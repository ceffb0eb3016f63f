"""The checks every workflow section shares: each problem reported with its dotted key, the default kept."""

from __future__ import annotations

from agent_runtime.sections import Report, check_keys, flag, integer


def collect() -> tuple[list[str], Report]:
    problems: list[str] = []
    return problems, lambda where, why: problems.append(f"{where}: {why}")


def test_unknown_keys_are_named_with_the_allowed_ones() -> None:
    problems, report = collect()
    check_keys("sandbox", {"enabled": True, "network": True}, ("enabled", "memory_mb"), report)
    assert problems == ["sandbox.network: unknown key; allowed: enabled, memory_mb"]


def test_flags_are_booleans_only() -> None:
    problems, report = collect()
    assert flag("files", {"preload_images": True}, "preload_images", report) is True
    assert flag("files", {}, "preload_images", report) is False
    assert flag("files", {"preload_images": "yes"}, "preload_images", report) is False
    assert problems == ["files.preload_images: must be true or false"]


def test_integers_are_bounded_and_booleans_are_not_integers() -> None:
    problems, report = collect()
    assert integer("subagents", {"max_depth": 3}, "max_depth", 1, report) == 3
    assert integer("subagents", {"max_depth": True}, "max_depth", 1, report) == 1
    assert integer("subagents", {"max_depth": 0}, "max_depth", 1, report) == 1
    assert integer("sandbox", {"memory_mb": 8}, "memory_mb", 256, report, low=64, high=3072) == 256
    assert integer("sandbox", {"memory_mb": 3072}, "memory_mb", 256, report, low=64, high=3072) == 3072
    assert problems == [
        "subagents.max_depth: must be a positive integer, got True",
        "subagents.max_depth: must be a positive integer, got 0",
        "sandbox.memory_mb: must be an integer from 64 to 3072, got 8",
    ]
