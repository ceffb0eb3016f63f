// Python run inside Pyodide for every call: input files in, the code run with the value of its last expression kept,
// new or changed files out. Defined before the memory snapshot is taken, so a call pays nothing to set it up.
export const HARNESS = String.raw`
import ast as _ast, base64 as _b64, hashlib as _hashlib, inspect as _inspect, json as _json, os as _os
import sys as _sys, traceback as _tb

_WORK = "/work"


def _safe_name(name):
    parts = name.replace("\\", "/").split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in name:
        raise ValueError(f"bad file name {name!r}: use a relative path without '..'")
    return _os.path.join(_WORK, *parts)


def _listing():
    seen = {}
    for folder, _dirs, names in _os.walk(_WORK):
        for name in names:
            path = _os.path.join(folder, name)
            with open(path, "rb") as handle:
                seen[path] = _hashlib.sha256(handle.read()).hexdigest()
    return seen


def _write_inputs(files):
    _os.makedirs(_WORK, exist_ok=True)
    for item in files:
        path = _safe_name(item["name"])
        _os.makedirs(_os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(_b64.b64decode(item.get("content_b64", "")))


def _outputs(before, limits):
    files, skipped, total = [], [], 0
    for path, digest in sorted(_listing().items()):
        if before.get(path) == digest:
            continue
        name = _os.path.relpath(path, _WORK)
        size = _os.path.getsize(path)
        if len(files) >= limits.get("max_files", 20) or size > limits.get("file_bytes", 1 << 20) or (
            total + size > limits.get("files_total_bytes", 4 << 20)
        ):
            skipped.append({"name": name, "size": size})
            continue
        with open(path, "rb") as handle:
            files.append({"name": name, "size": size, "content_b64": _b64.b64encode(handle.read()).decode()})
        total += size
    return files, skipped


def _value(value, limit):
    if value is None:
        return {"result": None}
    try:
        text = _json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        text = _json.dumps(repr(value))
        kind = type(value).__name__
        if len(text) <= limit:
            return {"result": _json.loads(text), "result_repr": True, "result_type": kind}
        return {"result": repr(value)[:limit], "result_repr": True, "result_type": kind, "result_truncated": True}
    if len(text) <= limit:
        return {"result": value}
    return {"result": text[:limit], "result_truncated": True, "result_type": type(value).__name__}


def _user_traceback(error):
    frames = _tb.extract_tb(error.__traceback__)
    frames = [f for f in frames if f.filename == "<sandbox>" or not f.filename.startswith("<")]
    lines = ["Traceback (most recent call last):\n", *_tb.format_list(frames)] if frames else []
    return "".join(lines + _tb.format_exception_only(type(error), error))


async def _execute(code, namespace):
    # Top-level await is allowed: JS promises (there are none worth awaiting but the host's) and asyncio both work.
    flags = _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = _ast.parse(code, "<sandbox>", "exec")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], _ast.Expr) else None
    done = eval(compile(tree, "<sandbox>", "exec", flags=flags), namespace)
    if _inspect.iscoroutine(done):
        await done
    if last is None:
        return None
    value = eval(compile(_ast.Expression(last.value), "<sandbox>", "eval", flags=flags), namespace)
    return (await value) if _inspect.iscoroutine(value) else value


async def _sandbox_run(request_json):
    request = _json.loads(request_json)
    limits = request.get("limits") or {}
    try:
        _write_inputs(request.get("files") or [])
    except (ValueError, KeyError, TypeError) as error:
        return _json.dumps({"status": "invalid_request", "error": str(error)})
    before = _listing()
    _os.chdir(_WORK)
    reply = {"status": "ok"}
    try:
        reply.update(_value(await _execute(request["code"], {"__name__": "__main__"}), limits.get("result_bytes", 65536)))
    except SystemExit as error:
        if error.code not in (None, 0):
            reply.update(status="error", error=f"SystemExit: {error.code}", traceback=_user_traceback(error))
    except BaseException as error:
        reply.update(status="error", error=f"{type(error).__name__}: {error}", traceback=_user_traceback(error))
    _sys.stdout.flush()
    _sys.stderr.flush()
    _os.chdir("/")
    reply["files"], reply["files_skipped"] = _outputs(before, limits)
    return _json.dumps(reply)
`;
