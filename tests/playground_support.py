"""The playground's tests' shared pieces: headless Chromium driven over its DevTools protocol, and serve started
with the playground on a workflows folder of the test's.

The browser is Debian's Chromium (``make browser``; CHROMIUM=path for another), started with
``--remote-debugging-pipe``: the protocol's JSON messages go over two pipes (file descriptors 3 and 4, each message
ended by a NUL byte), so the driver is the standard library alone — no websocket client, no Playwright, nothing
downloaded. The page's console errors and uncaught exceptions are collected as they come."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import REPO

if TYPE_CHECKING:
    from agent_runtime.service.serve import LocalServer

# Workflows the playground's tests share: each a trigger the page starts (their prompts name them for the model)
HELPER = """\
name: helper
description: Answers mentions and direct messages.
prompt: You help.
model: {name: gpt-4.1-mini, context_window: 128000}
triggers:
  slack:
    channels: [C0HELP]
    direct_messages: true
    suggested_prompts: [{title: What changed, message: What changed this week?}]
"""
TRIAGE = """\
name: triage
description: Triage of new issues and their comments.
prompt: You triage.
model: {name: gpt-4.1-mini, context_window: 128000}
triggers:
  jira: {projects: [PROJ], events: [issue_created, comment_created]}
"""
DIGEST = """\
name: digest
description: A daily digest.
prompt: You write digests.
model: {name: gpt-4.1-mini, context_window: 128000}
triggers:
  schedule: {name: daily, expression: "cron(0 9 * * ? *)", message: Write the digest., answer_to: "slack:C0DIGEST"}
"""
PRS = """\
name: prs
description: Summarises pull requests.
prompt: You summarise pull requests.
model: {name: gpt-4.1-mini, context_window: 128000}
triggers:
  webhook: {secret: github_webhook_secret, signature: github, events: [pull_request], message: $.pull_request.title}
"""

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--mute-audio",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--disable-extensions", "--remote-debugging-pipe")  # fmt: skip # a table: Chromium's switches


_TRAMPOLINE = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); os.execv(sys.argv[3], sys.argv[3:])"
)


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    """The pipe's ends moved to 10 or above, clear of the 3 and 4 they become in the browser."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved[0], moved[1]


def chromium() -> str:
    found = os.environ.get("CHROMIUM") or next(filter(None, map(shutil.which, BROWSERS)), None)
    if found is None:
        pytest.fail("no Chromium: `make browser` installs Debian's (make test does), or set CHROMIUM=/path/to/it")
    return found


class Browser:
    """One Chromium process; ``call`` sends a protocol command (to a page's session) and waits for its answer."""

    def __init__(self, profile: Path, *, width: int = 1400, height: int = 900) -> None:
        ours_in, theirs_out = _high(os.pipe())  # Chromium writes its answers on its fd 4
        theirs_in, ours_out = _high(os.pipe())  # and reads commands on its fd 3
        # A trampoline puts the pipes at 3 and 4, then becomes the browser (no preexec_fn: serve's threads run in
        # this process; no shell: dash takes no descriptor above 9).
        command = [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"]
        self.process = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(theirs_in), str(theirs_out), *command],
            pass_fds=(theirs_in, theirs_out),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(theirs_in)
        os.close(theirs_out)
        self._out, self._in = ours_out, ours_in
        self._ids, self._lock = iter(range(1, 1 << 30)), threading.Lock()
        self._waiting: dict[int, Future[dict[str, Any]]] = {}
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._in, 1 << 16):
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                waiting = self._waiting.pop(message.get("id", -1), None)
                if waiting is not None:
                    waiting.set_result(message)
                for listener in list(self.listeners):
                    listener(message)

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
             timeout: float = 30) -> dict[str, Any]:  # fmt: skip
        with self._lock:
            number = next(self._ids)
            answer: Future[dict[str, Any]] = Future()
            self._waiting[number] = answer
            message = {"id": number, "method": method, "params": params or {}}
            os.write(self._out, json.dumps(message | ({"sessionId": session} if session else {})).encode() + b"\0")
        result = answer.result(timeout)
        if "error" in result:
            raise AssertionError(f"{method}: {result['error']}")
        return dict(result.get("result") or {})

    def page(self, url: str) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session, target)
        for domain in ("Runtime", "Page", "Log"):
            self.call(f"{domain}.enable", session=session)
        self.call("Page.navigate", {"url": url}, session=session)
        return page

    def close(self) -> None:
        self.process.kill()
        self.process.wait(10)
        os.close(self._out)


