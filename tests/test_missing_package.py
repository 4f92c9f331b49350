"""A chapter whose package is not installed for this Python (Ray on 3.15: no wheel) says why and is
skipped by nbval, `labs validate` and `labs grade`, instead of failing on `import ray`; it comes back
by itself once the package can be imported (issue 36)."""

from __future__ import annotations

import importlib.util
import platform
from pathlib import Path, PurePosixPath

import pytest

from lab_snippets.book import chapters
from lab_snippets.labs import cli, grader

pytest_plugins = ["pytester"]

RAY_CHAPTER = next(c for c in chapters.CHAPTERS if c.number == "28")


@pytest.fixture
def without(monkeypatch):
    """Make ``find_spec`` answer None for the named packages, as on a Python where they are not installed."""
    real = importlib.util.find_spec

    def hide(*names):
        monkeypatch.setattr(importlib.util, "find_spec",
                            lambda name, *a, **k: None if name in names else real(name, *a, **k))
    return hide


def test_a_ray_chapter_names_the_missing_package_and_this_python(without):
    without("ray")
    for ref in (RAY_CHAPTER, "29", RAY_CHAPTER.path, Path("28_ray_futures_actors.py")):
        reason = chapters.missing_package(ref)
        assert reason and "needs ray" in reason and platform.python_version() in reason, ref
    assert chapters.missing_package("26") is None, "a chapter that needs no extra package runs"


def test_the_chapter_comes_back_when_the_package_is_found(monkeypatch):
    import importlib.machinery
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: (
        importlib.machinery.ModuleSpec(name, None) if name == "ray" else real(name, *a, **k)))
    assert chapters.missing_package("28") is None, "decided by find_spec, not by the version"


def test_nbval_skips_every_cell_with_the_reason_and_starts_no_kernel(without, pytester):
    without("ray")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-o", "addopts=", "-p", "lab_snippets.testing.nbplugin",
        "--nbval-lax", "-rs", str(RAY_CHAPTER.path))
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) > 10 and not outcomes.get("passed") and not outcomes.get("failed")
    assert "needs ray, which is not installed" in result.stdout.str()


def test_validate_reports_skipped_with_the_reason_and_runs_nothing(without, monkeypatch, capsys):
    without("ray")
    monkeypatch.setattr(cli, "validate", lambda *a, **k: pytest.fail("validate ran the notebook"))
    assert cli.main(["validate", str(RAY_CHAPTER.path)]) == 0
    out = capsys.readouterr().out
    assert "SKIPPED" in out and "needs ray" in out


def test_grade_marks_the_row_skipped_and_writes_no_zero(without, monkeypatch, tmp_path):
    without("ray")
    row = grader.Row("alice", "lab28")
    assignments = {"lab28": (RAY_CHAPTER.path.stem, {"t1": 1.0})}
    monkeypatch.setattr(grader.tempfile, "mkdtemp", lambda **k: pytest.fail("a sandbox was prepared"))
    out = grader._grade_one(row, tmp_path, assignments, None, [], grader.Options())
    assert (out.status, out.score) == ("skipped", 0.0) and "needs ray" in out.reason


def test_the_book_build_neither_preexecutes_nor_lets_myst_nb_execute_it(without):
    from types import SimpleNamespace

    from lab_snippets import REPO_ROOT
    from lab_snippets.book import pages, preexec

    without("ray")
    names = [p.name for p in preexec.chapter_files(REPO_ROOT)]
    assert RAY_CHAPTER.path.name not in names and "26_async_subprocesses.py" in names
    config = SimpleNamespace(nb_execution_excludepatterns=["kept"], suppress_warnings=["kept"])
    pages._skip_unrunnable(None, config)
    assert config.nb_execution_excludepatterns[0] == "kept"
    assert config.suppress_warnings == ["kept", "myst-nb.lexer"], "an unexecuted page names no lexer"
    patterns = config.nb_execution_excludepatterns  # myst-nb matches them as PurePosixPath.match does
    assert any(PurePosixPath(RAY_CHAPTER.path.as_posix()).match(p) for p in patterns)
    assert not any(PurePosixPath("/r/notebooks/26_async_subprocesses.py").match(p) for p in patterns)


def test_the_status_page_names_the_python_that_built_it():
    from lab_snippets.book import pages

    (node,), _ = pages._build_python_role("build-python", "", "version", 1, None)
    assert node.astext() == f"{platform.python_implementation()} {platform.python_version()}"
    assert "{build-python}`version`" in (chapters.ROOT / "book" / "status.md").read_text(encoding="utf-8")
