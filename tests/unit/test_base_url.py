"""OPENAI_BASE_URL without its scheme (``localhost:11434/v1``) is refused as the model opens, one line, before any
call: every call failed "unsupported protocol" after its retries. An http(s) URL, or none, is taken."""

from __future__ import annotations

import pytest
from agent_runtime.config import check_base_url
from agent_runtime.errors import ConfigError
from agent_runtime.models import OpenAIChatModel
from hypothesis import given, settings
from hypothesis import strategies as st

HOST = st.sampled_from(["localhost", "127.0.0.1", "ollama.internal", "api.example.com", "[::1]"])
PORT = st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}"))
PATH = st.sampled_from(["", "/", "/v1", "/openai/v1"])


@settings(max_examples=60, deadline=None)
@given(
    host=HOST,
    port=PORT,
    path=PATH,
    scheme=st.sampled_from(["", "ftp://", "ws://", "localhost:", "HTTP://", "https://"]),
)
def test_only_an_http_url_is_taken(host: str, port: str, path: str, scheme: str) -> None:
    url = f"{scheme}{host}{port}{path}"
    if scheme.lower() in ("http://", "https://"):
        check_base_url({"OPENAI_BASE_URL": url})
    else:
        with pytest.raises(ConfigError, match=r"^OPENAI_BASE_URL=.*: not an http\(s\) URL"):
            check_base_url({"OPENAI_BASE_URL": url})


def test_the_model_refuses_it_as_it_opens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:11434/v1")
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL='localhost:11434/v1'"):
        OpenAIChatModel("qwen3")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    assert OpenAIChatModel("qwen3").endpoint == "http://localhost:11434/v1/"
    check_base_url({})  # unset: the client's default, OpenAI
