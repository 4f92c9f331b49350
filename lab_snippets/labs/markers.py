"""Reading chapters and expanding their light cell tags into nbgrader's metadata."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from lab_snippets.labs.common import (
    BEGIN_HIDDEN,
    BEGIN_SOLUTION,
    END_HIDDEN,
    END_SOLUTION,
    HIDDEN_TAG,
    NOTEBOOKS_DIR,
    SOLUTION_TAG,
    TESTS_TAG,
    LabError,
    parse_python,
)


def read_notebook(path):
    """Read a ``.py`` (jupytext percent) or ``.ipynb`` notebook."""
    import nbformat
    path = Path(path)
    if path.suffix == ".py":
        import jupytext
        return jupytext.read(path, fmt="py:percent")
    return nbformat.read(path, as_version=4)


def _tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def has_solution(path: str | os.PathLike[str]) -> bool:
    """Whether the notebook has a ``solution`` cell. A notebook that cannot be read raises
    ``LabError`` naming it: an unreadable chapter must not drop out of a release unseen."""
    try:
        nb = read_notebook(path)
    except Exception as exc:  # jupytext and nbformat raise many kinds; all mean "not readable"
        raise LabError(f"cannot read {path} as a notebook: {type(exc).__name__}: {exc}") from exc
    return any(SOLUTION_TAG in _tags(c) for c in nb.cells)


def chapters_with_solutions(notebooks_dir: str | os.PathLike[str] = NOTEBOOKS_DIR) -> list[Path]:
    return [p for p in sorted(Path(notebooks_dir).glob("*.py")) if has_solution(p)]


def _points(tags):
    for tag in tags:
        m = re.fullmatch(r"points-(\d+(?:\.\d+)?)", tag)
        if m:
            return float(m.group(1))
    return 1.0


def _first_def(source):
    try:
        for node in parse_python(source).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return node.name
    except SyntaxError:
        pass
    return None


def _region(source, begin, end):
    """Lines strictly inside begin/end markers (all regions of a cell)."""
    lines, inside = [], False
    for line in source.splitlines():
        s = line.strip()
        if s == begin:
            inside = True
        elif s == end:
            inside = False
        elif inside:
            lines.append(line)
    return lines


def _check_markers(cell, begin, end, where):
    src = cell.source
    n_begin = sum(1 for ln in src.splitlines() if ln.strip() == begin)
    n_end = sum(1 for ln in src.splitlines() if ln.strip() == end)
    if n_begin == 0 or n_begin != n_end:
        raise LabError(f"{where}: needs matching '{begin}' / '{end}' lines "
                       f"(found {n_begin} / {n_end})")


def mark_notebook(nb, name="notebook"):
    """Expand the light tags into nbgrader metadata, in place; return the notebook.

    The role of each cell (solution / graded test / read-only) is given to nbgrader as its
    minimal flags; nbgrader's own ``MetadataValidatorV3.upgrade_cell_metadata`` fills in
    the full schema-v3 record and ``validate_cell`` / ``validate_nb`` check it.
    """
    from nbgrader.nbgraderformat import MetadataValidator

    validator = MetadataValidator()
    used, last_solution, n_solutions = set(), None, 0
    solutions: list[str] = []  # the solution cells' source so far: the hidden tests' reference

    def unique(gid):
        gid = re.sub(r"[^A-Za-z0-9_\-]", "_", gid)
        out, k = gid, 2
        while out in used:
            out, k = f"{gid}_{k}", k + 1
        used.add(out)
        return out

    for i, cell in enumerate(nb.cells):
        tags = _tags(cell)
        where = f"{name} cell {i}"
        cell.metadata.pop("nbgrader", None)
        if SOLUTION_TAG in tags:
            if cell.cell_type != "code":
                raise LabError(f"{where}: a 'solution' cell must be a code cell")
            _check_markers(cell, BEGIN_SOLUTION, END_SOLUTION, where)
            n_solutions += 1
            last_solution = _first_def(cell.source) or f"exercise_{n_solutions}"
            solutions.append(cell.source)
            flags = {"solution": True, "grade_id": unique(last_solution)}
        elif TESTS_TAG in tags:
            if cell.cell_type != "code":
                raise LabError(f"{where}: a 'tests' cell must be a code cell")
            base = last_solution or "exercise"
            if HIDDEN_TAG in tags:
                _check_markers(cell, BEGIN_HIDDEN, END_HIDDEN, where)
                cell.source = with_reference(cell.source, solutions)
                gid = unique(f"{base}_hidden_tests")
            else:
                gid = unique(f"{base}_tests")
            flags = {"grade": True, "points": _points(tags), "grade_id": gid}
        elif HIDDEN_TAG in tags:
            raise LabError(f"{where}: 'hidden-tests' cells must also be tagged 'tests'")
        else:
            flags = {"locked": True, "grade_id": unique(f"{cell.cell_type}_{i:02d}")}
        cell.metadata["nbgrader"] = flags
        validator.upgrade_cell_metadata(cell)
        validator.validate_cell(cell)
    if n_solutions == 0:
        raise LabError(f"{name}: no cell tagged 'solution'")
    validator.validate_nb(nb)
    return nb


def with_reference(source, solutions):
    """A hidden-tests cell's source with, first in each hidden region, the line binding
    ``lab_snippets.scenarios.REFERENCE_SOURCE`` to the solution cells' source: the reference a
    differential test compares a submission with (``scenarios.reference``). It is bound inside
    the hidden region, so the student release never holds it, and from the chapter as written,
    so a graded copy whose solution cell was replaced (a corpus entry, a mutant) still compares
    with the chapter's solution. The marker lines are left out of it (they are comments, and
    nbgrader's ClearSolutions finds a marker anywhere in a line). Marking twice binds it once."""
    from lab_snippets.scenarios import REFERENCE_SOURCE
    markers = {BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN}  # nbgrader looks for them in any line
    body = "\n".join(ln for src in solutions for ln in src.splitlines() if ln.strip() not in markers)
    bind = f"{REFERENCE_SOURCE} = {body!r}"
    out = []
    for line in source.splitlines():
        if line.lstrip().startswith(f"{REFERENCE_SOURCE} = "):
            continue  # marked before: bound afresh below
        out.append(line)
        if line.strip() == BEGIN_HIDDEN:
            out.append(line[:len(line) - len(line.lstrip())] + bind)
    return "\n".join(out)


