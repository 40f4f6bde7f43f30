"""The Markdown docs hold together: every relative link and image resolves to a
file, every ``#anchor`` to a heading of that file (GitHub's slug rule), and
README.md stays a front page. Pure Python, no bpy."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
README_MAX_LINES = 300

_FENCE = re.compile(r"^(```|~~~)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target "title") and ![alt](target); text may hold one level of [..].
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)


def doc_files() -> list:
    files = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "CHANGELOG.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    files += sorted((ROOT / "bench").rglob("*.md"))
    return [f for f in files if f.is_file()]


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks, inline code removed."""
    fenced = False
    for no, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            yield no, _INLINE_CODE.sub("", line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, markup and punctuation other
    than '-' and '_' dropped, each space a '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set:
    found, seen = set(), {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if fenced:
            continue
        found.update(_HTML_ANCHOR.findall(line))
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(path: Path):
    """(line number, target) of every link and image in ``path``'s prose."""
    for no, line in prose_lines(path.read_text(encoding="utf-8")):
        for m in _LINK.finditer(line):
            yield no, m.group(1)
        m = _REF_DEF.match(line)
        if m:
            yield no, m.group(1)


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)) or target.startswith("//")


def broken_links(path: Path) -> list:
    problems = []
    for no, target in links(path):
        if is_external(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = path if not file_part else (path.parent / unquote(file_part)).resolve()
        where = f"{path.relative_to(ROOT)}:{no}: {target}"
        if not dest.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and dest.suffix == ".md" and unquote(anchor).lower() not in anchors(dest):
            problems.append(f"{where} (no heading #{anchor} in {dest.relative_to(ROOT)})")
    return problems


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


def test_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"


def test_readme_links_a_page_per_feature_and_says_how_to_report():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = ("locomotion", "drive", "gesture", "face", "retargeting", "export_render", "batch",
             "python_api", "models_and_data", "limits", "testing")
    for page in pages:
        assert (ROOT / "docs" / f"{page}.md").is_file()
        assert f"(docs/{page}.md" in text, f"README.md does not link docs/{page}.md"
    assert "reporting-problems" in anchors(ROOT / "README.md")


def test_the_checker_sees_what_it_should(tmp_path):
    """The slug rule and the link finder on a made-up page."""
    assert slug("Scripting API: `bpy.ops.rigmind.*`") == "scripting-api-bpyopsrigmind"
    assert slug("Held-out BC / L1Div / FD") == "held-out-bc--l1div--fd"
    assert slug("The model in `models/`") == "the-model-in-models"
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# Here\n\n## Here\n", encoding="utf-8")
    page.write_text("# Top\n\n[ok](there.md#here-1) [self](#top) `[code](nowhere.md)`\n"
                    "```\n[fenced](nowhere.md)\n```\n[bad](there.md#gone) ![img](missing.png) "
                    "[web](https://example.org/x)\n", encoding="utf-8")
    found = [t for _, t in links(page)]
    assert found == ["there.md#here-1", "#top", "there.md#gone", "missing.png", "https://example.org/x"]
    assert anchors(tmp_path / "there.md") == {"here", "here-1"}
