"""Operations of an OpenAPI 3 document as tools: parameters and the JSON request body become the tool's schema.

GET and HEAD are read-only; other methods are mutating (journalled, run alone, never repeated on resume) unless
the workflow says otherwise. A response is text for the model (a large one becomes a virtual file like any tool
result); a binary one is saved as a file.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import yaml

from ..capped import read_capped
from ..credentials import CURRENT, TokenRejected
from ..errors import ConfigError, ToolError
from ..run_context import RunContext
from ..tools.decorator import Tool, external_tool
from ..workflows.tools import OpenApiSettings
from .mcp import tool_name
from .results import MAX_RESULT_BYTES
from .secrets import Redactor

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
READ_ONLY = ("get", "head", "options")
PLACES = ("path", "query", "header", "cookie")  # cookie parameters are read, never sent
MAX_SPEC_BYTES = 8 * 1024 * 1024
MAX_REF_DEPTH = 12  # $refs are inlined to this depth; deeper (or cyclic) schemas become a plain object
MAX_NODES = 5_000  # nodes of one inlined schema (a tool's parameters), at most
FETCH_SECONDS = 30.0  # a remote document, in all
TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/x-yaml", "text/")
_SPECS: dict[str, dict[str, Any]] = {}  # per process: a document is read once per cold start


@dataclass(frozen=True, slots=True)
class Operation:
    id: str
    method: str
    path: str
    summary: str
    parameters: tuple[dict[str, Any], ...]
    body: dict[str, Any] | None  # the JSON request body's schema
    body_required: bool


def load_spec(settings: OpenApiSettings, base_dir: Path | None) -> dict[str, Any]:
    """The document, from a path next to the workflow or a URL; a malformed one is a ConfigError with its path."""
    where = f"tools.openapi {settings.name!r}: {settings.spec}"
    remote = settings.spec.startswith(("https://", "http://"))
    key = settings.spec if remote else str(((base_dir or Path.cwd()) / settings.spec).resolve())
    if key not in _SPECS:
        raw = _read(settings.spec, base_dir, where, settings.allow_http)
        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as error:
            raise ConfigError(f"{where}: not YAML or JSON ({str(error).splitlines()[0]})") from None
        except RecursionError:
            raise ConfigError(f"{where}: nested too deep to read") from None
        if not isinstance(data, dict) or not str(data.get("openapi", "")).startswith("3."):
            raise ConfigError(f"{where}: not an OpenAPI 3 document (no 'openapi: 3.x' at the top)")
        if not isinstance(data.get("paths"), dict):
            raise ConfigError(f"{where}: paths: must be a mapping of paths to operations")
        _SPECS[key] = data
    return _SPECS[key]


def _read(spec: str, base_dir: Path | None, where: str, allow_http: bool = False) -> bytes:
    if spec.startswith(("https://", "http://")):
        _check_target(spec, allow_http, where)
        return _fetch(spec, where)
    path = (base_dir or Path.cwd()) / spec
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{where}: cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_SPEC_BYTES:
        raise ConfigError(f"{where}: over {MAX_SPEC_BYTES // 2**20} MB")
    return data


def _fetch(url: str, where: str) -> bytes:
    """A remote document: at most MAX_SPEC_BYTES, within FETCH_SECONDS in all (a server that drips a byte at a
    time never trips a read timeout)."""
    started, chunks, size = time.monotonic(), [], 0
    try:
        with (
            httpx2.Client(timeout=15.0, follow_redirects=True) as client,
            client.stream("GET", url) as response,
        ):
            response.raise_for_status()
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_SPEC_BYTES:
                    raise ConfigError(f"{where}: over {MAX_SPEC_BYTES // 2**20} MB")
                if time.monotonic() - started > FETCH_SECONDS:
                    raise ConfigError(f"{where}: not fetched within {FETCH_SECONDS:.0f} s")
                chunks.append(chunk)
    except httpx2.HTTPError as error:
        raise ConfigError(f"{where}: could not be fetched ({error})") from None
    return b"".join(chunks)


def operations(spec: dict[str, Any], where: str) -> dict[str, Operation]:
    """Every operation with an operationId, by id."""
    found: dict[str, Operation] = {}
    for path, item in spec["paths"].items():
        if not isinstance(item, dict):
            raise ConfigError(f"{where}: paths.{path}: must be a mapping of methods to operations")
        shared = item.get("parameters", [])
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict) or not op.get("operationId"):
                continue
            at = f"{where}: paths.{path}.{method}"
            params = [_resolve(spec, p, at) for p in [*shared, *op.get("parameters", [])]]
            for index, param in enumerate(params):
                if not isinstance(param, dict) or "name" not in param or param.get("in") not in PLACES:
                    raise ConfigError(f"{at}.parameters[{index}]: needs 'name' and 'in' (path, query or header)")
            body, required = _body(spec, op, at)
            summary = " ".join(str(op.get(k, "")) for k in ("summary", "description") if op.get(k)).strip()
            found[str(op["operationId"])] = Operation(
                str(op["operationId"]),
                method,
                str(path),
                summary,
                tuple(p for p in params if p["in"] != "cookie"),
                body,
                required,
            )
    return found


def _body(spec: dict[str, Any], op: dict[str, Any], at: str) -> tuple[dict[str, Any] | None, bool]:
    body = _resolve(spec, op.get("requestBody"), f"{at}.requestBody")
    if not isinstance(body, dict):
        return None, False
    media = (body.get("content") or {}).get("application/json")
    if not isinstance(media, dict):
        return None, False
    return _inline(spec, media.get("schema", {"type": "object"}), 0), bool(body.get("required"))


def _resolve(spec: dict[str, Any], value: Any, at: str) -> Any:
    if isinstance(value, dict) and isinstance(value.get("$ref"), str):
        ref = value["$ref"]
        if not ref.startswith("#/"):
            raise ConfigError(f"{at}: only local $refs are supported, not {ref!r}")
        node: Any = spec
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise ConfigError(f"{at}: $ref {ref!r} points at nothing")
            node = node[part]
        return node
    return value


def _inline(spec: dict[str, Any], schema: Any, depth: int, budget: list[int] | None = None) -> Any:
    """A schema with its local $refs inlined (Chat Completions schemas cannot refer to a document). Recursive
    schemas are common in real documents: $refs are inlined to MAX_REF_DEPTH, and one schema to MAX_NODES nodes
    in all (a cycle that fans out, or a YAML alias bomb, would otherwise grow without end); past either, a plain
    object stands in."""
    budget = budget if budget is not None else [MAX_NODES]
    budget[0] -= 1
    if depth > MAX_REF_DEPTH or budget[0] < 0:
        return {"type": "object"}
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(spec, _resolve(spec, schema, "schema"), depth + 1, budget)
        skipped = ("xml", "example", "examples")
        return {k: _inline(spec, v, depth, budget) for k, v in schema.items() if k not in skipped}
    if isinstance(schema, list):
        return [_inline(spec, item, depth, budget) for item in schema]
    return schema


def openapi_tools(
    settings: OpenApiSettings, spec: dict[str, Any], headers: dict[str, str], redact: Redactor
) -> list[Tool]:
    where = f"tools.openapi {settings.name!r}"
    try:
        return _openapi_tools(settings, spec, headers, redact, where)
    except RecursionError:
        raise ConfigError(f"{where}: the document nests too deep") from None


def _openapi_tools(
    settings: OpenApiSettings, spec: dict[str, Any], headers: dict[str, str], redact: Redactor, where: str
) -> list[Tool]:
    found = operations(spec, where)
    wanted = list(settings.operations) if settings.operations is not None else list(found)
    unknown = [op for op in [*wanted, *settings.read_only, *settings.mutating] if op not in found]
    if unknown:
        raise ConfigError(
            f"{where}: no operation {', '.join(map(repr, unknown))}; the document has: {', '.join(found)}"
        )
    base = settings.base_url or _first_server(spec, settings, where)
    _check_target(base, settings.allow_http, where)
    client = _Client(base, headers, settings.timeout_seconds, redact, settings.as_requester)
    return [_tool(settings, found[op_id], spec, client) for op_id in wanted]


def _first_server(spec: dict[str, Any], settings: OpenApiSettings, where: str) -> str:
    """The document's first server. A remote document may only name its own host (relative URLs resolve against
    it): it must not choose where the source's headers, and their secrets, are sent."""
    servers = spec.get("servers") or []
    url = servers[0].get("url") if servers and isinstance(servers[0], dict) else None
    remote = settings.spec.startswith(("https://", "http://"))
    if isinstance(url, str) and remote:
        url = urllib.parse.urljoin(settings.spec, url)
        if urllib.parse.urlsplit(url).netloc != urllib.parse.urlsplit(settings.spec).netloc:
            raise ConfigError(
                f"{where}: the document names its server on another host ({url}): set base_url to "
                "send requests, and their headers, there"
            )
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise ConfigError(f"{where}: set base_url (the document names no absolute server URL)")
    return url


