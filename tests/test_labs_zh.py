"""The student release in Chinese (``python -m lab_snippets.labs release --lang zh_CN``): the
markdown from the zh catalogues, the code and what nbgrader strips exactly as in the English release."""

from __future__ import annotations

import re

import nbformat
import pytest

import lab_snippets.labs as labs
from lab_snippets.labs.cli import main
from lab_snippets.labs.common import REPO

CHAPTER = "01_async_def"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def courses(tmp_path_factory):
    out = {}
    for lang in ("en", "zh_CN"):
        course = tmp_path_factory.mktemp(f"course-{lang}")
        (path,) = labs.release([CHAPTER], course_dir=course, log=lambda *a: None, lang=lang)
        out[lang] = course, path
    return out


@pytest.fixture(scope="module")
def both(courses):
    return {lang: nbformat.read(path, as_version=4) for lang, (_, path) in courses.items()}


def _cells(nb, kind):
    return [c for c in nb.cells if c.cell_type == kind]


def test_zh_release_markdown_is_chinese(both):
    en, zh = (_cells(both[lang], "markdown") for lang in ("en", "zh_CN"))
    assert len(en) == len(zh) > 10
    chinese = [c for c in zh if CJK.search(c.source)]
    assert len(chinese) >= 0.9 * len(zh), f"{len(zh) - len(chinese)} of {len(zh)} markdown cells not Chinese"
    # the English release quotes only the original series' title in Chinese (its first cell)
    assert sum(bool(CJK.search(c.source)) for c in en) <= 1, "the English release stays English"
    assert both["zh_CN"].metadata.get("language") == "zh_CN"


def test_zh_release_code_and_stripping_are_the_english_release(both):
    """Every code cell (stubs where solutions were, visible tests, hidden tests removed) is the
    English student version's, character for character, with the same nbgrader metadata."""
    en, zh = (_cells(both[lang], "code") for lang in ("en", "zh_CN"))
    assert [c.source for c in zh] == [c.source for c in en]
    assert [c.metadata.get("nbgrader") for c in zh] == [c.metadata.get("nbgrader") for c in en]
    text = "\n".join(c.source for c in zh)
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    assert any((c.metadata.get("nbgrader") or {}).get("solution") for c in zh), "no exercise released"


def test_release_refuses_a_language_or_chapter_it_cannot_make(tmp_path, capsys):
    assert main(["release", "tests/fixtures/labs/90_fixture_lab.py", "--lang", "zh_CN",
                 "--course-dir", str(tmp_path)]) == 2
    assert "no Chinese catalogue" in capsys.readouterr().err
    with pytest.raises(labs.LabError, match="no release in 'fr'"):
        labs.release([CHAPTER], course_dir=tmp_path, log=lambda *a: None, lang="fr")


def _sandbox_problem():
    try:
        labs.detect_isolation([REPO], labs.Options())
    except labs.LabError as exc:
        return str(exc)
    return None


@pytest.mark.timeout(600)
def test_a_zh_course_grades_like_the_english_one(courses, tmp_path):
    """`grade --course-dir` on the Chinese course: the reference (its source) earns full marks and
    the student version as released earns none (in the sandbox, as every grading runs)."""
    problem = _sandbox_problem()
    if problem is not None:
        pytest.skip(f"grading runs only in the sandbox: {problem}")
    course, released = courses["zh_CN"]
    for student, notebook in (("reference", course / "source" / CHAPTER / f"{CHAPTER}.ipynb"),
                              ("blank", released)):
        folder = tmp_path / "subs" / student / CHAPTER
        folder.mkdir(parents=True)
        (folder / f"{CHAPTER}.ipynb").write_bytes(notebook.read_bytes())
    rows = labs.grade(tmp_path / "subs", out=tmp_path / "grades.csv", course_dir=course,
                      options=labs.Options(timeout=60, submission_timeout=300), log=lambda *a: None)
    scores = {r.student: (r.score, r.max_score) for r in rows}
    assert scores["reference"][0] == scores["reference"][1] > 0, scores
    assert scores["blank"][0] == 0, scores
