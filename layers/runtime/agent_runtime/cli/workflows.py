"""``agent-runtime workflows list|validate``."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import RuntimeConfig
from ..errors import ConfigError
from ..models.prices import unpriced_warning
from .common import EXIT_USAGE, Commands, check_workflow

if TYPE_CHECKING:  # loaded by the commands that read workflows (yaml, jsonschema; validate: the runtime's tools)
    from ..skills import SkillLibrary
    from ..toolsets.build import Findings
    from ..workflows import Workflow
    from ..workflows.tools import ToolSettings


# Said when the tools section (or the whole file) does not read: its tools cannot be checked in this pass.
UNCHECKED = "more may follow once these are fixed (the tools are checked when the tools section reads)"


def add(commands: Commands) -> None:
    workflows = commands.add_parser(
        "workflows", help="list or validate workflow files", description="List or validate workflow files."
    )
    wf_commands = workflows.add_subparsers(dest="workflows_command", metavar="COMMAND", required=True)
    wf_list = wf_commands.add_parser(
        "list",
        help="list the workflows in the workflows folder",
        description="List the workflows in the workflows folder (AGENT_WORKFLOWS_DIR) with their descriptions.",
    )
    wf_list.set_defaults(handler=_cmd_list)
    wf_validate = wf_commands.add_parser(
        "validate",
        help="validate workflows; exit 2 with one line per problem (file: key: why)",
        description="Validate workflow files. With no argument, validates every workflow in the workflows folder. "
        "Prints every problem in one pass, one line each (file: key: why) on stderr — the tools checked too, "
        "unless the tools section itself does not read, when a last line says "
        "more may follow once these are fixed — and exits 2 if any workflow is invalid, or what a run here would "
        "refuse (a misspelt coordinator script, a limit in dollars on "
        "AGENT_MODEL's model when it has no known price); then warns (file: warning: key: why) of what this "
        "machine lacks — a tools section's "
        "secrets (a run fails until they are set), a built-in tool's credentials (a run goes without it), the "
        "secrets serve needs for the triggers, a schedule's answer token — and when another workflow of the folder "
        "takes the app's direct messages first (naming it), without changing the exit code.",
    )
    wf_validate.add_argument("refs", nargs="*", metavar="WORKFLOW", help="workflow names or YAML paths")
    wf_validate.add_argument(
        "--offline",
        action="store_true",
        help="check the files alone (a CI step without the tools' dependencies): the workflow, its prompt file, local "
        "OpenAPI documents, and the Python tools' and script's source, read but never imported (none of their code "
        "runs); no MCP server reached, no remote document fetched, no secret, credential or AGENT_MODEL used",
    )
    wf_validate.set_defaults(handler=_cmd_validate)
    wf_token = wf_commands.add_parser(
        "webhook-token",
        help="print the verification tokens Notion posted to a workflow's webhook",
        description="Print the verification tokens Notion posted to the workflow's route (newest first, with when "
        "they came): paste the one sent when you created the subscription into Notion's Verify dialog, then put "
        "it in the integrations secret under the workflow's triggers.webhook.secret key. Reads the store the "
        "stack writes (AGENT_TABLE and AGENT_BUCKET set) or the local one.",
    )
    wf_token.add_argument("workflow", metavar="WORKFLOW", help="the workflow's name (its route: /hooks/WORKFLOW)")
    wf_token.set_defaults(handler=_cmd_webhook_token)


def _cmd_list(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..skills import SkillLibrary
    from ..workflows import WorkflowError, available_workflows, load_workflow

    names = SkillLibrary(config.skills_dir).names()
    for name in available_workflows(config.workflows_dir):
        try:
            workflow = load_workflow(name, config.workflows_dir, skill_names=names)
        except WorkflowError:
            print(f"{name:<24} (invalid: run 'agent-runtime workflows validate')")
            continue
        print(f"{name:<24} {workflow.description}")
        for schedule in workflow.triggers.schedules:  # when it runs by itself, and where its answer goes
            upcoming = schedule.next_after(datetime.now(UTC))
            when = upcoming.strftime("%Y-%m-%d %H:%M %Z") if upcoming else "never"
            print(
                f"{'':<24} {schedule.name}: {schedule.expression} {schedule.timezone}, next {when}"
                f" -> {schedule.answer_to}"
            )
    return 0


def _cmd_webhook_token(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..triggers.handshakes import Handshakes
    from .common import runs_store, store_location

    tokens = Handshakes(runs_store(config).store).tokens(args.workflow)
    if not tokens:
        check_workflow(args.workflow, config, strict=False)  # none for a typo of a workflow here: say so
        print(
            f"agent-runtime: no verification token for {args.workflow!r} in {store_location(config)}: create the "
            f"subscription in Notion with the URL .../hooks/{args.workflow} (tokens are kept 7 days)",
            file=sys.stderr,
        )
        return 1
    for entry in tokens:
        when = datetime.fromtimestamp(float(entry.get("at") or 0), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        print(f"{when}  {entry['token']}")
    return 0


def _cmd_validate(args: argparse.Namespace, config: RuntimeConfig) -> int:
    """Every problem of every workflow named, in one pass: errors (exit 2) and warnings, what a run here goes
    without or what serve and the stack would need (exit unchanged)."""
    from ..skills import SkillLibrary
    from ..workflows import available_workflows

    refs = args.refs or available_workflows(config.workflows_dir)
    if not refs:
        raise ConfigError(f"no workflows found in {config.workflows_dir}")
    library = SkillLibrary(config.skills_dir)
    folder = _deployed_beside(config, library)
    failed = sum(not _validate(ref, config, library, folder, offline=args.offline) for ref in refs)
    return EXIT_USAGE if failed else 0


def _deployed_beside(config: RuntimeConfig, library: SkillLibrary) -> list[Workflow]:
    """The workflows folder's valid workflows, which a deployment routes events among (an invalid one is said
    where it is validated)."""
    from ..workflows import WorkflowError, available_workflows, load_workflow

    found = []
    for name in available_workflows(config.workflows_dir):
        try:
            found.append(load_workflow(name, config.workflows_dir, skill_names=library.names()))
        except WorkflowError:
            continue
    return found


def _validate(ref: str, config: RuntimeConfig, library: SkillLibrary, folder: list[Workflow], *, offline: bool) -> bool:
    from ..deployment import deployed
    from ..sources.shadowing import direct_messages_shadowed
    from ..workflows import WorkflowError, load_workflow

    try:
        workflow = load_workflow(ref, config.workflows_dir, skill_names=library.names())
    except WorkflowError as error:
        print(error, file=sys.stderr)
        if error.tools is not None and error.problems:  # its tools are checked all the same: every problem at once
            stand_in = _stand_in(Path(error.problems[0].file), error.tools)
            for problem in _checked(stand_in, library, offline=offline).errors:
                print(f"{stand_in.path}: {problem}", file=sys.stderr)
        elif any(problem.key != "(file)" for problem in error.problems):  # a file read, its tools not checkable
            print(f"{error.problems[0].file}: {UNCHECKED}", file=sys.stderr)
        return False
    if not offline:  # as a run here would run it: on AGENT_MODEL's model, when set
        workflow = deployed(workflow, config)
    findings = _checked(workflow, library, offline=offline)
    errors = [*findings.errors, *_unpriced(workflow, config, offline=offline)]
    for problem in errors:
        print(f"{workflow.path}: {problem}", file=sys.stderr)
    if not errors:
        print(f"ok  {workflow.path}")
    warnings = [*findings.warnings, *_credentials(workflow, config, offline=offline)]
    warnings += direct_messages_shadowed(workflow, folder)
    unpriced = None if errors else unpriced_warning(workflow.model.name, workflow.model.prices)
    for warning in [*warnings, *([unpriced] if unpriced else [])]:
        print(f"{workflow.path}: warning: {warning}", file=sys.stderr)
    return not errors


def _checked(workflow: Workflow, library: SkillLibrary, *, offline: bool) -> Findings:
    """The tools section's problems and the coordinator script's. Offline, the Python tools and the script are
    read from their source, not imported (``toolsets/python_source.py``: a CI step without their dependencies
    installed runs none of their code); else imported, as a run imports them."""
    from ..runtime import default_tools
    from ..toolsets import ToolEnv, validate_tools
    from ..toolsets.build import Findings

    env = ToolEnv.from_env()
    taken = [*default_tools(workflow, library).names(), "python", "subagent"]  # the runtime's own tool names
    refs = [(ref, f"tools.python {ref!r}", True) for ref in workflow.tools.python if offline]
    refs += [(workflow.script, f"script {workflow.script!r}", False)] if workflow.script else []
    if offline:
        workflow = replace(workflow, tools=replace(workflow.tools, python=()))
    found = validate_tools(workflow, env, taken, offline=offline)
    return Findings(
        [*found.errors, *filter(None, (_ref(*ref, env.tools_path, offline) for ref in refs))], found.warnings
    )


def _ref(ref: str, where: str, tool: bool, path: tuple[str, ...], offline: bool) -> str | None:
    """A Python reference's problem (the script's, or offline a tool's): from its source, or by importing it."""
    from ..toolsets.python import script_function
    from ..toolsets.python_source import source_problem

    if offline:
        return source_problem(ref, where, path, tool=tool)
    try:
        script_function(ref, path)
    except ConfigError as error:
        return str(error)
    return None


