"""The workflow's ``oauth:`` section: the OAuth 2.0 providers its tools may act through as the person who asked.

```yaml
oauth:
  providers:
    github:
      authorize_url: https://github.com/login/oauth/authorize
      token_url: https://github.com/login/oauth/access_token
      revoke_url: https://api.github.com/applications/Iv1.abc/grant   # optional (RFC 7009): revoked at disconnect
      client_id: Iv1.abc
      client_secret: ${secret:github_client_secret}   # optional (a public client has none: PKCE alone)
      scopes: [repo, read:user]
  connect_timeout_hours: 24        # how long a run waits for the person to connect (default 24)
tools:
  openapi:
    - {name: gh, spec: specs/github.yaml, as_requester: github}   # each call with the requester's own token
```

A tool says ``as_requester: <provider>`` (an MCP server over HTTP, an OpenAPI source, a Python function). Who a
run acts for comes from its trigger (``sources``): the person who wrote or reacted, a schedule's ``owner``, a
webhook's ``identities``; a run that acts for nobody has those tools refuse, saying why. The flow, the tokens and
their keeping are ``agent_runtime.identity``'s; here they are only read and checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..sections import Report, check_keys, flag, integer, mapping, text

KEYS = ("providers", "connect_timeout_hours")
PROVIDER_KEYS = ("authorize_url", "token_url", "revoke_url", "client_id", "client_secret", "scopes", "allow_http")
PROVIDER_NAME = re.compile(r"[a-z][a-z0-9_]{0,23}")  # in the callback's path: /oauth/<provider>/callback
# A person's id across sources, as access rules name them (slack:U0123, jira:<account id>, local:<login>).
PERSON = re.compile(r"(slack|jira|local):[A-Za-z0-9._@+-]{1,128}")
SECRET_ONLY = re.compile(r"\$\{secret:([A-Za-z0-9_]+)\}")
STATE_KEY = "oauth_state_key"  # the integrations secret's key that signs connect links' state (OAUTH_STATE_KEY locally)
SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,200}")  # RFC 6749's scope-token


@dataclass(frozen=True, slots=True)
class OAuthProvider:
    """One authorisation server, as the stack's OAuth client there (authorization code with PKCE)."""

    name: str
    authorize_url: str
    token_url: str
    client_id: str
    client_secret: str | None = None  # ``${secret:NAME}``: read from the integrations secret when used
    scopes: tuple[str, ...] = ()
    revoke_url: str | None = None
    allow_http: bool = False  # plain http beyond loopback (the code and tokens travel in clear)

    @property
    def secret_name(self) -> str | None:
        found = SECRET_ONLY.fullmatch(self.client_secret or "")
        return found.group(1) if found else None


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    providers: Mapping[str, OAuthProvider] = field(default_factory=lambda: MappingProxyType({}))
    connect_timeout_hours: int = 24

    def __bool__(self) -> bool:
        return bool(self.providers)

    def secrets(self) -> set[str]:
        """The ``${secret:NAME}`` the providers' client secrets name (a run page redacts their values)."""
        return {name for provider in self.providers.values() if (name := provider.secret_name)}


def parse_oauth_section(data: Mapping[str, Any], report: Report) -> OAuthSettings:
    check_keys("oauth", data, KEYS, report)
    providers: dict[str, OAuthProvider] = {}
    for name, item in mapping("oauth", data, "providers", report).items():
        where = f"oauth.providers.{name}"
        if not isinstance(name, str) or not PROVIDER_NAME.fullmatch(name):
            report(where, "a provider's name: 1-24 lowercase letters, digits or '_', starting with a letter")
            continue
        if not isinstance(item, Mapping):
            report(where, f"must be a mapping ({', '.join(PROVIDER_KEYS)})")
            continue
        provider = _provider(name, item, where, report)
        if provider is not None:
            providers[name] = provider
    hours = integer("oauth", data, "connect_timeout_hours", 24, report, low=1, high=24 * 30)
    return OAuthSettings(MappingProxyType(providers), hours)


def _provider(name: str, item: Mapping[str, Any], where: str, report: Report) -> OAuthProvider | None:
    check_keys(where, item, PROVIDER_KEYS, report)
    allow_http = flag(where, item, "allow_http", report)
    urls = {key: text(where, item, key, report, required=key != "revoke_url") for key in _URL_KEYS}
    for key, url in urls.items():
        if url is not None and not _url_ok(url, allow_http):
            report(f"{where}.{key}", "must be an https URL (plain http on loopback, or with allow_http: true)")
    client_id = text(where, item, "client_id", report)
    secret = item.get("client_secret")
    if secret is not None and not (isinstance(secret, str) and SECRET_ONLY.fullmatch(secret)):
        report(f"{where}.client_secret", "must be ${secret:NAME} (a key of the integrations secret), never the value")
        secret = None
    scopes = item.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(s, str) and SCOPE.fullmatch(s) for s in scopes):
        report(f"{where}.scopes", "must be a list of scope names (no spaces or quotes)")
        scopes = []
    if None in (urls["authorize_url"], urls["token_url"], client_id):
        return None
    return OAuthProvider(
        name,
        str(urls["authorize_url"]),
        str(urls["token_url"]),
        str(client_id),
        secret,
        tuple(scopes),
        urls["revoke_url"],
        allow_http,
    )


_URL_KEYS = ("authorize_url", "token_url", "revoke_url")
_LOOPBACK = re.compile(r"http://(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?(/|$)")


def _url_ok(url: str, allow_http: bool) -> bool:
    if any(c.isspace() for c in url) or len(url) > 2_000:
        return False
    return url.startswith("https://") or (url.startswith("http://") and (allow_http or bool(_LOOPBACK.match(url))))


def check_person(value: Any, where: str, report: Report) -> str | None:
    """A person's id across sources (``slack:U0123``, ``jira:<account id>``), or None after saying why."""
    if value is None:
        return None
    if not isinstance(value, str) or not PERSON.fullmatch(value):
        report(where, "must be a person's id: slack:<user id>, jira:<account id> or local:<login>")
        return None
    return value
