"""Secrets in a declared source's headers or URL: ``${secret:NAME}``.

A value comes from the integrations secret (Secrets Manager, cached) in AWS and from the upper-case environment
variable locally. It goes into HTTP headers (or a URL) and nowhere else: every error text a source builds passes
through its ``Redactor`` before the model, a log or the run record can see it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from ..redaction import Redactor, encodings
from ..workflows.tools import SECRET_REF
from .exceptions import SecretMissingError

Secrets = Callable[[str], str | None]
__all__ = ["Redactor", "Secrets", "encodings", "env_secret", "expand", "expand_headers"]


def env_secret(name: str) -> str | None:
    """Locally a secret is the upper-case environment variable (``notion_token`` → ``NOTION_TOKEN``)."""
    return os.environ.get(name.upper()) or None


def expand(value: str, secrets: Secrets, where: str, used: list[str]) -> str:
    """``${secret:NAME}`` replaced by its value; a missing one is a configuration error naming the tool."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        secret = secrets(name)
        if not secret:
            raise SecretMissingError(
                f"{where}: secret {name!r} is not set (the integrations secret's key {name!r} in AWS, "
                f"the environment variable {name.upper()} locally)"
            )
        used.append(secret)
        return secret

    return SECRET_REF.sub(one, value)


def expand_headers(headers: Mapping[str, str], secrets: Secrets, where: str, used: list[str]) -> dict[str, str]:
    return {key: expand(value, secrets, f"{where} header {key}", used) for key, value in headers.items()}
