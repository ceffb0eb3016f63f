from __future__ import annotations

from pathlib import Path

import pytest
from agent_runtime.workflows import WorkflowError, available_workflows, load_workflow

REPO = Path(__file__).resolve().parents[2]
GOOD = """\
name: {name}
description: Reviews things.
prompt: You review things.
model:
  name: gpt-4o
  context_window: 128000
  max_output_tokens: 4096
limits:
  max_tool_calls: 10
"""


def _write(tmp_path: Path, text: str, name: str = "flow") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _problems(tmp_path: Path, text: str, name: str = "flow") -> list[str]:
    path = _write(tmp_path, text, name)
    with pytest.raises(WorkflowError) as caught:
        load_workflow(str(path), tmp_path)
    return [f"{p.key}: {p.why}" for p in caught.value.problems]


def test_valid_workflow_loads_by_name_and_path(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.format(name="flow"))
    by_name = load_workflow("flow", tmp_path)
    by_path = load_workflow(str(path), REPO)
    assert by_name.model.context_window == 128000
    assert by_name.limits.max_tool_calls == 10
    assert by_name.path == path
    assert by_path.prompt == "You review things."


def test_shipped_workflows_are_valid() -> None:
    names = available_workflows(REPO / "workflows")
    assert "document-feedback" in names
    for name in names:
        workflow = load_workflow(name, REPO / "workflows")
        assert workflow.prompt.strip()


def test_every_problem_is_reported_with_key_and_reason(tmp_path: Path) -> None:
    text = """\
name: Bad_Name
descripton: typo
prompt: hi
prompt_file: also.md
model:
  name: ""
  context_window: "big"
  max_tokens: 3
limits:
  max_tool_calls: -1
skills: [a, b]
"""
    problems = _problems(tmp_path, text)
    assert "descripton: unknown key; did you mean 'description'?" in problems
    assert "name: use lowercase letters, digits and single hyphens (e.g. document-feedback)" in problems
    assert "description: is required" in problems
    assert "prompt: give exactly one of 'prompt' or 'prompt_file'" in problems
    assert "model.name: must be a non-empty string" in problems
    assert "model.context_window: must be an integer, not str 'big'" in problems
    assert any(p.startswith("model.max_tokens: unknown key; did you mean 'max_output_tokens'") for p in problems)
    assert "limits.max_tool_calls: must be at least 0, got -1" in problems
    assert "skills: must be a mapping, not list" in problems


def test_error_lines_name_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: flow\n")
    with pytest.raises(WorkflowError) as caught:
        load_workflow(str(path), tmp_path)
    assert str(caught.value).splitlines()[0] == f"{path}: description: is required"


def test_output_tokens_must_fit_the_window(tmp_path: Path) -> None:
    text = GOOD.format(name="flow").replace("max_output_tokens: 4096", "max_output_tokens: 200000")
    assert _problems(tmp_path, text) == ["model.max_output_tokens: must be smaller than model.context_window (128000)"]


def test_name_must_match_file_name(tmp_path: Path) -> None:
    assert _problems(tmp_path, GOOD.format(name="other")) == ["name: must equal the file name 'flow'"]