def _unpriced(workflow: Workflow, config: RuntimeConfig, *, offline: bool) -> list[str]:
    """What a run here refuses before it starts: a limit in dollars on AGENT_MODEL's model, whose price is not
    known (the file's own model is checked with the file). Offline: the file alone, AGENT_MODEL aside."""
    from ..workflows.schema import unpriced_limit

    via = " (AGENT_MODEL)" if config.model_override and not offline else ""
    found = unpriced_limit(workflow.model, workflow.limits, via=via)
    return [": ".join(found)] if found else []


def _stand_in(path: Path, tools: ToolSettings) -> Workflow:
    """A workflow file that does not validate, as far as its tools go: its tools section on defaults."""
    from ..workflows import ModelSettings, Workflow

    return Workflow(path.stem, "", "", ModelSettings("unknown", 1), tools=tools, path=path)


def _credentials(workflow: Workflow, config: RuntimeConfig, *, offline: bool) -> list[str]:
    """What the workflow's triggers would need from this machine (offline: the file alone, nothing asked)."""
    from ..triggers.config import TriggerConfig
    from ..workflows.credentials import missing_credentials

    if offline:
        return []
    triggers = TriggerConfig.from_env()
    lacking = missing_credentials(
        workflow,
        triggers.secret,
        jira_site=bool(triggers.jira_base_url and triggers.jira_email),
        api_url=config.api_url,
        stack=bool(triggers.secrets_name),
    )
    return [f"{key}: {why}" for key, why in lacking]
