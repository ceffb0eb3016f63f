"""The sandbox's boundary: every escape attempt fails or is stopped, with the exact outcome asserted.

Pyodide is not a boundary (Python reaches JavaScript through ``js``, ``pyodide_js`` and ``Function``), so each
attempt is made both from Python and through those escapes: what must hold is the Deno child's lack of permissions.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from agent_runtime.sandbox import SandboxResult

from ..conftest import FAKE_SECRET, REPO

SANDBOX_DIR = REPO / "functions" / "sandbox"
GLOBAL = "g = js.Function('return globalThis')()\n"  # the host's global object, reached from Python


def outcome(code: str) -> str:
    """Wrap an attempt so the result is what happened: the value, or the exception's type and message."""
    body = "\n".join("    " + line for line in code.strip().splitlines())
    return (
        f"import js\ntry:\n{body}\nexcept BaseException as error:\n    r = f'{{type(error).__name__}}: {{error}}'\nr\n"
    )


def attempt(sandbox, code: str, **kwargs) -> str:
    result: SandboxResult = sandbox.run(outcome(code), **kwargs)
    assert result.status == "ok", result
    return str(result.result)


def test_read_etc_passwd_from_python_sees_only_the_virtual_filesystem(sandbox) -> None:
    assert attempt(sandbox, "r = open('/etc/passwd').read()") == (
        "FileNotFoundError: [Errno 44] No such file or directory: '/etc/passwd'"
    )


@pytest.mark.parametrize(
    "code",
    [
        "r = js.Deno.readTextFileSync('/etc/passwd')",
        GLOBAL + "r = g.Deno.readTextFileSync('/etc/passwd')",
        "fs = await js.eval('import(\"node:fs\")')\nr = fs.readFileSync('/etc/passwd', 'utf8')",
    ],
    ids=["js", "Function-globalThis", "dynamic-import-node-fs"],
)
def test_read_etc_passwd_through_the_host_is_denied(sandbox, code: str) -> None:
    assert attempt(sandbox, code) == (
        'JsException: NotCapable: Requires read access to "/etc/passwd", run again with the --allow-read flag'
    )


@pytest.mark.parametrize("name", ["index.mjs", "lib/sandbox.mjs", "lib/child.mjs"])
def test_read_the_functions_own_source_is_denied(sandbox, name: str) -> None:
    path = SANDBOX_DIR / name
    assert path.is_file()
    assert attempt(sandbox, GLOBAL + f"r = g.Deno.readTextFileSync({str(path)!r})") == (
        f'JsException: NotCapable: Requires read access to "{path}", run again with the --allow-read flag'
    )


def test_pyodide_js_api_cannot_load_host_files(sandbox) -> None:
    # thinkingbox-data's audit read host files through pyodide_js._api.loadBinaryFile.
    code = "import pyodide_js\nr = str(await pyodide_js._api.loadBinaryFile('/etc/passwd'))"
    result = attempt(sandbox, code)
    assert 'NotCapable: Requires read access to "/etc/passwd"' in result


def test_write_outside_the_work_dir_is_denied_and_nothing_lands_on_the_host(sandbox, tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    assert attempt(sandbox, GLOBAL + f"g.Deno.writeTextFileSync({str(target)!r}, 'x')\nr = 'WROTE'") == (
        f'JsException: NotCapable: Requires write access to "{target}", run again with the --allow-write flag'
    )
    # Python's own open() writes to Pyodide's in-memory filesystem, which dies with the child.
    code = f"import os\nos.makedirs({str(tmp_path)!r})\nopen({str(target)!r}, 'w').write('x')\nr = 'in memory only'"
    assert attempt(sandbox, code) == "in memory only"
    assert not target.exists()


def test_environment_variables_are_not_readable(sandbox) -> None:
    # Python's environment is Pyodide's own, made up inside the child; the host's never enters it.
    assert attempt(sandbox, "import os\nr = ' '.join(sorted(os.environ))") == (
        "HOME LANG LD_LIBRARY_PATH LOGNAME PATH PWD PYTHONINSPECT USER _"
    )
    assert FAKE_SECRET not in attempt(sandbox, "import os\nr = repr(dict(os.environ))")
    assert attempt(sandbox, GLOBAL + "r = g.Deno.env.get('FAKE_SECRET')") == (
        'JsException: NotCapable: Requires env access to "FAKE_SECRET", run again with the --allow-env flag'
    )
    assert attempt(sandbox, GLOBAL + "r = g.process.env.FAKE_SECRET") == (
        'JsException: NotCapable: Requires env access to "FAKE_SECRET", run again with the --allow-env flag'
    )
    assert attempt(sandbox, GLOBAL + "r = g.Deno.readTextFileSync('/proc/self/environ')") == (
        'JsException: NotCapable: Requires read access to "/proc/self/environ", run again with the --allow-read flag'
    )


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            GLOBAL + "g.Deno.Command.new('/bin/sh').outputSync()\nr = 'RAN'",
            'JsException: NotCapable: Requires run access to "/bin/sh", run again with the --allow-run flag',
        ),
        (
            # node:child_process reads the environment before it spawns: the first permission it lacks stops it
            "cp = await js.eval('import(\"node:child_process\")')\ncp.execFileSync('/bin/sh', ['-c', 'true'])",
            "JsException: NotCapable: Requires env access, run again with the --allow-env flag",
        ),
        ("import subprocess\nsubprocess.run(['true'])", "OSError: [Errno 138] emscripten does not support processes."),
    ],
    ids=["Deno.Command", "node-child_process", "python-subprocess"],
)
def test_spawning_a_process_is_denied(sandbox, code: str, expected: str) -> None:
    assert attempt(sandbox, code if "r =" in code else code + "\nr = 'RAN'") == expected


