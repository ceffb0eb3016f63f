"""``@tool``: a Python function becomes a model-callable tool, its JSON schema built from hints and docstring."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, get_type_hints, overload

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..errors import ConfigError, ToolError
from ..run_context import RunContext

_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


@dataclass(frozen=True, slots=True)
class Tool:
    """A callable the model may use. Build with :func:`tool`."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    args_model: type[BaseModel] | None  # None: an external tool, called as fn(arguments, context)
    mutating: bool = False  # changes the outside world: recorded before and after, never replayed on resume
    offload: bool = True  # large results may become virtual files (False for tools that budget their own output)
    pinned: bool = False  # results are never masked and are carried verbatim through compaction (skills)
    maskable: bool = True  # a used result may give way to a pointer; False: it stays until compaction (a conclusion)
    context_param: str | None = None  # name of the parameter that receives the RunContext
    approval: str = "never"  # ask a person first: "always", "mutating" (if this tool is) or "never" (the runtime's own)
    timeout: float | None = None  # seconds a call may take (and never past the run's deadline); None: unbounded
    stub: bool = False  # an eval's stand-in: it replaces the tool of its name, wherever that one comes from
    deferred: bool = False  # its schema is not sent until a search finds it (toolsearch); callable all the same
    as_requester: str | None = None  # an oauth provider: called with the requester's own token (identity)

    def needs_approval(self) -> bool:
        return self.approval == "always" or (self.approval == "mutating" and self.mutating)

    def spec(self) -> dict[str, Any]:
        """The Chat Completions ``tools`` entry."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def check(self, arguments: dict[str, Any]) -> BaseModel | None:
        """``arguments`` as the tool takes them (None for an external tool), or a ToolError naming what does not
        fit its parameters; nothing is called (a coordinator script's call is refused before it is a step)."""
        if self.args_model is None:
            check_arguments(self.parameters, arguments)
            return None
        try:
            return self.args_model.model_validate(arguments)
        except ValidationError as error:
            raise ToolError(_describe_validation(error)) from None

    def invoke(self, arguments: dict[str, Any], context: RunContext | None = None) -> str:
        """Validate ``arguments``, call the function, and render its result as text for the model."""
        parsed = self.check(arguments)
        if parsed is None:
            return render_result(self.fn(arguments, context))
        kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        if self.context_param:
            kwargs[self.context_param] = context
        return render_result(self.fn(**kwargs))


def external_tool(
    name: str,
    description: str,
    parameters: dict[str, Any],
    call: Callable[[dict[str, Any], RunContext | None], Any],
    *,
    mutating: bool = False,
    redact: Callable[[str], str] | None = None,
) -> Tool:
    """A tool whose JSON schema comes from elsewhere (an MCP server, an OpenAPI operation): the arguments are
    checked against the schema, then passed as one dict. ``redact`` takes the source's secrets out of everything
    the tool returns or raises (a server that echoes its Authorization header), before the model, the history or
    the run record sees it."""
    if not name or len(name) > 64 or not set(name) <= _NAME_OK:
        raise ConfigError(f"tool name {name!r}: use 1-64 letters, digits, '_' or '-' (Chat Completions' rule)")
    schema = {"type": "object", "properties": {}, **parameters}
    return Tool(
        name, description.strip() or name, schema, _redacted(call, redact) if redact else call, None, mutating=mutating
    )


def _redacted(
    call: Callable[[dict[str, Any], RunContext | None], Any], redact: Callable[[str], str]
) -> Callable[[dict[str, Any], RunContext | None], str]:
    def guarded(arguments: dict[str, Any], ctx: RunContext | None) -> str:
        try:
            return redact(render_result(call(arguments, ctx)))
        except ToolError as error:
            raise type(error)(redact(str(error))) from None

    return guarded


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """The model's arguments against the tool's JSON schema: each problem named, for the model to fix."""
    import jsonschema  # only external tools need it (it comes with the mcp package)

    validator = jsonschema.Draft202012Validator(schema)
    problems = [
        f"{'.'.join(str(p) for p in error.absolute_path) or '(arguments)'}: {error.message[:200]}"
        for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))[:5]
    ]
    if problems:
        raise ToolError("invalid arguments: " + "; ".join(problems))


def render_result(value: Any) -> str:
    """Text as is; anything else as JSON (falling back to ``str`` for odd types)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "done"
    return json.dumps(value, default=str, ensure_ascii=False)


def _describe_validation(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        parts.append(f"{where}: {item['msg']}")
    return "invalid arguments: " + "; ".join(parts)


@overload
def tool(
    fn: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = False,
    offload: bool = True,
    pinned: bool = False,
    maskable: bool = True,
) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = False,
    offload: bool = True,
    pinned: bool = False,
    maskable: bool = True,
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = False,
    offload: bool = True,
    pinned: bool = False,
    maskable: bool = True,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a :class:`Tool`.

    The description is the docstring's summary and body; each parameter's description comes from its
    ``Args:`` entry. A parameter annotated with ``RunContext`` receives the run's context and is hidden
    from the model.
    """

    def build(func: Callable[..., Any]) -> Tool:
        return replace(
            _build(func, name=name, description=description, mutating=mutating),
            offload=offload,
            pinned=pinned,
            maskable=maskable,
        )

    return build(fn) if fn is not None else build


def _build(func: Callable[..., Any], *, name: str | None, description: str | None, mutating: bool) -> Tool:
    tool_name = name or func.__name__
    if not tool_name or len(tool_name) > 64 or not set(tool_name) <= _NAME_OK:
        raise ConfigError(f"tool name {tool_name!r}: use 1-64 letters, digits, '_' or '-'")
    doc = docstring_parser.parse(inspect.getdoc(func) or "")
    param_docs = {p.arg_name: p.description or "" for p in doc.params}
    hints = get_type_hints(func)
    fields: dict[str, Any] = {}
    context_param = None
    for param in inspect.signature(func).parameters.values():
        annotation = hints.get(param.name, Any)
        if annotation is RunContext:
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigError(f"tool {tool_name!r}: *args/**kwargs cannot be described to the model")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, _field(default, param_docs.get(param.name)))
    args_model = create_model(f"{tool_name}_args", __config__=ConfigDict(extra="forbid"), **fields)
    text = description or "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
    if not text:
        raise ConfigError(f"tool {tool_name!r} needs a docstring: it is the model's only guide")
    return Tool(
        name=tool_name,
        description=text.strip(),
        parameters=_clean_schema(args_model.model_json_schema()),
        fn=func,
        args_model=args_model,
        mutating=mutating,
        context_param=context_param,
    )


def _field(default: Any, doc: str | None) -> Any:
    return Field(default, description=doc) if doc else Field(default)


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    # Titles are noise for the model and cost tokens on every call.
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("properties", {})
    return schema
