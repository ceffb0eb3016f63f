"""Find and load workflow files: by name in the workflows folder, or by path."""

from __future__ import annotations

import copy
import difflib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from .exceptions import Problem, WorkflowError
from .schema import Workflow, parse_workflow

SUFFIXES = (".yaml", ".yml")


class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml's parser when the wheel has it: ~5x faster at cold start), but a key given
    twice is an error instead of a silent overwrite."""


def _mapping_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} appears twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def available_workflows(directory: Path) -> list[str]:
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.iterdir() if p.suffix in SUFFIXES and p.is_file())


def resolve_workflow_path(ref: str, directory: Path) -> Path:
    """``ref`` is a path to a YAML file, or a workflow name looked up in ``directory``."""
    as_path = Path(ref)
    if as_path.suffix in SUFFIXES or "/" in ref or as_path.is_file():
        if as_path.is_file():
            return as_path
        raise WorkflowError([Problem(ref, "(file)", "no such workflow file")])
    for suffix in SUFFIXES:
        candidate = directory / f"{ref}{suffix}"
        if candidate.is_file():
            return candidate
    raise WorkflowError([Problem(str(directory / f"{ref}.yaml"), "(file)", unknown_workflow(ref, directory))])


def unknown_workflow(name: str, directory: Path) -> str:
    """What to say of a workflow name the folder lacks: the name it most likely meant (a typo), else the names."""
    meant = meant_workflow(name, directory)
    if meant is not None:
        return f"no such workflow {name!r}; did you mean {meant!r}?"
    return f"no such workflow {name!r}; available: {', '.join(available_workflows(directory)) or 'none'}"


def meant_workflow(name: str, directory: Path) -> str | None:
    """The workflow a name not in the folder most likely meant (``incident-helpr``: ``incident-helper``)."""
    return closest(name, available_workflows(directory))


def closest(name: str, known: Sequence[str]) -> str | None:
    """The known name ``name`` is most likely a slip for; None for a known name, or one like none of them."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return close[0] if close and close[0] != name else None


def load_workflow(
    ref: str,
    directory: Path,
    *,
    skill_names: Collection[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Workflow:
    """Load and validate a workflow by name or path (``skill_names``: the skills that exist).

    ``overrides`` sets dotted keys before validation (``{"context.context_budget": 8000}``), as if the file said
    so; ``None`` as a value removes the key. Evals use it to compare settings without editing the file."""
    path = resolve_workflow_path(ref, directory)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_StrictLoader)  # a SafeLoader subclass
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(document)"
        reason = getattr(error, "problem", None) or str(error)
        raise WorkflowError([Problem(str(path), where, f"invalid YAML: {reason}")]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise WorkflowError([Problem(str(path), "(file)", f"cannot read: {error}")]) from None
    if overrides:
        data = apply_overrides(data, overrides, str(path))
    named = data.get("name") if isinstance(data, Mapping) else None
    misnamed = isinstance(named, str) and named and named != path.stem
    wrong = [Problem(str(path), "name", f"must equal the file name {path.stem!r}")] if misnamed else []
    try:  # every problem of the file at once: the schema's and its name's
        workflow = parse_workflow(data, file=str(path), base_dir=path.parent, skill_names=skill_names)
    except WorkflowError as error:
        raise WorkflowError([*wrong, *error.problems], error.tools) from None
    if wrong:
        raise WorkflowError(wrong, workflow.tools)
    return replace(workflow, path=path, prompt_path=workflow.prompt_path or path)


def apply_overrides(data: Any, overrides: Mapping[str, Any], file: str) -> dict[str, Any]:
    """A copy of the workflow document with each dotted key set (or removed when its value is None).

    ``prompt`` and ``prompt_file`` exclude each other: setting one removes the other."""
    if not isinstance(data, Mapping):
        raise WorkflowError([Problem(file, "(document)", "must be a mapping of keys to values")])
    result: dict[str, Any] = copy.deepcopy(dict(data))
    for key, value in overrides.items():
        parts = key.split(".")
        if not all(parts):
            raise WorkflowError(
                [Problem(file, key, "an override's key is a dotted path, such as limits.max_tool_calls")]
            )
        if parts == ["prompt"] or parts == ["prompt_file"]:
            result.pop("prompt_file" if parts == ["prompt"] else "prompt", None)
        node = result
        for i, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                where = ".".join(parts[: i + 1])
                raise WorkflowError([Problem(file, key, f"cannot set inside {where}: it is not a mapping")])
            node = child
        if value is None:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value
    return result
