"""Fast unit tests of ``lab_snippets.labs.publish``: the instructor source, the nbgrader config, the
release of the fixture chapter (nbgrader's converter replaced; tests/test_labs.py runs the real one)
and the leak check on a release (no kernel, no sandbox)."""

from __future__ import annotations

import stat
import sys
import types
from pathlib import Path

import nbformat
import pytest

from lab_snippets.labs import publish
from lab_snippets.labs.common import COURSE_ID, IGNORE, LabError

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "labs" / "90_fixture_lab.py"
STEM = FIXTURE.stem


class FakeAPI:
    """nbgrader's API as ``release`` uses it (the real one, whose import alone takes seconds, makes
    the course in tests/test_labs.py): ``generate_assignment`` writes the student version."""

    made = []

    def __init__(self, coursedir, config):
        self.coursedir, self.config = coursedir, config

    def generate_assignment(self, stem, force):
        FakeAPI.made.append((stem, force, self.config))
        if self.fail:
            return {"success": False, "error": None, "log": "the converter said no"}
        rel = Path(self.config.CourseDirectory.root) / "release" / stem
        rel.mkdir(parents=True, exist_ok=True)
        nbformat.write(_student(**self.leak), rel / f"{stem}.ipynb")
        return {"success": True}

    fail, leak = False, {}


@pytest.fixture
def fake_nbgrader(monkeypatch):
    import nbgrader.coursedir  # noqa: F401 - the real package first (its own imports need it)

    apps = types.ModuleType("nbgrader.apps")
    apps.NbGraderAPI = FakeAPI
    monkeypatch.setitem(sys.modules, "nbgrader.apps", apps)
    monkeypatch.setattr(FakeAPI, "made", [])
    return FakeAPI


@pytest.fixture
def released(tmp_path, fake_nbgrader):
    course = tmp_path / "course" / "labs"
    lines = []
    paths = publish.release([str(FIXTURE)], course_dir=course, log=lines.append)
    return course.resolve(), paths, lines


def test_release_writes_the_student_version_where_nbgrader_puts_it(released):
    course, paths, lines = released
    assert paths == [course / "release" / STEM / f"{STEM}.ipynb"]
    assert paths[0].is_file()
    assert (course / "source" / STEM / f"{STEM}.ipynb").is_file()
    assert len(lines) == 1 and lines[0].startswith(f"released {STEM}: {paths[0]}")
    assert f"(source source/{STEM}/{STEM}.ipynb, " in lines[0]
    (stem, force, config), = FakeAPI.made
    assert (stem, force) == (STEM, True)
    assert config.CourseDirectory.db_url == f"sqlite:///{course}/gradebook.db"


def test_a_failed_generate_assignment_is_a_named_error(tmp_path, fake_nbgrader, monkeypatch):
    monkeypatch.setattr(FakeAPI, "fail", True)
    with pytest.raises(LabError, match=f"generate_assignment {STEM} failed:\nthe converter said no"):
        publish.release([str(FIXTURE)], course_dir=tmp_path, log=lambda *a: None)


def test_a_release_that_leaks_is_stopped(tmp_path, fake_nbgrader, monkeypatch):
    monkeypatch.setattr(FakeAPI, "leak", {"raise NotImplementedError()": "return a + b"})
    with pytest.raises(LabError, match="leaks solution/hidden-test lines"):
        publish.release([str(FIXTURE)], course_dir=tmp_path, log=lambda *a: None)


def test_the_course_folder_is_the_instructors_alone(released):
    course, _, _ = released
    assert stat.S_IMODE(course.stat().st_mode) == 0o700


def test_the_course_gets_an_nbgrader_config_for_the_nbgrader_cli(released):
    course, _, _ = released
    text = (course / "nbgrader_config.py").read_text()
    assert f"c.CourseDirectory.course_id = {COURSE_ID!r}" in text
    assert f"c.CourseDirectory.ignore = {IGNORE!r}" in text
    assert '"lab_snippets.labs.feedback.HideTestCode",' in text
    from traitlets.config import Config

    config = Config()
    exec(compile(text, "nbgrader_config.py", "exec"), {"get_config": lambda: config})
    assert config.CourseDirectory.course_id == COURSE_ID and config.Execute.timeout == 30
    programmatic = publish.nbgrader_config(course)
    assert config.GenerateFeedback.preprocessors == programmatic.GenerateFeedback.preprocessors


