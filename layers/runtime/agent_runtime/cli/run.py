"""``agent-runtime run WORKFLOW --message …``: one run on the local store, the answer on stdout."""

from __future__ import annotations

import argparse
import textwrap

from ..config import RuntimeConfig
from .common import Commands, exit_codes_line

RUN_EPILOG = """\
examples:
  agent-runtime run document-feedback --message "Review this" --file spec.md --file old-spec.md
  agent-runtime run ./my-workflow.yaml --message "hello" --json
  agent-runtime run document-feedback --thread PROJ-123 --message "and now?"
  agent-runtime run document-feedback --message "chart the latencies" --file log.txt --out-dir out/

""" + textwrap.fill(exit_codes_line() + " (all of them: docs/cli.md)", 110)


def add(commands: Commands) -> None:
    run = commands.add_parser(
        "run",
        help="run a workflow on a message and print the final answer",
        description="Run a workflow on a message and print the final answer on stdout. "
        "A live trace (turns, tokens used/available, tool calls) goes to stderr.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("workflow", metavar="WORKFLOW", help="a workflow name in the workflows folder, or a YAML path")
    run.add_argument(
        "-m",
        "--message",
        required=True,
        help="the user's message; '-' reads it from stdin, '@FILE' from a file (a pasted log can be longer than a "
        "command line may hold; a text file: a document goes with --file)",
    )
    run.add_argument(
        "-f", "--file", dest="files", action="append", default=[], metavar="PATH", help="attach a file (repeatable)"
    )
    run.add_argument(
        "-t",
        "--thread",
        metavar="ID",
        help="continue (or start) a conversation thread stored under AGENT_STATE_DIR; without it, the run starts "
        "a thread named by its run id (-t RUN_ID goes on with it; a run id mistyped, naming nothing stored, is refused "
        "with the id meant)",
    )
    _add_outputs(run)
    run.set_defaults(handler=_cmd_run)


def _add_outputs(run: argparse.ArgumentParser) -> None:
    """What the run prints and writes, and what it may do on its own (approvals, spend)."""
    run.add_argument("--json", action="store_true", help="print the run record as JSON instead of the answer")
    run.add_argument("--out-dir", metavar="DIR", help="save the files the run's Python wrote here")
    run.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="the answer and errors only: no live trace, warnings or notes on stderr but the embedded demo "
        "model's (its answers are canned) and a wait for the thread's turn under way; the tools a run here goes "
        "without, workflows validate says",
    )
    run.add_argument(
        "--footer",
        action="store_true",
        help="end the answer with the line a Slack or JIRA reply ends with, citing the workflow "
        "(a link with AGENT_WORKFLOWS_URL, else the workflow file)",
    )
    run.add_argument(
        "--approve",
        choices=("all", "none"),
        help="calls that need approval (the workflow's tools.approval): run them all, or deny them all; "
        "default: ask y/n in a terminal, deny when not interactive",
    )
    run.add_argument(
        "--max-cost",
        type=float,
        metavar="DOLLARS",
        help="this run's spend limit instead of the workflow's limits.max_cost (to go on with a thread that "
        "stopped at its limit: --thread ID --message 'go on' --max-cost 2)",
    )


def _cmd_run(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from .one_run import run_workflow  # the runtime (openai, the context engine) loads when a run starts

    return run_workflow(args, config)
