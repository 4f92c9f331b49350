"""The mutation operators (``lab_snippets.labs.mutops``) and the recorded mutation scores
(``lab_snippets.labs.mutants``).

Each operator must make the expected mutant of a small solution, and only inside its
``### BEGIN SOLUTION`` region; an operator that changes nothing makes no mutant, which the
per-operator test notices. The recorded scores must name the mutants the reference solutions
give today, the equivalent-mutant list must still match the solutions, and the instructor page
must show the recorded scores. Grading the mutants is a maintainer command, not run here.
"""

from __future__ import annotations

import ast
import copy
import json
import textwrap

import pytest

from lab_snippets.labs import mutants as mt
from lab_snippets.labs import mutops


def _cell(body: str, head: str = "async def f(x, timeout, pool):") -> str:
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return f"{head}\n    ### BEGIN SOLUTION\n{body}\n    ### END SOLUTION\n"


def _norm(code: str) -> str:
    return ast.unparse(ast.parse(textwrap.dedent(code)))


# operator -> (solution body, the body of its first mutant)
CASES = {
    "drop-await": ("return await x()", "return x()"),
    "drop-finally": ("try:\n    return await x()\nfinally:\n    x.close()",
                     "return await x()\nx.close()"),
    "cleanup-into-try": ("try:\n    y = await x()\nexcept OSError:\n    pass\nfinally:\n    x.close()",
                         "try:\n    y = await x()\n    x.close()\nexcept OSError:\n    pass"),
    "drop-cancel": ("t = x()\nt.cancel()\nreturn t", "t = x()\npass\nreturn t"),
    "drop-kill": ("os.killpg(x, 9)\nx.terminate()", "pass\nx.terminate()"),
    "drop-join": ("x.start()\nx.join(timeout=1)", "x.start()\npass"),
    "drop-cleanup": ("x.set()\nreturn 1", "pass\nreturn 1"),
    "drop-timeout": ("return await asyncio.wait_for(x(), timeout)",
                     "return await asyncio.wait_for(x(), None)"),
    "enlarge-timeout": ("x.join(timeout=2)", "x.join(timeout=2 * 10 + 1)"),
    "swap-compare": ("if x < 3:\n    return 1", "if x <= 3:\n    return 1"),
    "swap-min-max": ("return min(x, timeout)", "return max(x, timeout)"),
    "blocking-sleep": ("await asyncio.sleep(x)", "__import__('time').sleep(x)"),
    "drop-guard": ("async with x:\n    return await x()", "return await x()"),
    "drop-shield": ("return await asyncio.shield(x)", "return await x"),
    "drop-reraise": ("try:\n    x()\nexcept OSError:\n    x.close()\n    raise",
                     "try:\n    x()\nexcept OSError:\n    x.close()\n    pass"),
    "serialize-task": ("t = asyncio.create_task(x())\nreturn await t",
                       "t = asyncio.create_task(asyncio.sleep(0, await x()))\nreturn await t"),
    "inline-executor": ("return await asyncio.get_running_loop().run_in_executor(pool, x, 1)",
                        "return await asyncio.ensure_future(asyncio.sleep(0, x(1)))"),
}


def test_every_operator_has_a_case():
    assert set(CASES) == set(mutops.OPERATORS), "add a CASES entry for each new operator"


@pytest.mark.parametrize("operator", sorted(CASES))
def test_operator_makes_the_expected_mutant(operator):
    body, want = CASES[operator]
    got = list(mutops.mutants(_cell(body), [operator]))
    assert got, f"{operator} made no mutant of:\n{body}"
    assert got[0].operator == operator and got[0].index == 0
    assert _norm(got[0].source) == _norm(_cell(want)), (
        f"{operator}: got\n{got[0].source}\nwanted\n{_norm(_cell(want))}")


def test_an_operator_that_changes_nothing_makes_no_mutant(monkeypatch):
    """The per-operator test above fails for an operator whose change is lost (no mutant)."""
    desc, find, _ = mutops.OPERATORS["drop-await"]
    monkeypatch.setitem(mutops.OPERATORS, "drop-await", (desc, find, lambda tree, node: None))
    assert list(mutops.mutants(_cell("return await x()"), ["drop-await"])) == []


def test_only_the_solution_region_is_mutated():
    cell = ("async def f(x):\n    await x.ready()\n    ### BEGIN SOLUTION\n    return await x()\n"
            "    ### END SOLUTION\n")
    got = list(mutops.mutants(cell, ["drop-await"]))
    assert [m.site for m in got] == ["return await x()"], [m.site for m in got]


def test_sites_are_numbered_in_source_order_and_the_enlarged_none_is_skipped():
    body = "x.join(timeout=None)\nx.join(timeout=1)\nx.join(timeout=2)"
    got = list(mutops.mutants(_cell(body), ["enlarge-timeout"]))
    assert [(m.index, m.site) for m in got] == [(1, "x.join(timeout=1)"), (2, "x.join(timeout=2)")]


