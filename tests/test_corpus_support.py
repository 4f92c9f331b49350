"""What a kept corpus verdict depends on (``labs.support``), and when the test command keeps one
(``corpus.kept_verdict``) instead of grading the submission again."""

from __future__ import annotations

import json
import platform
import re
from pathlib import Path

import pytest

from lab_snippets.labs import corpus, support


def _tree(tmp_path: Path) -> Path:
    files = {
        "requirements.txt": "pkg==1.0\n",
        "lab_snippets/__init__.py": "",
        "lab_snippets/helper.py": "from . import inner\n",
        "lab_snippets/inner.py": "def f():\n    import lab_snippets.deep.leaf as leaf\n    return leaf\n",
        "lab_snippets/deep/__init__.py": "",
        "lab_snippets/deep/leaf.py": "X = 1\n",
        "lab_snippets/unrelated.py": "Y = 2\n",
        "lab_snippets/labs/__init__.py": "",
        "lab_snippets/labs/student.py": "from lab_snippets.labs.common import thing\n",
        "lab_snippets/labs/common.py": "thing = 1\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_imports_are_found_absolute_relative_inside_functions_and_in_a_cell_with_a_magic():
    assert support.imported("import lab_snippets.timeline as tl\nimport os\n") == {"lab_snippets.timeline"}
    assert support.imported("from lab_snippets.scenarios import differential\n") == {
        "lab_snippets.scenarios", "lab_snippets.scenarios.differential"}
    assert support.imported("from . import inner\n", "lab_snippets") == {"lab_snippets", "lab_snippets.inner"}
    assert support.imported("from .. import x\n", "lab_snippets.labs") == {"lab_snippets", "lab_snippets.x"}
    assert support.imported("def f():\n    from lab_snippets import raylab\n") >= {"lab_snippets.raylab"}
    assert support.imported("%time import lab_snippets.timeline\n") == {"lab_snippets.timeline"}


def test_the_closure_follows_imports_transitively_and_leaves_the_rest_out(tmp_path):
    repo = _tree(tmp_path)
    got = support.closure({"lab_snippets.helper"}, repo)
    assert set(got) == {"lab_snippets", "lab_snippets.helper", "lab_snippets.inner",
                        "lab_snippets.deep", "lab_snippets.deep.leaf"}


def test_the_support_digest_moves_with_an_imported_module_and_the_pins_not_another(tmp_path,
                                                                                  monkeypatch):
    # Counterfactuals: an edit to a module grading reaches must make a kept verdict stale (else the
    # test command keeps verdicts of a grader that changed); an edit elsewhere must not.
    repo = _tree(tmp_path)
    monkeypatch.setattr(support, "GRADER", ("lab_snippets.labs",))
    cells = ("import lab_snippets.helper\n",)
    first = support.support_digest(cells, repo)
    (repo / "lab_snippets/unrelated.py").write_text("Y = 3\n")
    assert support.support_digest(cells, repo) == first, "a module grading never runs changed the digest"
    for rel, text in (("lab_snippets/deep/leaf.py", "X = 2\n"),
                      ("lab_snippets/labs/common.py", "thing = 2\n"), ("requirements.txt", "pkg==1.1\n")):
        before = support.support_digest(cells, repo)
        (repo / rel).write_text(text)
        assert support.support_digest(cells, repo) != before, f"an edit to {rel} left the digest as it was"


def test_every_runtime_import_by_name_is_inside_the_grader_package():
    # support reads imports from the sources; a module imported by a name built at run time would be
    # missed. There is none outside lab_snippets.labs (whose modules the digest covers whole), or in a
    # module grading never reaches (the inventory scanner imports the modules it scans).
    root = corpus.REPO / "lab_snippets"
    dynamic = {p.relative_to(root).as_posix() for p in root.rglob("*.py")
               if re.search(r"\bimport_module\(|\b__import__\(", p.read_text(encoding="utf-8"))}
    reached = {p.relative_to(root).as_posix()
               for p in support.closure(set(support.GRADER) | {"lab_snippets.scenarios"}).values()}
    outside = {f for f in dynamic if not f.startswith("labs/") and f in reached}
    assert not outside, f"modules imported by a run-time name, reached by grading: {sorted(outside)}"


def _verdicts(tmp_path, **fields):
    ver = ".".join(platform.python_version().split(".")[:2])
    record = {"kind": "reference", "verdict": "full", "score": 2.0, "max_score": 2.0,
              "digest": corpus.grading_digest("06"), "support": corpus.support_digest_of("06")}
    record.update(fields)
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({"pythons": {ver: {"06/reference": record}}}))
    return path


