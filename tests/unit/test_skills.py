from __future__ import annotations

import os
from pathlib import Path

import pytest
import skills_ref
from agent_runtime.skills import SkillAccessError, SkillLibrary, SkillPolicy, parse_skill, skill_tools
from agent_runtime.workflows import WorkflowError, parse_workflow

REPO = Path(__file__).resolve().parents[2]
SHIPPED = ["jira-formatting", "large-files", "notion-formatting", "python-sandbox", "slack-formatting"]


def make_skill(root: Path, name: str, front: str | None = None, body: str = "Do the thing.\n") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    front = front if front is not None else f"name: {name}\ndescription: Helps with {name}. Use when asked.\n"
    (folder / "SKILL.md").write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return folder


def test_shipped_skills_pass_our_validator_and_the_reference_one() -> None:
    library = SkillLibrary(REPO / "skills")
    assert library.names() == SHIPPED
    assert library.validate() == []
    for name in SHIPPED:
        assert skills_ref.validate(REPO / "skills" / name) == [], name


def test_strict_validation_reports_each_problem(tmp_path: Path) -> None:
    make_skill(tmp_path, "Bad_Name", "name: Bad_Name\ndescription: x\ncolour: blue\n")
    make_skill(
        tmp_path, "other", "name: different\ndescription: " + "d" * 1025 + "\ncompatibility: " + "c" * 501 + "\n"
    )
    make_skill(tmp_path, "links", body="See [the guide](references/missing.md) and [x](../../etc/passwd).\n")
    make_skill(tmp_path, "meta", "name: meta\ndescription: ok\nmetadata: [1, 2]\n", body="")
    (tmp_path / "no-skill-md").mkdir()
    problems = [f"{Path(p.file).parent.name}: {p.key}: {p.why}" for p in SkillLibrary(tmp_path).validate()]
    allowed = "name, description, license, compatibility, metadata, allowed-tools"
    assert f"Bad_Name: colour: unknown field; the spec allows {allowed}" in problems
    assert "Bad_Name: name: use 1-64 lowercase letters, digits and single hyphens (a-z, 0-9)" in problems
    assert "other: name: must equal the folder name 'other'" in problems
    assert "other: description: is 1025 characters; the limit is 1024" in problems
    assert "other: compatibility: must be a string of 1-500 characters" in problems
    assert "links: (body): link 'references/missing.md': no such file in the skill folder" in problems
    assert "links: (body): link '../../etc/passwd' points outside the skill folder" in problems
    assert "meta: metadata: must map keys to string values" in problems
    assert "meta: (body): is empty: the instructions are the skill" in problems
    assert any(p.endswith(": SKILL.md: missing: every skill folder needs one") for p in problems)


def test_lenient_loading_keeps_usable_skills_and_skips_broken_ones(tmp_path: Path) -> None:
    make_skill(tmp_path, "mismatch", "name: other-name\ndescription: Still useful.\n")
    make_skill(tmp_path, "colon", "name: colon\ndescription: Use it: always, when asked\n")
    make_skill(tmp_path, "no-description", "name: no-description\n")
    make_skill(tmp_path, "bad-yaml", "name: [unclosed\n  description: x\n")
    library = SkillLibrary(tmp_path)
    assert sorted(library.names()) == ["colon", "other-name"]
    assert library.get("colon").description == "Use it: always, when asked"
    skill, problems = parse_skill(tmp_path / "mismatch", strict=False)
    assert skill is not None and problems  # loaded, with a warning


def test_catalog_and_tools_follow_the_policy(tmp_path: Path) -> None:
    for name in ("alpha", "beta", "gamma"):
        make_skill(tmp_path, name)
    library = SkillLibrary(tmp_path)
    cases = {
        SkillPolicy(): ["alpha", "beta", "gamma"],
        SkillPolicy(allowed=("beta",)): ["beta"],
        SkillPolicy(prohibited=("beta",)): ["alpha", "gamma"],
        SkillPolicy(required=("gamma",), allowed=("alpha",)): ["alpha", "gamma"],
        SkillPolicy(allowed=()): [],
    }
    for policy, expected in cases.items():
        visible = policy.visible(library.names())
        assert visible == expected, policy
        catalog = library.catalog(visible)
        for name in ("alpha", "beta", "gamma"):
            assert (f"<name>{name}</name>" in catalog) is (name in expected)
        tools = skill_tools(library, policy)
        if not expected:
            assert tools == []  # no catalog, no tools
            continue
        enum = tools[0].parameters["properties"]["name"]["enum"]
        assert enum == expected


def test_workflow_skill_names_are_validated() -> None:
    data = {
        "name": "flow",
        "description": "d",
        "prompt": "p",
        "model": {"name": "gpt-4o", "context_window": 128000},
        "skills": {"required": ["slack-formatting", "nope"], "prohibited": ["slack-formatting"], "extra": 1},
    }
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(data, file="flow.yaml", skill_names=SHIPPED)
    problems = [f"{p.key}: {p.why}" for p in caught.value.problems]
    assert any(p.startswith("skills.required: unknown skill 'nope'; available: jira-formatting") for p in problems)
    assert "skills.prohibited: 'slack-formatting' is also required" in problems
    assert any(p.startswith("skills.extra: unknown key") for p in problems)


@pytest.mark.parametrize(
    "path",
    ["../other/SKILL.md", "references/../../other/SKILL.md", "/etc/passwd", "~/.ssh/id_rsa", "refs\\x.md", "a\0b", ""],
)
def test_skill_files_cannot_be_read_outside_the_skill(tmp_path: Path, path: str) -> None:
    make_skill(tmp_path, "safe")
    make_skill(tmp_path, "other")
    with pytest.raises(SkillAccessError, match="refused path"):
        SkillLibrary(tmp_path).read("safe", path)


def test_a_symlink_pointing_out_is_refused(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "skills", "safe")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET", encoding="utf-8")
    (folder / "references").mkdir()
    os.symlink(secret, folder / "references" / "notes.md")
    os.symlink(tmp_path, folder / "escape")
    library = SkillLibrary(tmp_path / "skills")
    for path in ("references/notes.md", "escape/secret.txt"):
        with pytest.raises(SkillAccessError, match="resolves outside the skill folder"):
            library.read("safe", path)


def test_files_are_listed_not_read_and_read_on_request(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "docs")
    (folder / "references").mkdir()
    (folder / "references" / "a.md").write_text("Reference A", encoding="utf-8")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.py").write_text("print(1)", encoding="utf-8")
    library = SkillLibrary(tmp_path)
    assert library.files("docs") == ["references/a.md", "scripts/run.py"]
    assert library.read("docs", "references/a.md") == "Reference A"
    with pytest.raises(SkillAccessError, match=r"has no file 'references/b\.md'"):
        library.read("docs", "references/b.md")


def test_file_system_errors_never_show_the_host_path(tmp_path: Path) -> None:
    """Was: a symlink loop or a name too long showed the absolute skills folder to the model."""

    folder = tmp_path / "skills" / "demo"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill.\n---\nBody.\n")
    os.symlink("loop-b", folder / "loop-a")
    os.symlink("loop-a", folder / "loop-b")
    library = SkillLibrary(tmp_path / "skills")
    for relative in ("loop-a", "x" * 5_000, "d/" * 3_000 + "f"):
        with pytest.raises(SkillAccessError) as caught:
            library.read("demo", relative)
        assert str(tmp_path) not in str(caught.value)
