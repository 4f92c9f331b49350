"""Fast unit tests of ``lab_snippets.labs.markers``: reading chapters, the light cell tags expanded
into nbgrader's metadata, the marker checks and the secret lines a student version must not hold
(no release, no kernel; ``bench.mutation`` runs them per mutant)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from lab_snippets.labs import markers
from lab_snippets.labs.common import BEGIN_HIDDEN, BEGIN_SOLUTION, END_HIDDEN, END_SOLUTION, LabError

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "labs" / "90_fixture_lab.py"


def code(source, *tags):
    return new_code_cell(source, metadata={"tags": list(tags)} if tags else {})


def solution(body, head="def solve(x):", tags=("solution",)):
    return code(f"{head}\n    {BEGIN_SOLUTION}\n    {body}\n    {END_SOLUTION}\n", *tags)


def hidden(body, *extra):
    return code(f"{BEGIN_HIDDEN}\n{body}\n{END_HIDDEN}", "tests", "hidden-tests", *extra)


def flags(nb):
    return [c.metadata["nbgrader"] for c in nb.cells]


def test_read_notebook_reads_percent_py_and_ipynb_alike(tmp_path):
    from_py = markers.read_notebook(FIXTURE)
    ipynb = tmp_path / "copy.ipynb"
    nbformat.write(from_py, ipynb)
    from_ipynb = markers.read_notebook(ipynb)
    assert [c.source for c in from_ipynb.cells] == [c.source for c in from_py.cells]
    assert [markers._tags(c) for c in from_ipynb.cells] == [markers._tags(c) for c in from_py.cells]
    assert sum("solution" in markers._tags(c) for c in from_py.cells) == 2


def test_has_solution_and_the_chapters_with_one(tmp_path):
    nbformat.write(new_notebook(cells=[solution("return x")]), tmp_path / "a.ipynb")
    (tmp_path / "b_without.py").write_text("# %%\nx = 1\n")
    (tmp_path / "c_with.py").write_text(FIXTURE.read_text())
    assert markers.has_solution(tmp_path / "c_with.py")
    assert not markers.has_solution(tmp_path / "b_without.py")
    assert markers.chapters_with_solutions(tmp_path) == [tmp_path / "c_with.py"], "only .py chapters"


def test_points_come_from_a_points_tag_or_default_to_one():
    assert markers._points({"tests"}) == 1.0
    assert markers._points(["tests", "points-2"]) == 2.0
    assert markers._points(["points-0.5"]) == 0.5
    assert markers._points(["points-x", "points-3"]) == 3.0
    assert markers._points(["my-points-4"]) == 1.0


def test_region_takes_the_lines_strictly_inside_each_pair_of_markers():
    source = "\n".join(["zz outside", f"  {BEGIN_SOLUTION}", "  a = 1", "  zz = 2", f"  {END_SOLUTION}",
                        "zz after", BEGIN_SOLUTION, "b", END_SOLUTION, "zz end"])
    assert markers._region(source, BEGIN_SOLUTION, END_SOLUTION) == ["  a = 1", "  zz = 2", "b"]
    assert markers._region("no markers", BEGIN_SOLUTION, END_SOLUTION) == []


def test_a_marked_notebook_gives_each_cell_its_role():
    nb = new_notebook(cells=[
        new_markdown_cell("# Title"),
        code("import asyncio"),
        solution("return x", head="async def fetch(x):"),
        code("assert True", "tests"),
        hidden("assert fetch", "points-2"),
        solution("return 2", head="x = 1"),
        code("assert x", "tests"),
    ])
    marked = markers.mark_notebook(nb, "demo.py")
    assert marked is nb
    got = flags(nb)
    assert [f["grade_id"] for f in got] == ["markdown_00", "code_01", "fetch", "fetch_tests",
                                            "fetch_hidden_tests", "exercise_2", "exercise_2_tests"]
    assert got[2]["solution"] is True and got[2]["grade"] is False and got[2]["locked"] is False
    assert got[3]["grade"] is True and got[3]["solution"] is False and got[3]["points"] == 1.0
    assert got[4]["grade"] is True and got[4]["points"] == 2.0
    assert got[0]["locked"] is True and got[1]["locked"] is True and got[1]["grade"] is False
    assert all(f["schema_version"] == 3 for f in got)


def test_the_first_unnamed_exercise_is_exercise_1_and_grade_ids_are_unique():
    nb = new_notebook(cells=[solution("pass", head="x = 1"), code("assert x", "tests"),
                             code("assert x", "tests"), solution("return 1"), solution("return 2")])
    ids = [f["grade_id"] for f in flags(markers.mark_notebook(nb))]
    assert ids == ["exercise_1", "exercise_1_tests", "exercise_1_tests_2", "solve", "solve_2"]


def test_marking_twice_gives_the_same_metadata():
    nb = markers.read_notebook(FIXTURE)
    once = [dict(f) for f in flags(markers.mark_notebook(nb, "f.py"))]
    assert [dict(f) for f in flags(markers.mark_notebook(nb, "f.py"))] == once


@pytest.mark.parametrize(("cells", "message"), [
    ([code("x = 1")], "no cell tagged 'solution'"),
    ([new_markdown_cell(f"{BEGIN_SOLUTION}\n{END_SOLUTION}", metadata={"tags": ["solution"]})],
     "must be a code cell"),
    ([solution("x"), new_markdown_cell("text", metadata={"tags": ["tests"]})], "must be a code cell"),
    ([solution("x"), code("assert x", "hidden-tests")], "must also be tagged 'tests'"),
    ([code("def f():\n    return 1\n", "solution")], r"found 0 / 0"),
    ([code(f"{BEGIN_SOLUTION}\nx\n{BEGIN_SOLUTION}\n{END_SOLUTION}", "solution")], r"found 2 / 1"),
    ([solution("x"), code("assert x", "tests", "hidden-tests")], "END HIDDEN TESTS"),
])
def test_malformed_cells_are_named_errors(cells, message):
    with pytest.raises(LabError, match=message):
        markers.mark_notebook(new_notebook(cells=cells), "bad.py")


def test_a_solution_needs_matching_markers_one_or_many():
    nb = new_notebook(cells=[code(f"{BEGIN_SOLUTION}\na\n{END_SOLUTION}\n{BEGIN_SOLUTION}\nb\n{END_SOLUTION}",
                                  "solution")])
    assert flags(markers.mark_notebook(nb))[0]["solution"] is True
    with pytest.raises(LabError, match="found 1 / 0"):
        markers.mark_notebook(new_notebook(cells=[code(f"{BEGIN_SOLUTION}\nx = 1", "solution")]))


def test_the_first_def_names_an_exercise():
    assert markers._first_def("x = 1\nclass Box:\n    pass\ndef f():\n    pass\n") == "Box"
    assert markers._first_def("async def go():\n    pass\n") == "go"
    assert markers._first_def("x = 1\n") is None
    assert markers._first_def("def broken(:\n") is None


def test_secret_lines_are_the_solution_and_hidden_lines_that_appear_nowhere_else():
    nb = new_notebook(cells=[
        code("value = shared_helper()\nprint('public')"),
        solution("return secret_answer(x)\n    # a comment is no secret\n    value = shared_helper()"),
        hidden("assert solve(41) == 42\nprint('public')"),
        code(f"{BEGIN_HIDDEN}\nassert not_hidden_without_the_tag()\n{END_HIDDEN}", "tests"),
    ])
    assert markers._secret_lines(nb) == {"return secret_answer(x)", "assert solve(41) == 42"}


def test_the_fixtures_secret_lines_hold_its_solutions_and_hidden_checks():
    secret = markers._secret_lines(markers.read_notebook(FIXTURE))
    assert "return a + b" in secret and "await asyncio.sleep(0)" in secret
    assert any("SECRET-HIDDEN-MARKER" in s for s in secret)
    assert not any("gather_squares([])" in s for s in secret), "outside the hidden markers: public"


def test_defined_names_skips_star_imports_and_keeps_the_others():
    assert markers.defined_names("from os import *\nfrom os import path as p, sep\nimport a.b\n") == [
        "p", "sep", "a"]


def test_hidden_tests_carry_the_chapter_solution_as_their_reference():
    from lab_snippets.scenarios import REFERENCE_SOURCE, reference
    first = solution("return x + 1")
    nb = new_notebook(cells=[first, hidden("assert solve(1) == 2"), solution("return 3", head="def other():"),
                             hidden("assert other() == 3")])
    markers.mark_notebook(nb, "demo.py")
    markers.mark_notebook(nb, "demo.py")  # marked twice: bound once
    lines = nb.cells[1].source.splitlines()
    assert lines[0] == BEGIN_HIDDEN and lines[1].startswith(f"{REFERENCE_SOURCE} = ")
    assert BEGIN_SOLUTION not in lines[1] and END_SOLUTION not in lines[1], "nbgrader would see a region"
    assert sum(ln.startswith(REFERENCE_SOURCE) for ln in nb.cells[3].source.splitlines()) == 1
    # a submission replaces the solution cell after marking: the hidden cell still holds the chapter's
    nb.cells[0].source = "def solve(x):\n    return 0"
    scope: dict = {}
    exec(nb.cells[1].source.splitlines()[1], scope)
    assert reference(scope, "solve")(1) == 2, "the reference is the chapter's solution, not the submission"
    scope = {}
    exec(nb.cells[3].source.splitlines()[1], scope)
    assert reference(scope, "other")() == 3 and reference(scope, "solve")(1) == 2, (
        "every solution cell before it")
    assert reference({"solve": abs}, "solve") is abs, "in the chapter itself: the chapter's own definition"