def test_positional_timeouts_and_plain_dict_get():
    body = ("await asyncio.wait_for(x(), budget)\nasync with asyncio.timeout(timeout):\n    pass\n"
            "await asyncio.wait(x)\nreturn d.get(x)")
    got = [m for m in mutops.mutants(_cell(body), ["drop-timeout"])]
    assert [m.site for m in got] == ["await asyncio.wait_for(x(), budget)",
                                     "async with asyncio.timeout(timeout):"], [m.site for m in got]
    assert "asyncio.timeout(None)" in got[1].source


def test_serialize_task_only_where_await_is_allowed():
    body = "def cb(t):\n    asyncio.create_task(x())\nreturn cb"
    assert list(mutops.mutants(_cell(body), ["serialize-task"])) == []


def test_duplicates_and_equivalents_are_set_aside_by_name():
    cell = _cell("try:\n    return await x()\nfinally:\n    x.close()")
    found = {f"99/c0/{m.name}": (0, m) for m in mutops.mutants(cell)}
    site = found["99/c0/drop-await/0"][1].site
    why = mt.classify(found, {"99/c0/drop-await/0": {"site": site, "reason": "r"}})
    assert why["99/c0/drop-await/0"] == "equivalent: r"
    assert why["99/c0/cleanup-into-try/0"] == "duplicate of 99/c0/drop-finally/0"
    assert why["99/c0/drop-finally/0"] is None
    stale = mt.classify(found, {"99/c0/drop-await/0": {"site": "something else", "reason": "r"}})
    assert stale["99/c0/drop-await/0"] is None, "an entry whose site changed must not set a mutant aside"


def test_table_counts_and_flags_below_the_goal():
    data = {"chapters": {"01": {"mutants": {
        "c0/a/0": {"verdict": "killed"}, "c0/b/0": {"verdict": "survived"},
        "c0/c/0": {"verdict": "equivalent"}, "c0/d/0": {"verdict": "duplicate"}}}}}
    row = next(r for r in mt.table_markdown(data, {}).splitlines() if r.startswith("| 01 "))
    assert row == "| 01 | 4 | 1 | 1 | 2 | 1 | 50 % ✗ | `b/0` | ? |", row
    # a survivor listed as equivalent after it was graded counts as equivalent (same site only)
    data["chapters"]["01"]["mutants"]["c0/b/0"]["site"] = "x()"
    listed = {"01/c0/b/0": {"site": "x()", "reason": "r"}}
    row = next(r for r in mt.table_markdown(data, listed).splitlines() if r.startswith("| 01 "))
    assert row == "| 01 | 4 | 2 | 1 | 1 | 1 | 100 % |  | ? |", row
    listed["01/c0/b/0"]["site"] = "y()"
    row = next(r for r in mt.table_markdown(data, listed).splitlines() if r.startswith("| 01 "))
    assert "50 % ✗" in row, row


def test_a_newer_python_is_recorded_beside_the_main_record(tmp_path, monkeypatch):
    """A run on 3.14 keeps the main (3.11) record and gets its own column; a mutant that
    survives only there is named in it."""
    path = tmp_path / "scores.json"
    main = {"reference": "full", "mutants": {"c0/a/0": {"verdict": "killed"},
                                             "c0/b/0": {"verdict": "killed"}}}
    newer = {"reference": "full", "mutants": {"c0/a/0": {"verdict": "killed"},
                                              "c0/b/0": {"verdict": "survived"}}}
    monkeypatch.setattr(mt.platform, "python_version", lambda: "3.11.7")
    mt.merge("01", copy.deepcopy(main), path)
    monkeypatch.setattr(mt.platform, "python_version", lambda: "3.14.8")
    data = mt.merge("01", copy.deepcopy(newer), path)
    assert data["chapters"]["01"]["python"] == "3.11.7", "the 3.14 run replaced the main record"
    assert data["also"]["3.14"]["01"]["python"] == "3.14.8"
    row = next(r for r in mt.table_markdown(data, {}).splitlines() if r.startswith("| 01 "))
    assert row == "| 01 | 2 | 0 | 0 | 2 | 2 | 100 % |  | 1/2 (50 % ✗) `b/0` |", row


# --------------------------------------------------------------------------------------
# The recorded scores
# --------------------------------------------------------------------------------------

def _recorded():
    """(chapter, record) for the main record and every Python recorded beside it."""
    data = json.loads(mt.SCORES_JSON.read_text())
    yield from data["chapters"].items()
    for records in data.get("also", {}).values():
        yield from records.items()


def test_recorded_mutants_are_the_ones_the_solutions_give():
    for ch, record in _recorded():
        if record.get("reference") != "full":
            continue
        now = {name.split("/", 1)[1] for name in mt.chapter_mutants(ch)}
        assert set(record["mutants"]) == now, (
            f"chapter {ch}: its solution changed since the mutants were graded: run "
            f"`python -m lab_snippets.labs.mutants run --chapter {ch}`")


def test_equivalent_list_matches_the_solutions():
    assert not mt.stale_equivalents(mt.load_equivalent()), (
        f"{mt.EQUIVALENT_TOML.name}: a listed mutant's site changed: review it again")


def test_instructor_page_shows_the_recorded_scores():
    assert mt.write_table(check=True), (
        "book/instructors.md's mutant table is out of step: run `python -m lab_snippets.labs.mutants table`")