def test_prompt_file_is_read_relative_to_the_workflow(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.md").write_text("From a file.", encoding="utf-8")
    text = GOOD.format(name="flow").replace("prompt: You review things.", "prompt_file: prompts/p.md")
    assert load_workflow(str(_write(tmp_path, text)), tmp_path).prompt == "From a file."


def test_missing_prompt_file_is_reported(tmp_path: Path) -> None:
    text = GOOD.format(name="flow").replace("prompt: You review things.", "prompt_file: nope.md")
    [problem] = _problems(tmp_path, text)
    assert problem.startswith("prompt_file: cannot read ") and "nope.md" in problem


def test_duplicate_keys_are_an_error_not_a_silent_overwrite(tmp_path: Path) -> None:
    text = GOOD.format(name="flow") + "name: again\n"
    [problem] = _problems(tmp_path, text)
    assert problem == "line 10, column 1: invalid YAML: key 'name' appears twice"


def test_invalid_yaml_reports_line_and_column(tmp_path: Path) -> None:
    [problem] = _problems(tmp_path, "name: [unclosed\n")
    assert problem.startswith("line 2, column 1: invalid YAML:")


def test_non_mapping_document(tmp_path: Path) -> None:
    assert _problems(tmp_path, "- a\n- b\n") == ["(document): must be a mapping of keys to values"]


def test_unknown_workflow_lists_the_available_ones(tmp_path: Path) -> None:
    _write(tmp_path, GOOD.format(name="flow"))
    with pytest.raises(WorkflowError, match="no such workflow 'missing'; available: flow"):
        load_workflow("missing", tmp_path)


def test_context_section_is_parsed_and_validated(tmp_path: Path) -> None:
    good = GOOD.format(name="flow") + "context:\n  virtual_file_threshold_tokens: 5000\n  compaction_threshold: 0.7\n"
    workflow = load_workflow(str(_write(tmp_path, good)), tmp_path)
    assert workflow.context.virtual_file_threshold_tokens == 5000
    assert workflow.context.compaction_threshold == 0.7
    assert workflow.context.virtual_file_preview_tokens == 1000
    bad = GOOD.format(name="flow") + (
        "context:\n  virtual_file_threshold_tokens: 500\n  virtual_file_preview_tokens: 800\n"
        "  compaction_threshold: 2\n  status_role: assistant\n  surprise: 1\n"
    )
    problems = _problems(tmp_path, bad)
    assert "context.virtual_file_preview_tokens: must be smaller than virtual_file_threshold_tokens (500)" in problems
    assert "context.compaction_threshold: must be a number between 0.1 and 0.95, got 2" in problems
    assert "context.status_role: must be one of system, user, not 'assistant'" in problems
    assert any(p.startswith("context.surprise: unknown key") for p in problems)


def test_sandbox_and_files_sections_are_validated_with_the_rest(tmp_path: Path) -> None:
    good = GOOD.format(name="flow") + "sandbox:\n  enabled: true\n  time_limit_seconds: 10\n"
    workflow = load_workflow(str(_write(tmp_path, good)), tmp_path)
    assert (workflow.sandbox.enabled, workflow.sandbox.time_limit_seconds, workflow.sandbox.memory_mb) == (
        True,
        10,
        256,
    )
    bad = GOOD.format(name="flow") + (
        "sandbox:\n  enabled: yes please\n  memory_mb: 8\n  network: true\nfiles:\n  preload_kb: -1\n"
    )
    assert _problems(tmp_path, bad) == [
        "files.preload_kb: must be an integer from 0 to 1024 (KB), got -1",  # was dropped before sandbox landed
        "sandbox.network: unknown key; allowed: enabled, time_limit_seconds, memory_mb",
        "sandbox.enabled: must be true or false",
        "sandbox.memory_mb: must be an integer from 64 to 3072, got 8",
    ]


@pytest.mark.parametrize(
    ("env", "mode"),
    [({}, "local"), ({"AGENT_SANDBOX_FUNCTION": "sbx"}, "lambda"), ({"AGENT_SANDBOX": "OFF"}, "off")],
)
def test_sandbox_mode_comes_from_the_environment(env: dict[str, str], mode: str) -> None:
    from agent_runtime.config import RuntimeConfig

    assert RuntimeConfig.from_env(env).sandbox_mode == mode


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"AGENT_SANDBOX": "docker"}, "AGENT_SANDBOX='docker': use one of local, lambda, off"),
        ({"AGENT_SANDBOX": "lambda"}, "AGENT_SANDBOX=lambda needs AGENT_SANDBOX_FUNCTION"),
    ],
)
def test_bad_sandbox_settings_are_config_errors(env: dict[str, str], message: str) -> None:
    from agent_runtime.config import RuntimeConfig
    from agent_runtime.errors import ConfigError

    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        RuntimeConfig.from_env(env)


