"""The demo model answers a script's ``run.ask(..., schema=...)`` with JSON of the schema's shape: for any schema
of the kinds scripts ask for (objects, arrays, strings with bounds, numbers with bounds, booleans, enums, nullable
types), the answer validates, and is made from the prompt's lines."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from agent_runtime.testing.shaped import shaped, shaped_reply
from hypothesis import given, settings
from hypothesis import strategies as st

LINES = st.lists(st.text(alphabet="abc #12", min_size=1, max_size=12).filter(str.strip), max_size=6)


def leaves() -> st.SearchStrategy[dict[str, Any]]:
    bounds = st.integers(0, 5)
    return st.one_of(
        st.builds(lambda lo, extra: {"type": "string", "minLength": lo, "maxLength": lo + extra}, bounds, bounds),
        st.builds(lambda lo, extra: {"type": "integer", "minimum": lo, "maximum": lo + extra}, bounds, bounds),
        st.just({"type": "number"}),
        st.just({"type": "boolean"}),
        st.just({"type": ["string", "null"]}),
        st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=3, unique=True).map(lambda e: {"enum": e}),
    )


SCHEMAS = st.recursive(
    leaves(),
    lambda inner: st.one_of(
        st.builds(lambda items, lo: {"type": "array", "items": items, "minItems": lo}, inner, st.integers(0, 3)),
        st.dictionaries(st.sampled_from(["text", "count", "items", "ok"]), inner, min_size=1).map(
            lambda props: {"type": "object", "properties": props, "required": sorted(props)}
        ),
    ),
    max_leaves=6,
)


@settings(max_examples=150)
@given(schema=SCHEMAS, lines=LINES)
def test_every_answer_fits_its_schema(schema: dict[str, Any], lines: list[str]) -> None:
    jsonschema.validate(shaped(schema, lines), schema)


def test_the_answer_is_made_from_the_prompts_lines() -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string"}, "count": {"type": "integer"},
                                               "items": {"type": "array", "items": {"type": "string"}}}}  # fmt: skip
    answer = json.loads(shaped_reply("Summarise: #12 merged\n#13 open", schema).text or "")
    assert answer == {"text": "2 items: #12 merged; #13 open.", "count": 2, "items": ["#12 merged", "#13 open"]}
