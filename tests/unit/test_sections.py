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
        "subagents.max_depth: must be an integer, not bool True",
        "subagents.max_depth: must be at least 1, got 0",
        "sandbox.memory_mb: must be an integer from 64 to 3072, got 8",
    ]


def test_one_validator_serves_every_section_the_same_way() -> None:
    """The top level, model:, limits: and context: use the same checks as the other sections (one wording)."""
    from agent_runtime.workflows import WorkflowError, parse_workflow

    data = {"name": "x", "description": "d", "prompt": "p", "model": {"name": "m", "context_window": "big"},
            "limits": {"max_tool_calls": True}, "context": {"compaction_ratio": 2, "status_role": "bot"},
            "subagents": {"max_depth": "deep"}, "descripton": 1}  # fmt: skip
    try:
        parse_workflow(data, file="x.yaml")
    except WorkflowError as error:
        problems = [f"{p.key}: {p.why}" for p in error.problems]
    assert problems == [
        "descripton: unknown key; did you mean 'description'?",
        "model.context_window: must be an integer, not str 'big'",
        "limits.max_tool_calls: must be an integer, not bool True",
        "context.status_role: must be one of system, user, not 'bot'",
        "context.compaction_ratio: must be a number between 0.1 and 0.95, got 2",
        "subagents.max_depth: must be an integer, not str 'deep'",
    ]
