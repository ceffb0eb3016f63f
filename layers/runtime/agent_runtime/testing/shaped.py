"""The demo model's answer to a script's ``run.ask(prompt, schema=...)``: JSON of the schema's shape, made from the
prompt's own text — its lines become a list's items, their count a number, the lines themselves the text of a
summary — so a script's asks work on the embedded model as they would on a real one (and change with the input).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from ..coordinator import JSON_NOTE
from ..messages import text_of
from .steps import Reply, ScriptedRequest

SUMMARY_CHARS = 300


def asked_schema(request: ScriptedRequest) -> tuple[str, dict[str, Any]] | None:
    """The prompt and the schema of an ask that wants JSON, or None."""
    if not request.messages or request.messages[-1]["role"] != "user":
        return None
    prompt, note, schema = text_of(request.messages[-1]).rpartition(JSON_NOTE)
    try:
        parsed = json.loads(schema) if note else None
    except ValueError:
        return None
    return (prompt, parsed) if isinstance(parsed, dict) else None


def shaped_reply(prompt: str, schema: dict[str, Any]) -> Reply:
    value = shaped(schema, _content(prompt))
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError:  # a schema beyond this model: said so, as the runtime would see it
        return Reply(text=f"(demo model) I could not fill this JSON Schema: {json.dumps(schema)[:200]}")
    return Reply(text=json.dumps(value, ensure_ascii=False))


def _content(prompt: str) -> list[str]:
    """The prompt's material: its lines after the instruction (``Summarise: ...``), without blanks."""
    first, colon, rest = prompt.partition(":")
    body = rest if colon and "\n" not in first else prompt
    return [line.strip(" -*\t") for line in body.strip().splitlines() if line.strip(" -*\t")]


def shaped(schema: dict[str, Any], lines: list[str], name: str = "") -> Any:
    """A value of ``schema`` (a JSON Schema), made from ``lines``."""
    for fixed in ("const", "default"):
        if fixed in schema:
            return schema[fixed]
    if schema.get("enum"):
        return schema["enum"][0]
    for options in ("anyOf", "oneOf", "allOf"):
        if schema.get(options):
            return shaped({**schema[options][0], **{k: v for k, v in schema.items() if k != options}}, lines, name)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object":
        fields = schema.get("properties", {})
        return {key: shaped(sub, lines, key) for key, sub in fields.items() if isinstance(sub, dict)}
    if kind == "array":
        return _items(schema, lines, name)
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", 0), schema.get("maximum", len(lines))
        return min(max(len(lines), low), high)
    if kind == "boolean":
        return bool(lines)
    if kind == "null":
        return None
    return _text(schema, lines)


def _items(schema: dict[str, Any], lines: list[str], name: str) -> list[Any]:
    items = schema.get("items", {}) if isinstance(schema.get("items"), dict) else {}
    count = max(schema.get("minItems", 0), min(len(lines), schema.get("maxItems", len(lines))))
    picked = [lines[index % len(lines)] if lines else "" for index in range(count)]
    return [shaped(items, [line] if line else [], name) for line in picked]


def _text(schema: dict[str, Any], lines: list[str]) -> str:
    """One line as it is; several as a summary: how many, and each, in the order given."""
    text = lines[0] if len(lines) == 1 else f"{len(lines)} items: " + "; ".join(lines) + "." if lines else "nothing"
    text = text[: schema.get("maxLength", SUMMARY_CHARS)]
    return text.ljust(schema.get("minLength", 0), ".")
