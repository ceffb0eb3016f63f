"""Runtime settings read once from the environment (frozen, built at cold start, never mid-request)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .errors import ConfigError

# Every environment variable the runtime reads. The OpenAI client reads its own
# OPENAI_BASE_URL / OPENAI_API_KEY; we only look at them to pick the embedded demo model.
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"
ENV_OPENAI_BASE_URL = "OPENAI_BASE_URL"
ENV_WORKFLOWS_DIR = "AGENT_WORKFLOWS_DIR"
ENV_LOG_PAYLOADS = "AGENT_LOG_PAYLOADS"
ENV_MODEL_MAX_ATTEMPTS = "AGENT_MODEL_MAX_ATTEMPTS"
ENV_MODEL_TIMEOUT = "AGENT_MODEL_TIMEOUT_SECONDS"
ENV_DEADLINE_MARGIN = "AGENT_DEADLINE_MARGIN_SECONDS"
ENV_STATE_DIR = "AGENT_STATE_DIR"
ENV_SKILLS_DIR = "AGENT_SKILLS_DIR"
ENV_API_URL = "AGENT_API_URL"  # set by the stack: run pages' links point there
ENV_RUN_PAGE_DAYS = "AGENT_RUN_PAGE_DAYS"
ENV_RUNS_CHANNEL = "AGENT_RUNS_CHANNEL"
ENV_WORKFLOWS_URL = "AGENT_WORKFLOWS_URL"
ENV_MODEL = "AGENT_MODEL"  # overrides every workflow's model.name (a deployment parameter)
ENV_SANDBOX = "AGENT_SANDBOX"  # local | lambda | off
ENV_SANDBOX_FUNCTION = "AGENT_SANDBOX_FUNCTION"
ENV_SANDBOX_DIR = "AGENT_SANDBOX_DIR"
SANDBOX_MODES = ("local", "lambda", "off")


def _repo_root() -> Path:
    # layers/runtime/agent_runtime/config.py -> repository root (editable install / tests).
    return Path(__file__).resolve().parents[3]


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def _number(env: Mapping[str, str], key: str, default: float) -> float:
    raw = env.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw!r} is not a number") from None
    if value < 0:
        raise ConfigError(f"{key}={raw!r} must not be negative")
    return value


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """Process-wide settings. Build once with :meth:`from_env`."""

    workflows_dir: Path
    state_dir: Path = Path(".agent-runtime")
    skills_dir: Path = Path("skills")
    workflows_url: str | None = None  # browsable URL of the workflows folder, for the link in replies
    log_payloads: bool = False
    model_max_attempts: int = 4
    model_timeout_seconds: float = 120.0
    deadline_margin_seconds: float = 30.0
    use_demo_model: bool = False
    model_override: str | None = None
    sandbox_mode: str = "local"  # where the python tool runs code: a local Node process, the Lambda function, off
    sandbox_function: str | None = None
    sandbox_dir: Path = Path("functions/sandbox")
    api_url: str | None = None  # the stack's API, where run pages are served (their links in answers)
    run_page_days: float = 7.0  # how long a run page's link opens it
    runs_channel: str | None = None  # a Slack channel that gets a line per finished run

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RuntimeConfig:
        """Read the settings from ``env`` (default: ``os.environ``)."""
        env = os.environ if env is None else env
        attempts = _number(env, ENV_MODEL_MAX_ATTEMPTS, 4)
        if attempts < 1:
            raise ConfigError(f"{ENV_MODEL_MAX_ATTEMPTS} must be at least 1")
        return cls(
            workflows_dir=Path(env.get(ENV_WORKFLOWS_DIR) or _repo_root() / "workflows"),
            state_dir=Path(env.get(ENV_STATE_DIR) or ".agent-runtime"),
            skills_dir=Path(env.get(ENV_SKILLS_DIR) or _repo_root() / "skills"),
            workflows_url=(env.get(ENV_WORKFLOWS_URL) or "").rstrip("/") or None,
            log_payloads=_truthy(env.get(ENV_LOG_PAYLOADS)),
            model_max_attempts=int(attempts),
            model_timeout_seconds=_number(env, ENV_MODEL_TIMEOUT, 120.0),
            deadline_margin_seconds=_number(env, ENV_DEADLINE_MARGIN, 30.0),
            use_demo_model=not (env.get(ENV_OPENAI_API_KEY) or env.get(ENV_OPENAI_BASE_URL)),
            model_override=(env.get(ENV_MODEL) or "").strip() or None,
            sandbox_mode=_sandbox_mode(env),
            sandbox_function=env.get(ENV_SANDBOX_FUNCTION) or None,
            sandbox_dir=Path(env.get(ENV_SANDBOX_DIR) or _repo_root() / "functions" / "sandbox"),
            api_url=(env.get(ENV_API_URL) or "").rstrip("/") or None,
            run_page_days=min(90.0, max(1 / 24, _number(env, ENV_RUN_PAGE_DAYS, 7.0))),
            runs_channel=(env.get(ENV_RUNS_CHANNEL) or "").strip() or None,
        )

    def usable_state_dir(self, *, create: bool = False) -> Path:
        """The local store's folder, checked before a command opens it: a file in its place (or above it) is one
        line naming AGENT_STATE_DIR, not a traceback from deep in a run. ``create``: made now (a command that
        writes), so a folder the OS refuses (read-only, under /proc) is said the same way."""
        where = f"{ENV_STATE_DIR}={self.state_dir}"
        existing = next((p for p in (self.state_dir, *self.state_dir.parents) if p.exists()), None)
        if existing is not None and not existing.is_dir():
            above = "" if existing == self.state_dir else f" ({existing} is a file)"
            raise ConfigError(f"{where}: not a directory{above}")
        if create:
            try:
                self.state_dir.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise ConfigError(f"{where}: cannot create it: {error.strerror or error}") from None
            if not os.access(self.state_dir, os.W_OK | os.X_OK):
                raise ConfigError(f"{where}: not writable")
        return self.state_dir


def check_base_url(env: Mapping[str, str]) -> None:
    """OPENAI_BASE_URL as the openai client needs it: an http(s) URL. Without its scheme (``localhost:11434/v1``)
    every call fails "unsupported protocol" after its retries: said once, before any."""
    url = (env.get(ENV_OPENAI_BASE_URL) or "").strip()
    if url and urlsplit(url).scheme.lower() not in ("http", "https"):
        raise ConfigError(f"{ENV_OPENAI_BASE_URL}={url!r}: not an http(s) URL (such as http://localhost:11434/v1)")


def _sandbox_mode(env: Mapping[str, str]) -> str:
    """``lambda`` when a function is named, else ``local``; an explicit AGENT_SANDBOX wins."""
    mode = (env.get(ENV_SANDBOX) or ("lambda" if env.get(ENV_SANDBOX_FUNCTION) else "local")).strip().lower()
    if mode not in SANDBOX_MODES:
        raise ConfigError(f"{ENV_SANDBOX}={mode!r}: use one of {', '.join(SANDBOX_MODES)}")
    if mode == "lambda" and not env.get(ENV_SANDBOX_FUNCTION):
        raise ConfigError(f"{ENV_SANDBOX}=lambda needs {ENV_SANDBOX_FUNCTION} (the sandbox function's name or ARN)")
    return mode
