"""The `sam build` output (.aws-sam/build): sizes under Lambda's limit, handlers importable from the built layout
with only the built dependencies, by an interpreter of the functions' runtime (python3.13: the layers hold its
wheels and bytecode), the encodings, Pyodide files and snapshot present, the sandbox answering.

`make test` builds first and sets AGENT_REQUIRE_BUILD=1, so a missing build fails there; a bare `pytest` skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.artifacts_support import BUILD, LAMBDA_PYTHON, functions, layout
from tests.triggers_support import slack_request

LIMIT_MB = 250  # unzipped: the function and all its layers
# AWS clients the runtime and Powertools make (stores, queue, sandbox, secrets and parameters, approval wake-ups)
REQUIRED_SERVICES = ("s3", "dynamodb", "sqs", "lambda", "secretsmanager", "ssm", "sts", "scheduler")


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20


def test_every_function_with_its_layers_fits_lambdas_limit() -> None:
    rows = []
    for name, layers in sorted(functions().items()):
        total = size_mb(BUILD / name) + sum(size_mb(BUILD / layer) for layer in layers)
        rows.append((name, layers, total))
    print("\n\nBuilt artifacts (unzipped, function + layers)")
    for name, layers, total in rows:
        print(f"  {name:<16} {total:7.1f} MB  ({', '.join([name, *layers])})")
    assert {name for name, _, _ in rows} == {"WebhookFunction", "WorkerFunction", "SandboxFunction",
                                            "ScheduleSyncFunction"}  # fmt: skip
    assert all(total < LIMIT_MB for _, _, total in rows), rows


def built_python(function: str, code: str, env: dict[str, str] | None = None) -> str:
    """Run code with only the function's directory and its built layers on the path (no site-packages)."""
    paths = layout(function)
    content = BUILD / "ContentLayer"
    base_env = {
        "PATH": os.environ["PATH"],
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "y",
        "AGENT_TABLE": "table",
        "AGENT_BUCKET": "bucket",
        "AGENT_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/runs.fifo",
        "AGENT_WORKFLOWS_DIR": str(content / "workflows"),
        "AGENT_SKILLS_DIR": str(content / "skills"),
        "AGENT_SANDBOX": "off",
        "PYTHONDONTWRITEBYTECODE": "1",  # Lambda's /var/task and /opt are read-only; and keep the build clean
    }
    script = f"import sys; sys.path[:0] = {paths!r}\n{code}"
    out = subprocess.run(
        [str(LAMBDA_PYTHON), "-S", "-c", script],
        env={**base_env, **(env or {})},
        cwd=BUILD / function,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_the_webhook_handler_imports_and_answers_from_the_built_layout() -> None:
    body, headers = slack_request({"type": "url_verification", "challenge": "from-the-build"})
    event = {
        "version": "2.0",
        "routeKey": "POST /slack/events",
        "rawPath": "/slack/events",
        "headers": {k.lower(): v for k, v in headers.items()},
        "requestContext": {"http": {"method": "POST", "path": "/slack/events"}, "stage": "$default"},
        "body": body.decode(),
        "isBase64Encoded": False,
    }
    code = (
        "import json, app\n"
        "class C:\n function_name='f'; memory_limit_in_mb=512; aws_request_id='r';"
        " invoked_function_arn='arn:aws:lambda:us-east-1:1:function:f'\n"
        " def get_remaining_time_in_millis(self): return 10000\n"
        f"print(json.dumps(app.lambda_handler({event!r}, C())))\n"
        "print('botocore' in sys.modules, sys.modules['agent_runtime'].__file__)"
    )
    from tests.triggers_support import SLACK_SECRET

    out = built_python("WebhookFunction", code, {"SLACK_SIGNING_SECRET": SLACK_SECRET}).strip().splitlines()
    assert json.loads(out[-2])["body"] == "from-the-build"
    assert out[-1].endswith(f"{BUILD / 'RuntimeLayer' / 'python' / 'agent_runtime' / '__init__.py'}")


def test_the_worker_handler_imports_with_encodings_and_documents_from_the_built_layout() -> None:
    code = (
        "import app\n"
        "from agent_runtime.context.encodings import load_encoding\n"
        "print(len(load_encoding('o200k_base').encode('hello world')))\n"
        "import lxml.etree, pypdf\n"
        "print(lxml.etree.__file__.startswith(sys.path[2]) or lxml.etree.__file__)\n"
        "print(app.worker.process.skills.names())\n"
    )
    out = built_python("WorkerFunction", code).strip().splitlines()
    assert out[0] == "2"
    assert out[1] == "True"
    assert "python-sandbox" in out[2]


def test_the_schedule_sync_handler_reads_the_shipped_workflows_from_the_built_layout() -> None:
    """The deploy's custom resource: its handler imports with its layers only, and finds the shipped workflows
    (none has a schedule: a deploy of the repository as it is creates none; the examples are not deployed)."""
    code = (
        "import app\n"
        "from agent_runtime.config import RuntimeConfig\n"
        "from agent_runtime.triggers.config import all_workflows\n"
        "from agent_runtime.triggers.schedules import desired\n"
        "flows = all_workflows(RuntimeConfig.from_env())\n"
        "print(len(flows), len(desired(flows, queue_arn='q', role_arn='r')))\n"
    )
    shipped, schedules = built_python("ScheduleSyncFunction", code).strip().splitlines()[-1].split()
    assert int(shipped) >= 4 and schedules == "0"


@pytest.mark.parametrize("function", ["WebhookFunction", "WorkerFunction", "ScheduleSyncFunction"])
def test_every_module_a_handler_imports_from_its_layers_ships_bytecode(function: str) -> None:
    """/opt is read-only: a module without its .pyc would be compiled from source at every cold start."""
    code = (
        "import os, app\n"
        "layers = tuple(p for p in sys.path[1:] if p.endswith('/python'))\n"
        "mods = [m for m in list(sys.modules.values()) if (getattr(m, '__file__', None) or '').startswith(layers)]\n"
        "mods = [m for m in mods if m.__file__.endswith('.py')]\n"
        "print(len(mods))\n"
        "print(sorted(m.__name__ for m in mods if not os.path.isfile(m.__cached__ or '')))\n"
        "print(open(sys.modules['agent_runtime'].__cached__, 'rb').read(8)[4])\n"
    )
    count, missing, flags = built_python(function, code).strip().splitlines()[-3:]
    assert int(count) > 100 and missing == "[]", missing
    assert flags == "1"  # PEP 552 unchecked hash: used as is, whatever the mtimes after copying


def test_botocore_keeps_the_models_the_runtime_calls() -> None:
    code = (
        "import boto3, botocore.session\n"
        f"for name in {REQUIRED_SERVICES!r}: boto3.client(name)\n"
        "print(len(botocore.session.get_session().get_available_services()))\n"
    )
    assert int(built_python("WorkerFunction", code).strip()) < 50  # trimmed from 400+: see layers/runtime/Makefile


def test_trimmed_botocore_resolves_the_same_endpoints_as_the_full_one() -> None:
    """The layer's endpoints.json keeps only the kept services' entries: every partition must resolve as before."""
    code = (
        "import json, boto3\n"
        "urls = {}\n"
        "for region in ('us-east-1', 'eu-west-1', 'cn-north-1', 'us-gov-west-1', 'us-iso-east-1'):\n"
        f"    for name in {REQUIRED_SERVICES!r}:\n"
        "        client = boto3.client(name, region_name=region, aws_access_key_id='x', aws_secret_access_key='y')\n"
        "        urls[region + '/' + name] = client.meta.endpoint_url\n"
        "print(json.dumps(urls, sort_keys=True))\n"
    )
    trimmed = built_python("WorkerFunction", code).strip().splitlines()[-1]
    full = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert json.loads(trimmed) == json.loads(full)


def test_the_built_sandbox_has_pyodide_the_snapshot_and_answers() -> None:
    root = BUILD / "SandboxFunction"
    for part in ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide.mjs"):
        assert (root / "node_modules" / "pyodide" / part).is_file()
    deno = root / "node_modules" / "@deno" / "linux-x64-glibc" / "deno"
    assert deno.is_file() and os.access(deno, os.X_OK)
    assert (root / "snapshot" / "pyodide.bin").stat().st_size > 10 * 2**20
    script = (
        "import('./index.mjs').then(async (m) => "
        "{ console.log(JSON.stringify(await m.handler({code: '6*7'}))); process.exit(0); })"
    )
    out = subprocess.run(["node", "-e", script], cwd=root, capture_output=True, text=True, timeout=120)
    reply = json.loads(out.stdout.strip().splitlines()[-1])
    assert (reply["status"], reply["result"], reply["timings"]["snapshot"]) == ("ok", 42, True)
