"""``agent-runtime``: run workflows locally, check workflow files and skills, inspect runs, serve webhooks.

One module per command group, each with ``add(commands)``. The exit codes are ``common.EXIT_MEANINGS``; the
reference, docs/cli.md, is made from this parser (``scripts/cli_reference.py``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import cast

from .. import __version__, inert
from ..config import RuntimeConfig
from ..errors import AgentRuntimeError, ConfigError
from ..record import RunStatus
from . import evals, extract, logs, oauth, run, runs, sandbox, serve, skills, workflows
from ._parser import Parser
from .common import EXIT_CODES, EXIT_USAGE, Commands

__all__ = ["EXIT_CODES", "EXIT_USAGE", "build_parser", "main"]

DESCRIPTION = """\
Serverless agent runtime: run LLM workflows with a context engine built for huge files.

With neither OPENAI_API_KEY nor OPENAI_BASE_URL set, runs use the embedded demo model (a scripted
OpenAI-compatible server on 127.0.0.1). Set OPENAI_BASE_URL (and OPENAI_API_KEY if the endpoint needs
one) to use OpenAI, Azure-compatible gateways, Ollama, vLLM or LiteLLM."""

ENV_HELP = """\
environment:
  OPENAI_BASE_URL, OPENAI_API_KEY   the model endpoint (read by the openai client)
  AGENT_WORKFLOWS_DIR               where workflow names are looked up (default: the repo's workflows/)
  AGENT_STATE_DIR                   the local store: threads, checkpoints, run records, files (./.agent-runtime)
  AGENT_SKILLS_DIR                  the skills folder (default: the repo's skills/)
  AGENT_WORKFLOWS_URL               browsable URL of the workflows folder, for the prompt link in replies
  AGENT_LOG_PAYLOADS=1              show tool arguments in the trace (off by default)
  AGENT_MODEL_MAX_ATTEMPTS          attempts per model call on 429/5xx/timeouts (default: 4)
  AGENT_MODEL_TIMEOUT_SECONDS       timeout of one model call attempt (default: 120)
  AGENT_DEADLINE_MARGIN_SECONDS     in Lambda, suspend this long before the invocation ends (default: 30)
  AGENT_MODEL                       overrides every workflow's model.name (empty: each workflow's own)
  AGENT_SANDBOX                     where the python tool runs code: local (default), lambda, off
  AGENT_SANDBOX_FUNCTION            the sandbox Lambda function (name or ARN); implies AGENT_SANDBOX=lambda
  AGENT_SANDBOX_DIR                 the local sandbox (default: the repo's functions/sandbox)"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="agent-runtime",
        description=DESCRIPTION,
        epilog=ENV_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    commands = cast("Commands", parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    run.add(commands)
    workflows.add(commands)
    skills.add(commands)
    extract.add(commands)
    runs.add(commands)
    sandbox.add(commands)
    serve.add(commands)
    evals.add(commands)
    oauth.add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    Parser.given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    logs.configure(_log_level(args), structured=args.command == "serve")  # serve's lines are its logs
    try:
        config = RuntimeConfig.from_env()
        code = int(args.handler(args, config))
        sys.stdout.flush()  # here, not at exit: a closed pipe is then an error this function catches
        return code
    except ConfigError as error:  # inert: an error may echo a run's text (a stored name, a tool's words)
        print(f"agent-runtime: error: {inert.terminal(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except AgentRuntimeError as error:  # every error of the package is one line and an exit code, never a traceback
        print(f"agent-runtime: error: {inert.terminal(str(error))}", file=sys.stderr)
        return EXIT_CODES[RunStatus.FAILED]
    except KeyboardInterrupt:  # Ctrl-C outside a run's steps (a run's own is a stop: cli/running.py)
        print("agent-runtime: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `agent-runtime runs list | head -3`: the reader has what it wanted (as git, grep)
        _quiet_stdout()
        return 0


def _log_level(args: argparse.Namespace) -> int:
    """-v shows debug details; a command's -q (run, eval) its answer and errors only, so no logged warning either
    (what a run here goes without, such as a built-in tool lacking credentials, ``workflows validate`` says)."""
    if args.verbose:
        return logging.DEBUG
    return logging.ERROR if getattr(args, "quiet", False) else logging.WARNING


def _quiet_stdout() -> None:
    """Python flushes stdout at exit: onto a closed pipe that is one more BrokenPipeError, and a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
