"""labs.deps: which cells a grade needs. No kernel: what runs is read off the plan."""

from __future__ import annotations

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from lab_snippets.labs import deps

SETUP = "import asyncio\nimport math\nimport matplotlib.pyplot as plt\n\nSEED = 6\n"
EXPERIMENT = "results = [math.sqrt(n) for n in range(3)]\nplt.plot(results)\n"
SOLUTION = ("async def double(x):\n    ### BEGIN SOLUTION\n    await asyncio.sleep(0)\n"
            "    return 2 * x\n    ### END SOLUTION\n")
TEST = "assert await double(2) == 4\n"


def _lab(*cells, solution=SOLUTION):
    """[markdown, set-up, cells..., solution, test], tagged as a chapter tags them."""
    nb = new_notebook(cells=[new_markdown_cell("# lab"), new_code_cell(SETUP),
                             *[new_code_cell(c) for c in cells],
                             new_code_cell(solution, metadata={"tags": ["solution"]}),
                             new_code_cell(TEST, metadata={"tags": ["tests"]})])
    deps.record(nb)
    return nb


def _ran(nb, rec=None):
    p = deps.plan(nb, rec)
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and i not in p.skip], p


def test_an_experiment_no_test_reads_is_skipped_and_the_setup_is_cut_to_what_is_read():
    nb = _lab(EXPERIMENT)
    ran, p = _ran(nb)
    assert ran == [1, 3, 4], "the set-up, the solution and the test run; the experiment does not"
    assert p.trimmed == {1: "import asyncio\n"}, "the set-up keeps only the import the solution reads"


def test_a_cell_the_solution_reads_runs_and_the_value_seen_is_the_last_rebinding():
    nb = _lab("def helper(x):\n    return x\n", "calls = helper(1)\n",
              solution=SOLUTION.replace("return 2 * x", "return 2 * helper(x)"))
    ran, _ = _ran(nb)
    assert ran == [1, 2, 4, 5], "the solution calls helper: its cell runs; the experiment calling it does not"
    nb = _lab("def helper(x):\n    return x\n", "helper = abs\n",
              solution=SOLUTION.replace("return 2 * x", "return 2 * helper(x)"))
    ran, _ = _ran(nb)
    assert ran == [1, 3, 4, 5], "when the test calls the solution, helper is the one rebound last"
    nb = _lab("x = 1\n", "x = 2\nprint(x)\n", "y = x\n")
    nb.cells[-1].source = TEST + "assert y == 2\n"
    deps.record(nb)
    ran, _ = _ran(nb)
    assert 2 not in ran and {3, 4} <= set(ran), "y comes from the last rebinding of x, not the first"


def test_a_name_changed_in_place_between_its_binding_and_its_reader_is_kept():
    nb = _lab("seen = []\n", "seen.append(1)\n", "seen.sort()\n", "other = seen\n")
    nb.cells[-1].source = TEST + "assert seen == [1]\n"
    deps.record(nb)
    ran, _ = _ran(nb)
    assert {2, 3, 4} <= set(ran) and 5 not in ran


def test_a_submission_that_reads_what_only_an_experiment_binds_gets_the_experiment():
    nb = _lab(EXPERIMENT)
    nb.cells[3].source = SOLUTION.replace("return 2 * x", "return 2 * x + 0 * len(results)")
    ran, p = _ran(nb)
    assert 2 in ran, "the student's solution reads `results`: the experiment that binds it runs"
    assert 1 not in p.trimmed, "the experiment reads math and plt, so the set-up runs whole"


def test_a_submission_that_reads_a_name_the_cut_setup_dropped_gets_the_whole_setup():
    nb = _lab(EXPERIMENT)
    nb.cells[3].source = SOLUTION.replace("return 2 * x", "return int(math.pow(x, 1)) * 2")
    ran, p = _ran(nb)
    assert 1 in ran and 1 not in p.trimmed and 2 not in ran


def test_a_cell_the_student_changed_or_added_runs_in_its_place():
    nb = _lab(EXPERIMENT)
    nb.cells[2].source += "print('mine')\n"
    assert _ran(nb)[0] == [1, 2, 3, 4], "a changed experiment runs"
    nb = _lab(EXPERIMENT)
    nb.cells.insert(3, new_code_cell("print('added')\n"))
    assert _ran(nb)[0] == [1, 3, 4, 5], "an added cell runs; the unchanged experiment does not"