METADATA_HOSTS = ("metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal")
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200"))


def _check_target(url: str, allow_http: bool, where: str) -> None:
    """Where a source's document comes from and its requests go: https (plain http on loopback, or when the
    workflow allows it), never a link-local or cloud metadata address (169.254.169.254 hands out credentials)."""
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    addresses = _addresses(host)
    loopback = bool(addresses) and all(address.is_loopback for address in addresses)
    if parts.scheme != "https" and not (parts.scheme == "http" and (allow_http or loopback)):
        raise ConfigError(f"{where}: {url}: use https (or allow_http: true, where plain http is meant)")
    if host in METADATA_HOSTS or any(_forbidden(address) for address in addresses):
        raise ConfigError(f"{where}: {url}: a link-local or metadata address is never a tool's target")


def _forbidden(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Link-local (169.254.169.254 and fe80::) or a cloud's metadata address (AWS's IPv6 fd00:ec2::254 is not
    link-local), also as an IPv4-mapped IPv6 address."""
    mapped = getattr(address, "ipv4_mapped", None)
    return any(a.is_link_local or a in METADATA_ADDRESSES for a in (address, *([mapped] if mapped else [])))


def pinned(url: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The URL to connect to for one call: its host resolved now and checked (a name that resolved to a public
    address when the workflow was built may resolve to the metadata address now: DNS rebinding), then the
    connection made to that very address, with the name kept for the Host header and TLS (SNI and the
    certificate's check)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    addresses = _addresses(host)
    if not addresses:
        raise ToolError(f"{host}: the name does not resolve")
    bad = [str(a) for a in addresses if _forbidden(a)]
    if bad or host.lower() in METADATA_HOSTS:
        raise ToolError(
            f"{host} resolves to {', '.join(bad) or host}: a link-local or metadata address is never a tool's target"
        )
    address = addresses[0]
    literal = f"[{address}]" if address.version == 6 else str(address)
    netloc = literal + (f":{parts.port}" if parts.port else "")
    extensions: dict[str, Any] = {"sni_hostname": host} if parts.scheme == "https" else {}
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc)), {"Host": parts.netloc}, extensions


def _addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The host's addresses: itself when an IP literal, else what it resolves to (nothing when it does not)."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def _tool(settings: OpenApiSettings, op: Operation, spec: dict[str, Any], client: _Client) -> Tool:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in op.parameters:
        schema = dict(_inline(spec, param.get("schema", {"type": "string"}), 0))
        if param.get("description"):
            schema["description"] = str(param["description"])[:500]
        properties[param["name"]] = schema
        if param.get("required") or param["in"] == "path":
            required.append(param["name"])
    if op.body is not None:
        properties["body"] = {**op.body, "description": "The JSON request body."}
        if op.body_required:
            required.append("body")
    mutating = op.method not in READ_ONLY
    mutating = (mutating or op.id in settings.mutating) and op.id not in settings.read_only
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    description = f"{op.method.upper()} {op.path}" + (f": {op.summary[:1000]}" if op.summary else "")

    def call(arguments: dict[str, Any], ctx: RunContext | None) -> str:
        return client.send(op, arguments, ctx)

    return external_tool(
        tool_name(settings.name, op.id), description, schema, call, mutating=mutating, redact=client.redact
    )


class _Client:
    def __init__(
        self, base: str, headers: dict[str, str], timeout: int, redact: Redactor, as_requester: str | None = None
    ) -> None:
        self.base, self.headers, self.timeout, self.redact = base.rstrip("/"), headers, float(timeout), redact
        self.as_requester = as_requester  # an oauth provider: each call with the requester's token

    def send(self, op: Operation, arguments: Mapping[str, Any], ctx: RunContext | None) -> str:
        path, query, headers = op.path, {}, dict(self.headers) | self._credential()
        for param in op.parameters:
            if param["name"] not in arguments:
                continue
            value = arguments[param["name"]]
            if param["in"] == "path":
                if str(value).strip() in (".", ".."):  # the client would remove the segment: a path climbed
                    raise ToolError(f"path parameter {param['name']!r} cannot be {str(value).strip()!r}")
                path = path.replace("{" + param["name"] + "}", urllib.parse.quote(str(value), safe=""))
            elif param["in"] == "query":
                query[param["name"]] = value if isinstance(value, list) else str(value)
            else:
                headers[param["name"]] = str(value)
        body = json.dumps(arguments["body"]).encode() if "body" in arguments else None
        if body is not None:
            headers["Content-Type"] = "application/json"
        return self._request(op.method.upper(), self.base + path, query, headers, body, ctx)

    def _request(
        self,
        method: str,
        url: str,
        query: dict[str, Any],
        headers: dict[str, str],
        body: bytes | None,
        ctx: RunContext | None,
    ) -> str:
        target, host, extensions = pinned(url)  # checked for this call, and connected to as checked
        try:
            with (
                httpx2.Client(timeout=self.timeout) as client,
                client.stream(
                    method, target, params=query, headers=headers | host, content=body, extensions=extensions
                ) as response,
            ):
                data = read_capped(response, MAX_RESULT_BYTES, _ask_for_less, "the response")
                kind = response.headers.get("content-type", "")
                status = response.status_code
        except httpx2.TimeoutException:
            raise ToolError(
                f"{method} {urllib.parse.urlparse(url).path}: no answer within {self.timeout:.0f} s"
            ) from None
        except httpx2.HTTPError as error:
            raise ToolError(self.redact(f"{method} {urllib.parse.urlparse(url).path} failed: {error}")) from None
        text = data.decode("utf-8", errors="replace") if not kind or kind.startswith(TEXT_TYPES) else None
        if status == 401 and self.as_requester:
            raise TokenRejected(f"HTTP 401: {self.as_requester} refused the requester's token")
        if status >= 400:
            raise ToolError(self.redact(f"HTTP {status}: {text or kind}")[:2_000])  # redacted whole, then cut
        if text is not None:
            return text or f"HTTP {status} (no content)"
        return _saved(ctx, self.redact.data(data), urllib.parse.urlparse(url).path, kind)

    def _credential(self) -> dict[str, str]:
        if not self.as_requester:
            return {}
        found = CURRENT.get()
        if found is None or found.provider != self.as_requester:
            raise ToolError(f"this tool acts as the requester through {self.as_requester}: no credential for it here")
        return found.headers()


def _ask_for_less(said: str) -> ToolError:
    return ToolError(f"{said}: ask for less (filter, page)")


def _saved(ctx: RunContext | None, data: bytes, path: str, kind: str) -> str:
    if ctx is None:
        return f"[{kind} response, {len(data):,} bytes: not kept (no file store)]"
    meta = ctx.files.put(
        data, name=path.rstrip("/").rsplit("/", 1)[-1] or "response", mimetype=kind or None, source="tool"
    )
    return f"[{kind} response saved as file {meta.id} ({meta.name}, {len(data):,} bytes)]"
