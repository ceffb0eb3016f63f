"""The run chart's numbers are the run record's: the split per model call, the window, masking and compaction
markers at their turns, tool calls per turn."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

from agent_runtime.files import InMemoryFileStore
from agent_runtime.reading.chart import HEIGHT, PARTS, run_chart
from agent_runtime.runtime import build_agent
from agent_runtime.testing import call, reply
from agent_runtime.views import read_run

from tests.conftest import make_workflow, model_for

SVG = "{http://www.w3.org/2000/svg}"


def test_the_chart_draws_the_record(scripted: Any) -> None:
    files = InMemoryFileStore()
    rows = "\n".join(f"INV-{n:04d} customer cust-{n % 37:02d} amount {n * 13 % 997}.00" for n in range(1, 901))
    ledger = files.put(rows.encode(), name="ledger.csv")
    reads = [call("file_read", {"id": ledger.id, "start_line": a, "end_line": a + 149}) for a in range(1, 900, 150)]
    server = scripted(*reads, reply("All read."))
    record = build_agent(make_workflow(), model_for(server), files=files).run("Read the ledger.").to_dict()
    svg = ET.fromstring(run_chart(read_run(record)))
    turns = {int(g.get("data-turn")): g for g in svg.iter(f"{SVG}g") if g.get("class") == "turn"}
    calls = {c["turn"]: c["context"] for c in record["model_calls"]}
    assert sorted(turns) == sorted(calls)
    for turn, g in turns.items():
        assert {part: int(g.get(f"data-{part.replace(' ', '-')}")) for part in PARTS} == {
            part: calls[turn]["split"].get(part, 0) for part in PARTS
        }
    markers = [(g.get("data-type"), int(g.get("data-turn"))) for g in svg.iter(f"{SVG}g") if g.get("class") == "marker"]
    expected = [(e["type"], e["turn"]) for e in record["events"] if e["type"] in ("masking", "compaction")]
    assert markers == expected and markers  # the default rolling masking happened, and is drawn where it did
    tools = {
        int(g.get("data-turn")): int(g.get("data-count")) for g in svg.iter(f"{SVG}g") if g.get("class") == "tools"
    }
    assert tools == dict(Counter(c["turn"] for c in record["tool_calls"]))
    window = next(p for p in svg.iter(f"{SVG}polyline") if p.get("class") == "usable")
    assert len(window.get("points").split()) == len(turns)
    assert "window 126,976" in ET.tostring(svg, encoding="unicode")


def test_each_helper_gets_its_own_panel_with_its_own_numbers(scripted: Any) -> None:
    from tests.subagents_support import child_script, long_doc, parent

    files = InMemoryFileStore()
    doc = files.put(long_doc(400), name="contract.txt")
    child = child_script(
        call("file_read", {"id": doc.id, "start_line": 1, "end_line": 200}),
        call("file_read", {"id": doc.id, "start_line": 201, "end_line": 400}),
        reply("Clause 7 keeps SECRET-7."),
    )
    server = scripted(
        call("subagent", {"task": "find clause 7", "files": [doc.id]}), reply("Clause 7."), intercept=child
    )
    record = parent(server, files).run("What does clause 7 say?").to_dict()
    svg = ET.fromstring(run_chart(read_run(record)))
    panels = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "panel"]
    [helper] = record["children"]
    assert [g.get("data-run-id") for g in panels] == [record["run_id"], helper["run_id"]]
    assert svg.get("height") == str(2 * HEIGHT) and panels[1].get("transform") == f"translate(0 {HEIGHT})"
    for panel, run in zip(panels, (record, helper), strict=True):
        turns = {int(g.get("data-turn")): g for g in panel.iter(f"{SVG}g") if g.get("class") == "turn"}
        calls = {c["turn"]: c["context"]["split"] for c in run["model_calls"]}
        assert sorted(turns) == sorted(calls)
        for turn, g in turns.items():
            assert {p: int(g.get(f"data-{p.replace(' ', '-')}")) for p in PARTS} == {
                p: calls[turn].get(p, 0) for p in PARTS
            }
    tools = {g.get("data-turn"): g.get("data-count") for g in panels[1].iter(f"{SVG}g") if g.get("class") == "tools"}
    assert sum(map(int, tools.values())) == len(helper["tool_calls"]) == 2


def test_names_with_control_characters_keep_the_chart_well_formed(scripted: Any) -> None:
    """Was: a tool name with a control character (an MCP server's, a record from elsewhere) made the SVG
    impossible to parse."""
    server = scripted(call("file_read", {"id": "file-x"}), reply("ok"))
    record = build_agent(make_workflow(), model_for(server), files=InMemoryFileStore()).run("go").to_dict()
    for entry in record["tool_calls"]:
        entry["name"] = "evil\x01\x1b[31mtool\x00"
    record["workflow"] = "flow\x07"
    svg = ET.fromstring(run_chart(read_run(record)))  # parses
    assert "evil\ufffd\ufffd[31mtool\ufffd" in ET.tostring(svg, encoding="unicode")


def test_a_panels_title_fits_its_width_whatever_the_names(scripted: Any) -> None:
    """Was: a helper's title (workflow.subagent · run <id>.sub1 · … · ~$cost) ran past the panel's right edge."""
    from agent_runtime.reading.chart import LEFT, RIGHT, WIDTH

    server = scripted(reply("ok"))
    record = build_agent(make_workflow(), model_for(server), files=InMemoryFileStore()).run("go").to_dict()
    record |= {"workflow": "document-feedback.subagent" * 6, "run_id": "run-d6848e8df82c420c.sub1" * 3}
    svg = ET.fromstring(run_chart(read_run(record)))
    title, facts = [t for t in svg.iter(f"{SVG}text") if t.get("y") in ("20", "37")][:2]
    for text, width_per_char in ((title, 8), (facts, 7)):  # bold 14 px and 12 px Helvetica stay under these
        assert len(text.text or "") * width_per_char <= WIDTH - LEFT - RIGHT
    assert (title.text or "").endswith("…") and "model call(s)" in (facts.text or "")