def test_a_function_that_reads_a_global_gets_it_from_where_its_callers_run():
    nb = _lab("LIMIT = 3\n", "def capped(x):\n    return min(x, LIMIT)\n",
              solution=SOLUTION.replace("return 2 * x", "return 2 * capped(x)"))
    assert _ran(nb)[0] == [1, 2, 3, 4, 5]
    nb.cells[-1].source = "LIMIT = 9\n" + TEST  # the test sets the global before it calls
    deps.record(nb)
    assert 2 not in _ran(nb)[0], "the test rebinds LIMIT first: the earlier one is not needed"


def test_a_magic_or_unparsable_cell_always_runs_and_the_whole_plan_fails_safe():
    nb = _lab("%time z = 1\n", "def broken(:\n")
    ran, p = _ran(nb)
    assert {2, 3} <= set(ran), "a magic or unparsable cell runs: nothing is known of what it binds"
    assert deps.cell_names("%time z = 1\n") is None and deps.cell_names("def broken(:\n") is None
    assert deps.plan(nb, {"skippable": ["not", "a", "dict"]}) == deps.Plan(), "a malformed record runs it all"
    assert deps.plan(nb, {}) == deps.Plan()


def test_no_record_means_everything_runs():
    nb = _lab(EXPERIMENT)
    nb.metadata.pop(deps.META_KEY)
    assert deps.plan(nb) == deps.Plan()


@pytest.mark.parametrize(("source", "binds", "uses"), [
    ("for n in range(3):\n    total = n\n", {"n", "total"}, {"range", "n"}),
    ("def f(a):\n    return a + g\n", {"f"}, set()),
    ("xs.append(1)\nd['k'] = 2\nobj.attr = 3\n", {"xs", "d", "obj"}, {"xs", "d", "obj"}),
    ("import asyncio\nasyncio.run(main())\n", {"asyncio"}, {"asyncio", "main"}),
    ("def bump():\n    global count\n    count += 1\n", {"bump", "count"}, set()),
])
def test_what_a_cell_binds_and_reads_at_top_level(source, binds, uses):
    names = deps.cell_names(source, frozenset({"asyncio"}))
    assert (set(names.binds), set(names.uses)) == (binds, uses)


def test_a_function_body_is_read_later_and_its_locals_are_not_the_notebooks():
    names = deps.cell_names("def f(a):\n    b = a + g\n    return [c for c in b]\n")
    assert names.later == {"g"} and not names.uses & {"a", "b", "c"}


@pytest.mark.parametrize("cell", ["z = [x + w for x in y]\n", "z = {x + w for x in y}\n",
                                  "z = {x: w for x in y}\n", "z = (x + w for x in y)\n"])
def test_a_comprehension_is_read_the_same_on_every_python(cell):
    """From 3.12 (PEP 709) ``symtable`` inlines list, set and dict comprehensions, so their loop
    variable looked bound by the cell and what they read looked read at once: chapters 01, 03,
    04, 06, 14, 17 and 29 had another grading plan (and verdict digest) on 3.12-3.15 than on 3.11.
    Counterfactual (visible on 3.12+, where nox runs this file): symtable's scopes as they come."""
    names = deps.cell_names(cell)
    assert (set(names.binds), set(names.uses), set(names.later)) == ({"z"}, {"y"}, {"w"})


def test_a_cell_with_top_level_await_is_analysed_on_every_python():
    """From 3.14 ``symtable`` refuses top-level ``await``/``async for``/``async with``; a notebook
    cell is full of them, and the import cell they read must not be skipped (3.14.8 graded chapter
    01's reference 0/2: ``NameError: name 'asyncio'``)."""
    cell = ("got = await asyncio.wait_for(job(), 1)\n"
            "async for x in stream(): seen.append(x)\n"
            "async with lock: pass\n"
            "both = [await y for y in pending]\n")
    names = deps.cell_names(cell)
    assert names is not None, "a cell with top-level await was not analysed"
    assert {"asyncio", "job", "stream", "seen", "lock", "pending"} <= names.uses
    assert {"got", "x", "both"} <= names.binds


def test_a_cell_that_cannot_be_analysed_runs_with_every_cell_before_it():
    sources = ["import asyncio\n", "unused = 1\n", "%time x = asyncio.sleep\n", "y = 2\n"]
    run, _ = deps.needed(sources, roots=[2])
    assert {0, 1, 2} <= run and 3 not in run, run