def test_the_student_version_holds_no_solution_and_no_hidden_test(released):
    _, paths, _ = released
    text = paths[0].read_text()
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN", "SECRET-HIDDEN-MARKER", "return a + b"):
        assert secret not in text
    publish.check_release(FIXTURE, paths[0].parent)  # the release's own check passes again


def test_the_programmatic_config_keeps_the_gradebook_in_the_course(tmp_path):
    c = publish.nbgrader_config(tmp_path, timeout=12)
    assert c.CourseDirectory.root == str(tmp_path)
    assert c.CourseDirectory.course_id == COURSE_ID
    assert c.CourseDirectory.db_url == f"sqlite:///{tmp_path}/gradebook.db"
    assert c.CourseDirectory.ignore == IGNORE and c.CourseDirectory.ignore is not IGNORE
    assert c.GenerateAssignment.create_assignment is True
    assert c.Execute.timeout == 12 and c.Execute.raise_on_iopub_timeout is False
    assert "lab_snippets.labs.feedback.HideTestCode" in c.GenerateFeedback.preprocessors
    assert publish.nbgrader_config(tmp_path).Execute.timeout == 30


def test_build_source_writes_the_instructor_version_with_nbgrader_metadata(tmp_path):
    out = publish.build_source(FIXTURE, tmp_path)
    assert out == tmp_path / "source" / STEM / f"{STEM}.ipynb"
    nb = nbformat.read(out, as_version=4)
    assert "jupytext" not in nb.metadata and nb.metadata["kernelspec"]["name"] == "python3"
    assert all("nbgrader" in c.metadata for c in nb.cells)
    assert "return a + b" in "".join(c.source for c in nb.cells), "the instructor's copy keeps the solution"
    assert "language" not in nb.metadata


def test_a_chinese_source_translates_the_markdown_only(tmp_path, monkeypatch):
    from lab_snippets.book import zhnotebooks

    def chinese(cells, stem):
        assert stem == STEM
        for c in cells:
            if c.cell_type == "markdown":
                c.source = "中文 " + c.source

    monkeypatch.setattr(zhnotebooks, "chinese_cells", chinese)
    nb = nbformat.read(publish.build_source(FIXTURE, tmp_path, lang="zh_CN"), as_version=4)
    assert nb.metadata["language"] == "zh_CN"
    assert all(c.source.startswith("中文 ") == (c.cell_type == "markdown") for c in nb.cells)


def test_a_chapter_without_a_chinese_catalogue_or_an_unknown_language_is_a_named_error(tmp_path,
                                                                                    monkeypatch):
    from lab_snippets.book import zhnotebooks

    def missing(cells, stem):
        raise LookupError(f"no Chinese catalogue for {stem}")

    monkeypatch.setattr(zhnotebooks, "chinese_cells", missing)
    with pytest.raises(LabError, match=f"no Chinese catalogue for {STEM}"):
        publish.build_source(FIXTURE, tmp_path, lang="zh_CN")
    with pytest.raises(LabError, match="the languages are en, zh_CN"):
        publish.build_source(FIXTURE, tmp_path, lang="fr")


def _release_dir(tmp_path, nb):
    rel = tmp_path / "release" / STEM
    rel.mkdir(parents=True)
    nbformat.write(nb, rel / f"{STEM}.ipynb")
    return rel


def _student(**replace):
    from lab_snippets.labs.markers import read_notebook

    nb = read_notebook(FIXTURE)
    for c in nb.cells:
        if "solution" in c.metadata.get("tags", []):
            c.source = c.source.split("    ### BEGIN SOLUTION")[0] + "    raise NotImplementedError()"
        elif "hidden-tests" in c.metadata.get("tags", []):
            c.source = ""
    for old, new in replace.items():
        cell = next(c for c in nb.cells if old in c.source)
        cell.source = cell.source.replace(old, new)
    return nb


