"""A newcomer's "go on" after a Stop was answered "could not find an answer… terms: user-turn0-2.txt, text/plain,
file-": the demo model took its terms from the files list the runtime announces with a later turn. The promise,
over any request text, attachments and a second turn (a "go on", a question, new attachments), through build_agent
and the demo model over HTTP: what the demo answers shows no file id of the run, no mime type and none of the
runtime's lines (its status, a files list, a kept message's header) — only the person's words and what the tools
found. A tool's result kept as a file (too long for the window) is told from its first lines, never by the
engine's marker for it."""

from __future__ import annotations

from agent_runtime.files import InMemoryFileStore
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.assistant import RUNTIME_TOOLS
from agent_runtime.testing.demo import demo_script
from agent_runtime.tools.decorator import external_tool
from agent_runtime.workflows import load_workflow
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, make_workflow, model_for
from tests.demo_support import leaks

LOG = (REPO / "examples" / "incidents" / "pasted-log.txt").read_text()
WORDS = ["what", "went", "wrong", "here", "export", "retry", "budget", "owner", "review", "design", "the", "is",
         "please", "?", "go", "on", "continue", "PROJ-12", "latency", "payments", "errors"]  # fmt: skip # a table
SECOND = st.one_of(st.sampled_from(["go on", "continue please", "ok", "go on where you stopped"]), st.just(None))
ATTACHMENT = st.tuples(
    st.sampled_from(["design.md", "notes.txt", "metrics.csv", "blob.bin", "data.json", "plan"]),
    st.sampled_from([
        b"# Retry design\n\n## Owner\nTODO: budget\n\n## Open questions\n- Who owns the retry budget?\n",
        b"minute,errors,latency_ms\n14:00,0,80\n14:02,17,2300\n",
        bytes(range(256)) * 3,
        b'{"owner": "payments", "retry": 3}',
    ]),
)  # fmt: skip
WORKFLOWS = ["document-feedback", "slack-helper", "plain"]


def workflow(name: str):  # type: ignore[no-untyped-def]
    return make_workflow(max_tool_calls=12) if name == "plain" else load_workflow(name, REPO / "workflows")


@settings(max_examples=12, deadline=None)
@example(  # a clean clone's CI: a tool's error quoted as evidence named the file's id and type
    words=[],
    pasted=True,
    attachments=[("design.md", bytes(range(256)) * 3)],
    later=[],
    second="go on",
    which="slack-helper",
)
@given(
    words=st.lists(st.sampled_from(WORDS), max_size=10),
    pasted=st.booleans(),
    attachments=st.lists(ATTACHMENT, max_size=3),
    later=st.lists(ATTACHMENT, max_size=2),
    second=SECOND,
    which=st.sampled_from(WORKFLOWS),
)
def test_the_demos_answers_show_no_file_id_mime_type_or_runtime_line(
    words: list[str],
    pasted: bool,
    attachments: list[tuple[str, bytes]],
    later: list[tuple[str, bytes]],
    second: str | None,
    which: str,
) -> None:
    said = " ".join(words) or "hello"
    message = f"{said}\n{LOG}" if pasted else said  # a long paste is kept as a virtual file
    files = InMemoryFileStore()
    for i, (name, data) in enumerate(attachments):
        files.put(data, name=f"{i}-{name}")
    with ScriptedServer(demo_script(), model="demo") as server:
        agent = build_agent(workflow(which), model_for(server), files=files)
        first = agent.run(message)
        answers = [first.final_answer or ""]
        if second is not None:  # the thread goes on, maybe with new attachments (announced with the turn)
            for i, (name, data) in enumerate(later):
                files.put(data, name=f"later-{i}-{name}")
            answers.append(agent.run(second, state=first.state).final_answer or "")
    for answer in answers:
        assert answer.strip()
        assert not leaks(answer, files), (message[:80], second, answer)


@settings(max_examples=6, deadline=None)
@given(
    tool=st.from_regex(r"[a-z]{3,8}_[a-z]{3,8}", fullmatch=True).filter(lambda n: n not in RUNTIME_TOOLS),
    lines=st.integers(min_value=3_000, max_value=30_000),
    row=st.sampled_from(["row {i}: value ok", "2026-11-20T14:00:{i} INFO payments ok", '{{"n": {i}}}', "[{i}] done"]),
    phrase=st.sampled_from(["{tool}", "run {tool} please", "what does {tool} say?", "use {tool} and tell me"]),
    which=st.sampled_from(WORKFLOWS),
)
def test_a_tool_result_kept_as_a_file_is_told_from_its_first_lines_never_the_engines_marker(
    tool: str, lines: int, row: str, phrase: str, which: str
) -> None:
    """A tool asked for a huge output (the engine keeps it as a virtual file) was answered with the engine's own
    "[virtual file file-…: result of big_output, 2,536,984 tokens…]" line."""
    output = "\n".join(row.format(i=i) for i in range(lines))
    made = external_tool(tool, "Prints a report.", {"properties": {}, "required": []}, lambda _a, _c: output)
    files = InMemoryFileStore()
    with ScriptedServer(demo_script(), model="demo") as server:
        record = build_agent(workflow(which), model_for(server), files=files, tools=[made]).run(
            phrase.format(tool=tool)
        )
    answer = record.final_answer or ""
    assert answer.strip() and not leaks(answer, files), (phrase, answer)
    assert any(f.source == "virtual" for f in files.list())  # the result was kept as a file
    assert row.format(i=0) in answer, answer  # told from its first line