@pytest.fixture
def listener() -> tuple[int, list[object]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize(
    "template",
    [
        "r = await js.fetch('http://127.0.0.1:{port}/')",
        GLOBAL + 'r = await g.Deno.connect(js.JSON.parse(\'{{"hostname": "127.0.0.1", "port": {port}}}\'))',
        'r = await js.eval(\'import("node:net").then((net) => new Promise((done) => {{ const s = net.connect({port},'
        ' "127.0.0.1"); s.on("error", (e) => done(String(e))); s.on("connect", () => done("CONNECTED")) }}))\')',
    ],
    ids=["fetch", "Deno.connect", "node-net"],
)
def test_network_to_a_local_listener_is_denied(sandbox, listener, template: str) -> None:
    port, accepted = listener
    result = attempt(sandbox, template.format(port=port))
    assert f'NotCapable: Requires net access to "127.0.0.1:{port}"' in result
    time.sleep(0.3)
    assert accepted == []


def test_python_sockets_do_not_exist(sandbox, listener) -> None:
    port, accepted = listener
    assert attempt(sandbox, f"import socket\nr = socket.create_connection(('127.0.0.1', {port}), timeout=1)") == (
        "OSError: [Errno 23] Host is unreachable"
    )
    assert accepted == []


def test_the_lambda_runtime_api_is_unreachable(sandbox) -> None:
    # In Lambda, AWS_LAMBDA_RUNTIME_API is 127.0.0.1:9001: code that reached it could read or answer invocations.
    code = "r = await js.fetch('http://127.0.0.1:9001/2018-06-01/runtime/invocation/next')"
    assert attempt(sandbox, code) == (
        'JsException: NotCapable: Requires net access to "127.0.0.1:9001", run again with the --allow-net flag'
    )


def test_remote_module_imports_are_refused(sandbox, listener) -> None:
    # Deno allows some CDNs for import() by default; --no-remote closes that exfiltration path too.
    port, accepted = listener
    result = attempt(sandbox, f"r = await js.eval('import(\"http://127.0.0.1:{port}/x.js\")')")
    assert result == (
        f'JsException: TypeError: Requires import access to "127.0.0.1:{port}", run again with the --allow-import flag'
    )
    assert accepted == []


def test_no_state_or_file_survives_into_the_next_call(sandbox) -> None:
    first = sandbox.run(
        "import builtins, js, sys\nbuiltins.LEFT = 1\nsys.modules['left'] = object()\n"
        "open('left.txt', 'w').write('x')\nopen('/tmp/left.txt', 'w').write('x')\njs.globalThis.left = 1\n'set'"
    )
    assert first.result == "set"
    assert [f.name for f in first.files] == ["left.txt"]
    second = sandbox.run(
        "import builtins, js, os, sys\n"
        "{'builtins': hasattr(builtins, 'LEFT'), 'module': 'left' in sys.modules, 'work': os.path.exists('left.txt'),"
        " 'tmp': os.path.exists('/tmp/left.txt'), 'js': hasattr(js.globalThis, 'left')}"
    )
    assert second.result == {"builtins": False, "module": False, "work": False, "tmp": False, "js": False}


@pytest.mark.timed
@pytest.mark.parametrize(
    "code",
    [
        "while True:\n    pass",
        "while True:\n    try:\n        while True: pass\n    except BaseException:\n        pass",
    ],
    ids=["busy-loop", "swallows-BaseException"],
)
def test_code_that_runs_forever_is_killed_at_the_time_limit(sandbox, code: str) -> None:
    started = time.monotonic()
    result = sandbox.run(code, time_limit_seconds=1)
    elapsed = time.monotonic() - started
    assert result.status == "timeout"
    assert result.error == "killed after the time limit of 1000 ms"
    assert elapsed < 6


@pytest.mark.parametrize(
    "code",
    ["b = bytearray(1024**3)", "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024**2))"],
    ids=["one-big-block", "growing-list"],
)
def test_allocating_past_the_memory_cap_is_stopped(sandbox, code: str) -> None:
    result = sandbox.run(code, memory_mb=128, time_limit_seconds=60)
    assert result.status == "memory_limit", result.error
    assert "over the memory limit of 128 MB" in (result.error or "")


def test_the_sandbox_still_works_after_every_attack(sandbox) -> None:
    assert sandbox.run("6 * 7").result == 42