def _secret_lines(nb):
    """Solution and hidden-test lines that must not appear in a student version."""
    secret, public = set(), set()
    for cell in nb.cells:
        src = cell.source
        if SOLUTION_TAG in _tags(cell):
            secret.update(_region(src, BEGIN_SOLUTION, END_SOLUTION))
        if HIDDEN_TAG in _tags(cell):
            secret.update(_region(src, BEGIN_HIDDEN, END_HIDDEN))
        hidden = set(_region(src, BEGIN_SOLUTION, END_SOLUTION)) | set(
            _region(src, BEGIN_HIDDEN, END_HIDDEN))
        public.update(ln for ln in src.splitlines() if ln not in hidden)
    return {ln.strip() for ln in secret if ln.strip() and ln not in public
            and ln.strip() not in {s.strip() for s in public} and not ln.strip().startswith("#")}


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _module_scope(node):
    """The nodes that run in the cell's own (module) scope: not inside a function, class,
    lambda or comprehension, which have scopes of their own (their own name is bound here)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, _SCOPES):
            yield from _module_scope(child)


def defined_names(source):
    """The names a (trusted) code cell binds in the notebook's namespace, wherever in the cell
    (a ``for`` target, ``with ... as``, ``except ... as``, ``:=``, an import or a ``def`` inside an
    ``if`` or ``try``, as well as top-level assignments); used to restore helpers before tests."""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return []
    names = []
    for node in _module_scope(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.extend(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.append(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.append(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.append(node.rest)
    return list(dict.fromkeys(names))