@pytest.mark.parametrize(("change", "why"), [
    ({}, None),
    ({"verdict": "not full"}, "a bad verdict is graded again"),
    ({"digest": "0" * 16}, "a verdict made by other tests is graded again"),
    ({"support": "0" * 16}, "a verdict made with other course modules or pins is graded again"),
    ({"support": None}, "a verdict recorded without a support digest is graded again"),
])
def test_kept_verdict_keeps_only_a_good_verdict_of_these_tests_and_modules(tmp_path, change, why):
    path = _verdicts(tmp_path, **change)
    kept = corpus.kept_verdict("reference", "06", None, path)
    if why is None:
        assert kept is not None and kept["verdict"] == "full"
    else:
        assert kept is None, why


def test_no_grading_module_reaches_the_release_or_the_command_line():
    # NOT_GRADING leaves labs.publish (and with it the zh tooling its Chinese step reads) and the
    # command line out of every verdict's digest. That is right only while grading never runs them:
    # by an import (the closure would list them) or by a name the package's __init__ loads lazily
    # (`labs.release`, `from lab_snippets.labs import release`). Counterfactual: a grading module
    # that calls labs.build_source, or imports lab_snippets.labs.publish.
    import lab_snippets.labs as labs

    left_out = {f"lab_snippets.labs.{m}" for m in support.NOT_GRADING}
    reached = support.closure(set(support.GRADER))
    assert not left_out & set(reached), sorted(left_out & set(reached))
    lazy = sorted(n for n, m in labs._EXPORTS.items() if m in support.NOT_GRADING)
    assert "release" in lazy and "build_source" in lazy
    names = "|".join(map(re.escape, lazy))
    uses = re.compile(rf"\blabs\.({names})\b|from lab_snippets\.labs import [^\n]*\b({names})\b")
    found = {name: m.group(0) for name, path in reached.items() if not path.name == "__init__.py"
             for m in [uses.search(path.read_text(encoding="utf-8"))] if m}
    assert not found, f"grading modules that load the release or the command line: {found}"


def _ray_only_imports(path: Path) -> list[tuple[int, bool]]:
    """(line, inside an ``if`` on ``ray``) for each import of a ``RAY_ONLY`` module in ``path``."""
    import ast

    names = {f"lab_snippets.labs.{m}" for m in support.RAY_ONLY}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []

    def visit(node, guarded):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            got = support.imported(ast.unparse(node), "lab_snippets.labs")
            if got & names:
                out.append((node.lineno, guarded))
        for child in ast.iter_child_nodes(node):
            on_ray = isinstance(node, ast.If) and child in node.body and any(
                isinstance(n, ast.Name) and n.id == "ray" for n in ast.walk(node.test))
            visit(child, guarded or on_ray)

    visit(tree, False)
    return out


def test_the_ray_only_modules_are_imported_only_where_a_grade_runs_on_a_cluster():
    # RAY_ONLY leaves the cluster's path out of every verdict's support digest: right only while a
    # grade on this machine never imports it. Counterfactuals: a grading module that imports
    # raygrade at its top, or outside the grader's `if ray:` branch (the probe below finds both).
    reached = support.closure(set(support.GRADER))
    assert not {f"lab_snippets.labs.{m}" for m in support.RAY_ONLY} & set(reached)
    found = {name: _ray_only_imports(path) for name, path in reached.items()}
    unguarded = {n: [ln for ln, g in v if not g] for n, v in found.items() if any(not g for _, g in v)}
    assert not unguarded, f"imports of a Ray-only module outside an `if ray:` branch: {unguarded}"
    assert any(found.values()), "the grader no longer imports raygrade at all: is RAY_ONLY stale?"


def test_the_ray_only_probe_finds_an_import_outside_the_ray_branch(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def grade(ray):\n    from lab_snippets.labs import raygrade\n    if ray:\n"
                   "        from . import raygrade as r\n")
    assert _ray_only_imports(bad) == [(2, False), (4, True)]