class Page:
    def __init__(self, browser: Browser, session: str, target: str) -> None:
        self.browser, self.session, self.target = browser, session, target
        self.errors: list[str] = []  # console errors, uncaught exceptions, failed loads
        browser.listeners.append(self._heard)

    def _heard(self, message: dict[str, Any]) -> None:
        if message.get("sessionId") != self.session:
            return
        params, method = message.get("params") or {}, message.get("method")
        if method == "Runtime.exceptionThrown":
            self.errors.append(str(params["exceptionDetails"].get("exception", {}).get("description")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(f"{params['entry'].get('text')} {params['entry'].get('url', '')}")

    def eval(self, expression: str) -> Any:
        """The expression's value in the page (awaited when it is a promise), as JSON."""
        found = self.browser.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self.session,
        )
        if "exceptionDetails" in found:
            raise AssertionError(f"{expression[:80]}: {found['exceptionDetails'].get('text')}")
        return found["result"].get("value")

    def wait(self, expression: str, timeout: float = 20.0, what: str = "") -> Any:
        """Until the expression is truthy in the page; its value."""
        until = time.monotonic() + timeout
        while True:  # a page still loading has no body yet: that is "not yet", not a failure
            value = self.eval(f"(() => {{ try {{ return ({expression}); }} catch (e) {{ return null; }} }})()")
            if value:
                return value
            if time.monotonic() > until:
                raise AssertionError(f"waited {timeout:.0f} s for {what or expression}")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """A click on the element (the first that matches), as a person's would reach its handler."""
        self.wait(f"!!document.querySelector({json.dumps(selector)})", what=selector)
        self.eval(f"document.querySelector({json.dumps(selector)}).click()")

    def fill(self, selector: str, text: str) -> None:
        self.wait(f"!!document.querySelector({json.dumps(selector)})", what=selector)
        self.eval(f"document.querySelector({json.dumps(selector)}).value = {json.dumps(text)}")

    def text(self, selector: str) -> str:
        return str(
            self.eval(f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.innerText).join('\\n')")
        )

    def attach(self, selector: str, *paths: Path) -> None:
        """Files chosen in a file input, as a person picks them (the input's change event follows)."""
        root = self.browser.call("DOM.getDocument", session=self.session)["root"]["nodeId"]
        node = self.browser.call("DOM.querySelector", {"nodeId": root, "selector": selector}, session=self.session)
        files = {"files": [str(p) for p in paths], "nodeId": node["nodeId"]}
        self.browser.call("DOM.setFileInputFiles", files, session=self.session)

    def close(self) -> None:
        """The tab goes (another one left open would put this one in the background, where timers slow down)."""
        self.browser.call("Target.closeTarget", {"targetId": self.target})

    def front(self) -> None:
        self.browser.call("Page.bringToFront", session=self.session)

    def screenshot(self, path: Path) -> None:
        shot = self.browser.call("Page.captureScreenshot", {"format": "png"}, session=self.session)
        path.write_bytes(base64.b64decode(shot["data"]))


@contextmanager
def browser(profile: Path) -> Iterator[Browser]:
    opened = Browser(profile)
    try:
        yield opened
    finally:
        opened.close()


def page_token(url: str) -> str:
    with urllib.request.urlopen(url + "/", timeout=10) as response:
        found = re.search(r'name="playground-token" content="([^"]+)"', response.read().decode())
    assert found, "the page carries its token"
    return found.group(1)


def act(url: str, name: str, body: dict[str, Any], token: str) -> dict[str, Any]:
    """One of the page's actions, as its script sends it."""
    request = urllib.request.Request(
        f"{url}/play/ui/{name}",
        data=json.dumps({"user": "U0DANA", **body}).encode(),
        headers={"Content-Type": "application/json", "X-Playground-Token": token},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.loads(response.read()))


DRAIN_SECONDS = 10.0


@contextmanager
def playground(folder: Path, workflows: dict[str, str], *, demo: bool = True) -> Iterator[LocalServer]:
    """``serve`` with the playground on ``workflows`` (name → YAML), its store in ``folder``. ``demo``: the
    embedded model; else the model at OPENAI_BASE_URL (the caller sets it)."""
    from agent_runtime.service.serve import LocalServer
    from agent_runtime.triggers.config import TriggerConfig

    runtime = playground_runtime(folder, workflows, demo=demo)
    server = LocalServer(runtime, TriggerConfig.from_env({}), port=0, playground=True).start()
    try:
        yield server
    finally:
        # The runs a test started end here, while their playground answers (in a few ms with the embedded model),
        # not in later tests' time, retrying a Slack that is gone (with `random`'s jitter, under their hypothesis).
        server.drain(DRAIN_SECONDS)
        server.close()


def repo_workflows(folder: Path, *names: str) -> dict[str, str]:
    """The repository's workflows ``names`` (name → YAML) for ``playground(folder, …)``, the prompts they name
    copied into ``folder``'s workflows folder (a ``prompt_file`` is read beside the YAML)."""
    shutil.copytree(REPO / "workflows" / "prompts", folder / "workflows" / "prompts")
    return {name: (REPO / "workflows" / f"{name}.yaml").read_text() for name in names}


def playground_runtime(folder: Path, workflows: dict[str, str], *, demo: bool = True) -> Any:
    """The settings serve's playground runs ``workflows`` (name → YAML) with, written to ``folder``: its state
    there, the sandbox off, the embedded model or (``demo`` false) the one at OPENAI_BASE_URL."""
    from agent_runtime.config import RuntimeConfig

    (folder / "workflows").mkdir(parents=True, exist_ok=True)
    for name, text in workflows.items():
        (folder / "workflows" / f"{name}.yaml").write_text(text)
    return RuntimeConfig(
        workflows_dir=folder / "workflows",
        state_dir=folder / "state",
        skills_dir=REPO / "skills",
        use_demo_model=demo,
        sandbox_mode="off",
    )


def until(check: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    """Until ``check()`` is truthy: its value."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what or check}")
        time.sleep(0.05)
    return value


def new_answer(server: LocalServer, before: set[str], workflow: str) -> str:
    """The final answer of the run of ``workflow`` started since ``before`` (the run ids then)."""
    from agent_runtime.stores import RunStore

    runs = RunStore(server.store)

    def answered() -> list[str]:
        rows = [r for r in runs.list_runs() if r.run_id not in before and r.workflow == workflow]
        return [
            str(rec["final_answer"]) for r in rows if (rec := runs.load_record(r.run_id)) and rec.get("final_answer")
        ]

    said = until(answered, timeout=60, what=f"the {workflow} run's answer")[0]
    assert "file-" not in said and "text/plain" not in said and "application/json" not in said  # no internals
    return str(said)


def run_ids(server: LocalServer) -> set[str]:
    from agent_runtime.stores import RunStore

    return {row.run_id for row in RunStore(server.store).list_runs(limit=1000)}
