"""docs/playground.md names every HTTP route of the page's own that a person scripting it needs (each action's
POST, the state, the changes' long poll, a file's download) and the token's header and meta tag: read from the
app's tables, so a route added is a test failing until the doc names it. Its shell example runs as written."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from agent_runtime.playground import app

from tests.conftest import REPO
from tests.playground_support import HELPER, playground, until

DOC = (REPO / "docs" / "playground.md").read_text(encoding="utf-8")
SECTION = DOC[DOC.index("## Scripting the page") : DOC.index("## The model")]


def test_every_route_of_the_page_is_named_in_the_doc() -> None:
    named = [f"POST /play/ui/{action}" for action in app.ACTIONS]
    named += [f"GET {route}" for route in app.GETS if route.count("/") < 3 or route.endswith("/")]
    named += [route for route in app.GETS if route.startswith("/play/")]
    page = (REPO / "layers/runtime/agent_runtime/playground/static/index.html").read_text(encoding="utf-8")
    meta = re.search(r'<meta name="([^"]+)" content="\{\{token\}\}">', page)
    assert meta is not None
    named += ["X-Playground-Token", f'<meta name="{meta[1]}"', "/play/ui/changes?after=N"]
    assert [text for text in named if text not in SECTION] == []


def test_the_doc_names_no_route_the_page_does_not_serve() -> None:
    said = set(re.findall(r"/play/ui/([a-z]+)", SECTION))
    assert said and said <= {*app.ACTIONS, *(r.removeprefix("/play/ui/").strip("/") for r in app.GETS)}, said


EXAMPLES = {path.stem: path.read_text() for path in (REPO / "examples" / "workflows").glob("*.yaml")}


@pytest.mark.parametrize("workflows", [{"helper": HELPER}, EXAMPLES], ids=["helper", "examples"])
def test_the_docs_mention_from_a_shell_is_answered_in_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workflows: dict[str, str]
) -> None:
    """On the examples' workflows too, whose first channel is a schedule's (the digest's C0DIGEST, where a
    mention starts nothing): the example picks a channel a mention is answered in."""
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(REPO / "examples" / "tools"))
    block = re.search(r"```sh\n(.*?)```", SECTION, re.S)
    assert block is not None
    mention = block[1].split("# a button")[0]  # the click needs a run asking for approval: the serve tests click
    with playground(tmp_path, workflows) as server:
        script = mention.replace("PLAY=http://127.0.0.1:8080", f"PLAY={server.url}") + 'echo "$CHANNEL $TS"'
        ran = subprocess.run(["bash", "-ec", script], capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        channel, ts = ran.stdout.split()
        assert re.fullmatch(r"\d+\.\d+", ts), ran.stdout
        assert server.playground is not None
        workspace = server.playground.workspace
        until(lambda: len(workspace.thread(channel, ts)) > 1, what="the answer in the mention's thread")