def test_check_release_accepts_a_clean_student_version(tmp_path):
    publish.check_release(FIXTURE, _release_dir(tmp_path, _student()))


def test_check_release_rejects_a_file_that_is_not_a_notebook(tmp_path):
    rel = _release_dir(tmp_path, _student())
    (rel / "90_fixture_lab.py").write_text("# the source")
    with pytest.raises(LabError, match=r"non-notebook files: \['90_fixture_lab.py'\]"):
        publish.check_release(FIXTURE, rel)


@pytest.mark.parametrize(("old", "new", "message"), [
    ("raise NotImplementedError()", "return a + b",
     "leaks solution/hidden-test lines: \\['return a \\+ b'\\]"),
    ("raise NotImplementedError()", "### BEGIN SOLUTION", "still contains '### BEGIN SOLUTION'"),
    ("def check(value", "### END HIDDEN TESTS\ndef check(value", "still contains '### END HIDDEN TESTS'"),
])
def test_check_release_rejects_a_leak(tmp_path, old, new, message):
    nb = _student()
    last = [c for c in nb.cells if old in c.source][-1]
    last.source = last.source.replace(old, new)
    with pytest.raises(LabError, match=message):
        publish.check_release(FIXTURE, _release_dir(tmp_path, nb))


def test_a_chapter_is_found_by_path_or_by_stem(tmp_path):
    chapter = tmp_path / "07_queue.py"
    chapter.write_text("# %%\n")
    assert publish._resolve_chapter(str(chapter), tmp_path / "elsewhere") == chapter.resolve()
    assert publish._resolve_chapter("07_queue", tmp_path) == chapter.resolve()
    assert publish._resolve_chapter("nowhere/07_queue.ipynb", tmp_path) == chapter.resolve()
    with pytest.raises(LabError, match="no chapter '08_x'"):
        publish._resolve_chapter("08_x", tmp_path)


def test_nothing_to_release_is_said_and_returns_nothing(tmp_path):
    lines = []
    assert publish.release(course_dir=tmp_path / "c", notebooks_dir=tmp_path, log=lines.append) == []
    assert lines == [f"no chapters with a 'solution' cell in {tmp_path}; nothing to release"]
    assert not (tmp_path / "c").exists()


def test_a_directive_title_is_translated_like_a_paragraph():
    # Sphinx's gettext makes a dropdown's title a message of its own; the zh notebooks (and zh
    # student versions) look it up too. Counterfactual: only paragraphs and table cells translated
    # (the zh notebook of 27 kept "What the model shows" in English).
    from lab_snippets.book.zhnotebooks import translate_markdown

    table = {"What the grader checks": "评分器检查什么", "Body text.": "正文。"}
    source = ":::{dropdown} What the grader checks\n\nBody text.\n\n:::\n\n````{note} Unknown title\n````"
    assert translate_markdown(source, table) == (
        ":::{dropdown} 评分器检查什么\n\n正文。\n\n:::\n\n````{note} Unknown title\n````")


def test_a_released_notebook_reads_its_dropdowns_as_plain_markdown(tmp_path):
    # The exercises keep their graded list in a MyST dropdown; a student's JupyterLab (no MyST
    # extension) would show the fence as text. Counterfactual: the fences left in the release.
    source = "Task.\n\n:::{dropdown} What the grader checks\n\n- **calls**: once each\n\n:::\n\nAfter."
    assert publish.plain_directives(source) == (
        "Task.\n\n**What the grader checks**\n\n- **calls**: once each\n\n\nAfter.")
    text = FIXTURE.read_text(encoding="utf-8").replace(
        "# %% [markdown]\n", "# %% [markdown]\n# :::{dropdown} Graded\n#\n# - one\n#\n# :::\n#\n", 1)
    chapter = tmp_path / FIXTURE.name
    chapter.write_text(text, encoding="utf-8")
    nb = nbformat.read(publish.build_source(chapter, tmp_path / "course", lang="en"), as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "**Graded**" in markdown and ":::" not in markdown
