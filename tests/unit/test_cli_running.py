"""A CLI run's process as its row records it: whatever a row holds, reading it never fails, and a run reads as
gone only when its row says running and names a process of this host that is not there (nor its pid reused).
Ctrl-C's stop is seen at once and is not replaced by a request read later."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import asdict
from typing import Any

from agent_runtime.cli.running import Process, gone
from agent_runtime.stopping import StopCheck, StopRequest
from agent_runtime.views import RunRow
from hypothesis import given, settings
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@settings(max_examples=150, deadline=None)
@given(status=st.sampled_from(["running", "stopped", "completed", "", None]), process=JSON | st.fixed_dictionaries(
    {"pid": st.integers() | st.booleans(), "host": st.sampled_from([socket.gethostname(), "elsewhere"])},
    optional={"started": JSON}))  # fmt: skip
def test_reading_any_row_never_fails_and_only_a_running_row_of_this_host_can_be_gone(status: Any, process: Any) -> None:
    found = gone(RunRow("run-1", status=status, process=process))
    if found is not None:
        assert status == "running" and found.host == socket.gethostname() and found.alive() is False


def test_a_live_process_is_not_gone_a_dead_or_reused_pid_is_and_another_host_cannot_tell() -> None:
    this = Process.this()
    assert gone(RunRow("run-1", status="running", process=asdict(this))) is None
    reused = RunRow("run-1", status="running", process=asdict(this) | {"started": 1.0})
    assert this.started is None or gone(reused) == Process(os.getpid(), this.host, 1.0)  # the pid: another's now
    dead = {"pid": dead_pid(), "host": this.host, "started": None}
    assert gone(RunRow("run-1", status="running", process=dead)) is not None
    assert gone(RunRow("run-1", status="stopped", process=dead)) is None  # ended: nothing to tell
    assert Process(dead["pid"], "another-host", None).alive() is None


def test_ctrl_c_is_seen_at_once_and_kept() -> None:
    reads: list[int] = []
    check = StopCheck(lambda: reads.append(1) or StopRequest("U1", 1.0, "slack"), interval=60.0)
    check.ask(StopRequest("cli:dana", 2.0, "ctrl-c"))
    assert check() == StopRequest("cli:dana", 2.0, "ctrl-c") and reads == []
    assert check().reason() == "Stopped by Ctrl-C (cli:dana)."
    check.ask(StopRequest("cli:erin", 3.0, "ctrl-c"))  # the first stop stands
    assert check().by == "cli:dana"


def test_a_cli_person_is_local_login_and_a_stop_recorded_as_cli_login_still_reads() -> None:
    """One name for a person at the command line: a stop from here (`runs stop`, Ctrl-C) is by ``local:<login>``,
    as the run acts for and is counted for; a record written when stops said ``cli:<login>`` reads as written."""
    import getpass

    from agent_runtime.cli.common import login
    from agent_runtime.cli.oauth import me
    from agent_runtime.reading.figures import figures
    from agent_runtime.reading.show import transcript
    from agent_runtime.reading.stats import add_up
    from agent_runtime.views import read_run

    from tests.pages_support import record

    assert login() == me() == f"local:{getpass.getuser()}"
    assert StopRequest(login(), 1.0, "ctrl-c").reason() == f"Stopped by Ctrl-C ({login()})."
    read = []
    for by in ("cli:dana", login()):
        stopped = {"type": "stopped", "by": by, "via": "cli", "turn": 1}
        run = read_run(record(status="stopped", stop_reason=f"Stopped by {by}.", events=[stopped], feedback=[]))
        assert f"[stopped by {by} (cli)]" in transcript(run, None)
        read.append((figures(run, "cli"), ()))
    assert add_up(read)["stopped"] == 2