def test_agent_model_overrides_every_workflows_model() -> None:
    from agent_runtime.config import RuntimeConfig
    from agent_runtime.runtime import open_model

    workflow = load_workflow("document-feedback", REPO / "workflows")
    config = RuntimeConfig.from_env({"AGENT_MODEL": "gpt-4.1-mini", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    with open_model(workflow, config) as model:
        assert model.name == "gpt-4.1-mini"
    with open_model(workflow, RuntimeConfig.from_env({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})) as model:
        assert model.name == "gpt-4.1"


def test_a_workflow_may_name_its_tokenizer_family(tmp_path: Path) -> None:
    from agent_runtime import ToolRegistry
    from agent_runtime.context import ContextEngine

    text = GOOD.format(name="flow").replace("  name: gpt-4o", "  name: qwen2.5-7b\n  tokenizer: cl100k_base")
    workflow = load_workflow(str(_write(tmp_path, text)), tmp_path)
    assert workflow.model.tokenizer == "cl100k_base"
    assert ContextEngine(workflow, ToolRegistry()).counter.encoding.name == "cl100k_base"
    bad = GOOD.format(name="flow").replace("  name: gpt-4o", "  name: x\n  tokenizer: llama3")
    assert _problems(tmp_path, bad) == ["model.tokenizer: must be one of o200k_base, cl100k_base, not 'llama3'"]


def test_an_unknown_model_name_says_once_which_encoding_stands_in(caplog: pytest.LogCaptureFixture) -> None:
    from agent_runtime.context.encodings import encoding_name_for

    with caplog.at_level("WARNING"):
        assert encoding_name_for("gemma-3-270m-test-only") == "o200k_base"
        assert encoding_name_for("gemma-3-270m-test-only") == "o200k_base"
    said = [r for r in caplog.records if "gemma-3-270m-test-only" in r.getMessage()]
    assert len(said) == 1 and "counting with o200k_base" in said[0].getMessage()


def test_suggested_prompts_are_strings_or_title_and_message_and_need_direct_messages(tmp_path: Path) -> None:
    good = GOOD.format(name="flow") + (
        "triggers:\n  slack:\n    direct_messages: true\n    suggested_prompts:\n"
        "      - Summarise the open incidents\n"
        "      - {title: Review a design, message: Review the design document I attach next}\n"
    )
    slack = load_workflow(str(_write(tmp_path, good)), tmp_path).triggers.slack
    assert slack is not None and slack.suggested_prompts == (
        ("Summarise the open incidents", "Summarise the open incidents"),
        ("Review a design", "Review the design document I attach next"),
    )
    bad = GOOD.format(name="flow") + (
        "triggers:\n  slack:\n    channels: [C1]\n    suggested_prompts:\n"
        "      - ''\n      - {title: T}\n      - {title: T, message: M, extra: x}\n      - a\n      - b\n"
    )
    problems = _problems(tmp_path, bad)
    assert any("suggested_prompts: Slack shows at most 4 prompts; 5 given" in p for p in problems)
    assert sum("triggers.slack.suggested_prompts[" in p for p in problems) == 3  # the empty, the half, the extra
    assert any("set direct_messages: true" in p for p in problems)
    scalar = GOOD.format(name="flow") + "triggers:\n  slack:\n    direct_messages: true\n    suggested_prompts: hi\n"
    assert any("must be a list of prompts" in p for p in _problems(tmp_path, scalar))


def test_a_webhook_triggers_mistakes_each_get_one_line(tmp_path: Path) -> None:
    base = "name: flow\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 8000}\n"
    hook = "triggers:\n  webhook: {secret: Git-Hub!, signature: gitlab, events: [push], message: 'not a path', x: 1}\n"
    problems = _problems(tmp_path, base + hook)
    assert any(p.startswith("triggers.webhook.x: unknown key") for p in problems)
    assert (
        "triggers.webhook.secret: must name a key of the integrations secret (lower case: github_webhook_secret)"
        in problems
    )
    assert "triggers.webhook.signature: must be one of github, hmac, notion; got 'gitlab'" in problems
    assert any(p.startswith("triggers.webhook.message: must be a JSON path into the body") for p in problems)
    assert (
        "triggers.webhook.events: are GitHub's X-GitHub-Event or Notion's event types: only with github or notion"
        in problems
    )
    assert all("\n" not in p for p in problems)


def test_a_reactions_mistakes_each_get_one_line(tmp_path: Path) -> None:
    base = "name: flow\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 8000}\n"
    problems = _problems(tmp_path, base + "triggers:\n  slack: {reactions: [':jira:', 'not an emoji']}\n")
    assert "triggers.slack.reactions: 'not an emoji' is not an emoji name (like jira or white_check_mark)" in problems
    assert "triggers.slack.reactions: start the workflow in the listed channels: list them (or '*')" in problems
    assert not any("'jira'" in p for p in problems)  # written with its colons, it is still the emoji jira


def test_a_coordinators_mistakes_each_get_one_line(tmp_path: Path) -> None:
    base = "name: flow\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 8000}\n"
    assert any(p.startswith("coordinator: must be one of") for p in _problems(tmp_path, base + "coordinator: bash\n"))
    problems = _problems(tmp_path, base + "coordinator: script\nscript: not a function\n")
    assert "script: coordinator: script needs script: module:function (in the tools path); got 'not a function'" in (
        problems
    )
    assert any(p.startswith("script: is the function of coordinator: script") for p in _problems(
        tmp_path, base + "script: jobs:run\n"))  # fmt: skip
