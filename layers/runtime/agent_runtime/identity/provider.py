"""The stack as an OAuth 2.0 client of one provider: the authorisation request (code with PKCE, RFC 7636), the code
exchanged for tokens, a refresh, a revocation (RFC 7009) — over HTTP, each answer bounded and read as JSON.

Nothing a provider says reaches a person, a log or the model but its ``error`` and ``error_description``, cut and
redacted of what was sent (a hostile server may echo the code, the verifier, the refresh token or the secret).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets as randomness
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2

from ..capped import read_capped
from ..errors import AgentRuntimeError
from ..redaction import Redactor
from ..workflows.oauth import OAuthProvider

TIMEOUT_SECONDS = 10.0
MAX_ANSWER_BYTES = 64 * 1024
REFUSED = ("invalid_grant", "unauthorized_client", "invalid_client", "access_denied")


class ProviderError(AgentRuntimeError):
    """The provider could not be reached or did not answer as OAuth says (down, 5xx, not JSON): try again later."""


class GrantRefused(ProviderError):
    """The provider refused the grant (``invalid_grant``: revoked, expired, used): the person must connect again."""


@dataclass(frozen=True, slots=True)
class TokenSet:
    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None  # epoch seconds; None: the provider did not say
    scope: str = ""

    def values(self) -> list[str]:
        return [value for value in (self.access_token, self.refresh_token) if value]


def pkce_pair() -> tuple[str, str]:
    """A code verifier (43 characters of 256 random bits) and its S256 challenge."""
    verifier = randomness.token_urlsafe(32)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


class ProviderClient:
    """One provider as the workflow declares it, with its client secret (None: a public client, PKCE alone)."""

    def __init__(self, provider: OAuthProvider, secret: str | None, *, clock: Callable[[], float] = time.time) -> None:
        self.provider, self.secret, self.clock = provider, secret, clock

    def authorize_url(self, redirect_uri: str, state: str, challenge: str) -> str:
        query = {
            "response_type": "code",
            "client_id": self.provider.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        } | ({"scope": " ".join(self.provider.scopes)} if self.provider.scopes else {})
        joiner = "&" if "?" in self.provider.authorize_url else "?"
        return f"{self.provider.authorize_url}{joiner}{urllib.parse.urlencode(query)}"

    def exchange(self, code: str, verifier: str, redirect_uri: str) -> TokenSet:
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
        return self._tokens(form | {"redirect_uri": redirect_uri}, sent=[code, verifier])

    def refresh(self, refresh_token: str) -> TokenSet:
        """New tokens; the refresh token kept when the provider does not rotate it."""
        tokens = self._tokens({"grant_type": "refresh_token", "refresh_token": refresh_token}, sent=[refresh_token])
        if tokens.refresh_token:
            return tokens
        return TokenSet(tokens.access_token, tokens.token_type, refresh_token, tokens.expires_at, tokens.scope)

    def revoke(self, token: str, hint: str) -> None:
        """Revoke ``token`` at the provider (its grant goes with a refresh token); nothing when it has no endpoint."""
        if self.provider.revoke_url:
            self._post(self.provider.revoke_url, {"token": token, "token_type_hint": hint}, sent=[token])

    def _tokens(self, form: dict[str, str], *, sent: list[str]) -> TokenSet:
        answer = self._post(self.provider.token_url, form, sent=sent)
        token = answer.get("access_token")
        if not isinstance(token, str) or not token:
            raise ProviderError(f"{self.provider.name}'s token endpoint answered without an access_token")
        expires = answer.get("expires_in")
        lifetime = float(expires) if isinstance(expires, int | float) and not isinstance(expires, bool) else None
        refresh = answer.get("refresh_token")
        return TokenSet(
            token,
            str(answer.get("token_type") or "Bearer"),
            refresh if isinstance(refresh, str) and refresh else None,
            self.clock() + lifetime if lifetime is not None and lifetime > 0 else None,
            str(answer.get("scope") or ""),
        )

    def _post(self, url: str, form: dict[str, str], *, sent: list[str]) -> dict[str, Any]:
        redact = Redactor([*sent, *([self.secret] if self.secret else [])])
        auth = (self.provider.client_id, self.secret) if self.secret else None
        body = form if auth else form | {"client_id": self.provider.client_id}
        where = f"{self.provider.name}'s {urllib.parse.urlsplit(url).path or '/'}"
        try:
            with (
                httpx2.Client(timeout=TIMEOUT_SECONDS, follow_redirects=False) as client,
                client.stream("POST", url, data=body, auth=auth, headers={"Accept": "application/json"}) as response,
            ):
                data = read_capped(response, MAX_ANSWER_BYTES, ProviderError, f"the answer of {where}")
                status = response.status_code
        except httpx2.HTTPError as error:
            raise ProviderError(f"{where} could not be reached ({type(error).__name__})") from None
        answer = _json(data)
        if status >= 400 or "error" in answer:
            said = _said(answer, redact)
            refused = status in (400, 401) and str(answer.get("error")) in REFUSED
            raise (GrantRefused if refused else ProviderError)(f"{where} answered HTTP {status}{said}")
        return answer


def _json(data: bytes) -> dict[str, Any]:
    """The answer as JSON (a form-encoded one, as some providers send by default, read as a form)."""
    if not data.strip():
        return {}
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        value = dict(urllib.parse.parse_qsl(data.decode("utf-8", "replace"), max_num_fields=50))
    return value if isinstance(value, dict) else {}


def _said(answer: Mapping[str, Any], redact: Redactor) -> str:
    parts = [str(answer.get(key)) for key in ("error", "error_description") if answer.get(key)]
    return f": {redact(' — '.join(parts))[:200]}" if parts else ""
