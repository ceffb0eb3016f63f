"""Cold starts on python3.13 vs python3.11, and what SnapStart's priming moves out of the first run.

1. Init (module import with its clients) of each handler from the built layout, side by side: the `sam build`
   output (python3.13) and the same layers built for python3.11 by the same Makefiles (wheels and bytecode for
   3.11), each run by its own interpreter.
2. The worker's first run after init, without priming (on-demand init, or SnapStart without hooks) and after the
   before-snapshot priming and the after-restore hooks, against the second run (warm): what a restored
   environment still pays, and what the hooks cost.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from tests.artifacts_support import BUILD, LAMBDA_PYTHON, find_python, import_ms, layout
from tests.conftest import REPO
from tests.triggers_support import HANDLER_ENV

RUNS = 7
LAYERS = {"RuntimeLayer": "runtime", "DocumentsLayer": "documents"}


@pytest.fixture(scope="module")
def build_311(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The layers built for python3.11 with the same Makefiles; the functions and content as built."""
    python = find_python("3.11")
    if python is None:
        pytest.skip("no Python 3.11 to compare with")
    root = tmp_path_factory.mktemp("build-311")
    for name, folder in LAYERS.items():
        (root / name).mkdir()
        env = {**os.environ, "LAMBDA_VERSION": "3.11", "LAMBDA_PYTHON": python, "ARTIFACTS_DIR": str(root / name)}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # the Makefiles' pip: this venv's
        subprocess.run(["make", "-s", f"build-{name}"], cwd=REPO / "layers" / folder, env=env, check=True)
    for name in ("WebhookFunction", "WorkerFunction", "ContentLayer", "ToolsLayer"):
        shutil.copytree(BUILD / name, root / name)
    return root, python


def test_init_on_python313_vs_python311(build_311: tuple[Path, str]) -> None:
    root, python_311 = build_311
    print(f"\n\nHandler init from the built layout (imports and clients), medians of {RUNS}")
    print(f"{'handler':<8} | python3.13 ms | python3.11 ms | 3.13 / 3.11")
    for name in ("webhook", "worker"):
        function = f"{name.title()}Function"
        new = statistics.median(import_ms(BUILD, function, "import app") for _ in range(RUNS))
        old = statistics.median(import_ms(root, function, "import app", python_311) for _ in range(RUNS))
        print(f"{name:<8} | {new:>13.0f} | {old:>13.0f} | {new / old:>10.2f}x")


FIRST_RUNS = """
import json, os, sys, time
T = time.perf_counter
t = T(); import app; init = T() - t
from agent_runtime import snapstart
from agent_runtime.deadline import Deadline
from agent_runtime.inbound import TriggerEvent
t = T(); snapstart.run_before_snapshot(); prime = T() - t
t = T(); snapstart.run_after_restore(); restore = T() - t

def run(key):
    event = TriggerEvent(source="api", kind="run", dedup_key=f"api:{key}", text="Summarise. " * 40, user="u",
                         thread_id=f"t-{key}", correlation_id=key, reply_to={}, attributes={},
                         workflow="document-feedback")
    t = T(); outcome = app.worker.handle({"type": "event", "event": event.to_dict()}, deadline=Deadline.after(60))
    assert outcome == "answered", outcome
    return T() - t

first, second = run("first"), run("second")
print(json.dumps({k: v * 1000 for k, v in dict(init=init, prime=prime, restore=restore, first=first,
                                                 second=second).items()}))
"""


def first_runs(snapstart: bool, tmp_path: Path) -> dict[str, float]:
    from agent_runtime.testing import ScriptedServer
    from agent_runtime.testing.steps import reply

    paths = os.pathsep.join(layout("WorkerFunction"))
    env = {"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": paths}
    env |= {k: v for k, v in HANDLER_ENV.items() if not k.startswith(("AGENT_TABLE", "AGENT_BUCKET", "AGENT_QUEUE"))}
    env |= {"AGENT_STATE_DIR": str(tmp_path / "state"), "OPENAI_API_KEY": "k"}
    env |= {"AGENT_WORKFLOWS_DIR": str(BUILD / "ContentLayer" / "workflows")}
    env |= {"AGENT_SKILLS_DIR": str(BUILD / "ContentLayer" / "skills")}
    if snapstart:
        env["AWS_LAMBDA_INITIALIZATION_TYPE"] = "snap-start"
    with ScriptedServer([reply("Done."), reply("Done again.")]) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        out = subprocess.run(
            [str(LAMBDA_PYTHON), "-c", FIRST_RUNS],
            cwd=BUILD / "WorkerFunction",
            env=env,
            capture_output=True,
            text=True,
        )
    assert out.returncode == 0, out.stderr[-2000:]
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_worker_first_run_with_and_without_snapstart_priming(tmp_path: Path) -> None:
    rows = {label: [first_runs(label == "primed", tmp_path / f"{label}{i}") for i in range(RUNS)] for label in
            ("unprimed", "primed")}  # fmt: skip
    med = {label: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for label, runs in rows.items()}
    print(f"\n\nWorker on python3.13 from the built layout, medians of {RUNS} (ms)")
    print(f"{'':<9} | init | before-snapshot | after-restore | first run | second run | first / second")
    for label, m in med.items():
        print(
            f"{label:<9} | {m['init']:>4.0f} | {m['prime']:>15.0f} | {m['restore']:>13.0f} | {m['first']:>9.0f} | "
            f"{m['second']:>10.0f} | {m['first'] / m['second']:>13.1f}x"
        )
    saved = med["unprimed"]["first"] - med["primed"]["first"]
    print(f"priming moves {saved:.0f} ms out of the first run after a restore; the restore hooks cost "
          f"{med['primed']['restore']:.0f} ms")  # fmt: skip
