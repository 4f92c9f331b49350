"""Which cells a grade needs: the exercise's cells and the set-up cells they depend on.

Grading a submission does not need the chapter's experiments (their sleeps, figures and claim
checks); it needs the solution cells, the test cells (visible and hidden) and every earlier cell
that binds a name those use, transitively. ``release`` records, in the instructor notebook's
metadata (``labs.skippable``), the code cells that need not run for the reference solution;
``grade`` and ``validate`` skip one of those only if it is unchanged and no cell that runs (the
submission's own solution, a cell the student added or changed) uses a name it binds. Every other
cell runs, in its place.

The analysis is Python's own (``symtable`` for scopes, ``ast`` for statements) and errs on the
side of running a cell:

- a cell *reads* the names its top level loads and the module names its functions load;
- a cell *binds* what it assigns, imports or defines (``markers.defined_names``), what its
  functions declare ``global``, and what it changes in place at top level (an attribute or item
  assigned or deleted, a method called for its effect on a name that is not an imported module);
- a name read at top level comes from the nearest earlier cell that rebinds it by a top-level
  statement, and from every cell in between that binds or changes it; a name read inside a
  function, from those cells as seen from every cell to run that may call it (``providers``);
- a cell that does not parse, or holds an IPython magic (what ``%time x = 1`` binds is inside a
  string), is never skipped nor cut.

That it holds is checked by running: the wrong-solution corpus grades every chapter's reference,
stub and wrong solutions through this plan (``labs.corpus``), and every verdict must stay as it was.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

from lab_snippets.labs.common import AST_LOCK, TESTS_TAG, is_solution_cell
from lab_snippets.labs.markers import _tags, defined_names


def _one_at_a_time(fn):
    @functools.wraps(fn)
    def locked(*args, **kwargs):
        with AST_LOCK:  # analyses take turns: CPython 3.11.7's ast.parse is not thread-safe
            return fn(*args, **kwargs)
    return locked


#: Where ``release`` records the skippable cells: ``nb.metadata[META_KEY]["skippable"]``.
META_KEY = "labs"


@lru_cache(maxsize=4096)
def _python(source: str) -> str | None:
    """The cell's Python, or None when it does not parse or IPython's transformer changes it (a
    magic: ``%time x = 1`` binds ``x`` inside a string, which no analysis of names can see)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        code = TransformerManager().transform_cell(source)
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return code if code.strip() == source.strip() else None


def _root_name(node: ast.AST) -> str | None:
    """``x`` of ``x``, ``x.a.b``, ``x[i].a``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mutated(tree: ast.Module, modules: frozenset[str]) -> set[str]:
    """Names a cell changes in place at module level (outside its functions): an attribute or item
    assigned or deleted, a method called for its effect (except on a module the notebook imports)."""
    from lab_snippets.labs.markers import _module_scope

    out = set()
    for node in _module_scope(tree):
        targets: list[ast.AST] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Expr):  # x.f(...) for its effect, not x = y.make(...)
            call = node.value.value if isinstance(node.value, ast.Await) else node.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                name = _root_name(call.func.value)
                if name and name not in modules:
                    out.add(name)
        for t in targets:
            if isinstance(t, (ast.Attribute, ast.Subscript)):
                name = _root_name(t)
                if name:
                    out.add(name)
    return out


def _scope_names(table) -> tuple[set[str], set[str]]:
    """(module names a nested scope assigns through ``global``, module names it reads), recursively."""
    binds, uses = set(), set()
    for sym in table.get_symbols():
        if sym.is_global():
            (binds if sym.is_assigned() else uses).add(sym.get_name())
            uses.add(sym.get_name())
    for child in table.get_children():
        b, u = _scope_names(child)
        binds |= b
        uses |= u
    return binds, uses


@lru_cache(maxsize=4096)
def imports(source: str) -> frozenset[str]:
    """The names a cell binds by ``import``."""
    code = _python(source)
    if code is None:
        return frozenset()
    return frozenset(a.asname or a.name.split(".")[0] for node in ast.walk(ast.parse(code))
                     if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names)


class Names(NamedTuple):
    """What one code cell does with the notebook's names."""

    binds: frozenset[str]    # assigns, imports, defines or changes in place, anywhere in the cell
    rebinds: frozenset[str]  # assigns by a top-level statement: the earlier value is gone
    uses: frozenset[str]     # reads at top level (while the cell runs)
    later: frozenset[str]    # reads inside its functions and classes (whenever they are called)
    fresh: frozenset[str]    # rebinds at top level before any statement reads them


def _rebound(tree: ast.Module) -> set[str]:
    """Names a top-level statement assigns whatever happens (not one inside ``if``, ``for``, ``try``)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and getattr(node, "value", None):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:  # x = ..., x, y = ...; not x.a = ... nor x[i] = ...
                elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
                out.update(e.id for e in elts if isinstance(e, ast.Name))
    return out


def _fresh(tree: ast.Module) -> set[str]:
    """Names a top-level statement rebinds before any statement of the cell reads them."""
    read: set[str] = set()
    out: set[str] = set()
    for node in tree.body:
        read |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        out |= _rebound(ast.Module(body=[node], type_ignores=[])) - read
    return out


class _TopLevelSync(ast.NodeTransformer):
    """The cell with its top-level ``await``, ``async for``, ``async with`` and asynchronous
    comprehensions made synchronous: the names are the same, and from 3.14 ``symtable`` refuses
    them outside a function (IPython runs them; a notebook cell is full of them)."""

    def visit_FunctionDef(self, node):  # a function's body keeps its own rules
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_Await(self, node):
        return self.visit(node.value)

    def _sync(self, node, kind):
        node = self.generic_visit(node)
        return ast.copy_location(kind(**{f: getattr(node, f) for f in node._fields}), node)

    def visit_AsyncFor(self, node):
        return self._sync(node, ast.For)

    def visit_AsyncWith(self, node):
        return self._sync(node, ast.With)

    def visit_comprehension(self, node):
        node.is_async = 0
        return self.generic_visit(node)


class _ComprehensionsAsGenerators(ast.NodeTransformer):
    """``[e for x in y]`` read as ``(e for x in y)`` (and set and dict comprehensions alike),
    everywhere in the cell: from 3.12 (PEP 709) ``symtable`` inlines list, set and dict
    comprehensions into the enclosing scope, so a plan would differ between 3.11 and 3.12+ (it
    did for 7 chapters). A generator expression keeps its own scope on every version and reads
    the same names; only ``symtable`` sees this form."""

    def visit_ListComp(self, node):
        return self._generator(self.generic_visit(node), node.elt)

    visit_SetComp = visit_ListComp

    def visit_DictComp(self, node):
        node = self.generic_visit(node)
        return self._generator(node, ast.Tuple(elts=[node.key, node.value], ctx=ast.Load()))

    @staticmethod
    def _generator(node, elt):
        return ast.copy_location(ast.GeneratorExp(elt=elt, generators=node.generators), node)


@lru_cache(maxsize=4096)
def cell_names(source: str, modules: frozenset[str] = frozenset()) -> Names | None:
    """What the cell binds, rebinds and reads, or None if it cannot be parsed.

    Scopes come from ``symtable``: a function's parameters and locals are not the notebook's
    names; what it reads or declares ``global`` is. ``modules``: the names the notebook binds only
    by ``import`` (calling ``asyncio.run`` does not change ``asyncio``)."""
    import symtable

    code = _python(source)
    if code is None:
        return None
    tree = ast.parse(code)
    try:
        tree_for_scopes = _ComprehensionsAsGenerators().visit(ast.parse(code))
        table = symtable.symtable(ast.unparse(_TopLevelSync().visit(tree_for_scopes)), "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    binds = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    uses = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    later: set[str] = set()
    for child in table.get_children():
        b, u = _scope_names(child)
        binds |= b
        later |= u
    binds |= set(defined_names(code)) | _mutated(tree, modules)
    return Names(frozenset(binds), frozenset(_rebound(tree)), frozenset(uses), frozenset(later),
                 frozenset(_fresh(tree)))


def is_graded_cell(cell) -> bool:
    """A solution cell or a test cell (visible or hidden): the roots of what a grade needs."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and (
        is_solution_cell(cell) or bool(meta.get("grade")) or TESTS_TAG in _tags(cell))


def module_names(sources: Sequence[str | None]) -> frozenset[str]:
    """The names the notebook binds only by ``import``."""
    code = [s for s in sources if s is not None]
    imported = frozenset().union(*map(imports, code))
    assigned = set().union(*(set(defined_names(_python(s) or "")) - imports(s) for s in code))
    return imported - assigned


def all_names(sources: Sequence[str | None], modules: frozenset[str] | None = None
              ) -> list[Names | None]:
    """``cell_names`` of every code cell (None for the others), with the notebook's modules."""
    modules = module_names(sources) if modules is None else modules
    return [cell_names(s, modules) if s is not None else None for s in sources]


def _reaching(names: Sequence[Names | None], name: str, k: int) -> set[int]:
    """The cells before ``k`` whose value of ``name`` cell ``k`` may see: the nearest that rebinds
    it and every cell after that one which changes it."""
    out = set()
    for i in range(k - 1, -1, -1):
        n = names[i]
        if n is not None and name in n.binds:
            out.add(i)
            if name in n.rebinds:
                break
    return out


def _call_points(names: Sequence[Names | None], j: int, run: set[int]) -> set[int]:
    """The cells to run (``j`` and later) that may call a function cell ``j`` defines: those whose
    top level reads a name it binds, and, through their own functions, those that call those."""
    points, seen, todo = set(), {j}, [j]
    while todo:
        c = todo.pop()
        for k in sorted(run | {j}):
            n = names[k]
            if k < j or n is None:
                continue
            if n.uses & names[c].binds:
                points.add(k)
            if k not in seen and n.later & names[c].binds:
                seen.add(k)
                todo.append(k)
    return points


def providers(names: Sequence[Names | None], j: int, run: set[int]) -> set[int]:
    """The cells that may give cell ``j`` the value of a name it reads.

    A name read at top level: ``_reaching`` from ``j``. A name read inside one of its functions:
    ``_reaching`` from every cell to run that may call the function (``_call_points``), or that
    cell itself when it rebinds the name before reading anything of it (``Names.fresh``: a test
    that sets up what it then calls)."""
    me = names[j]
    assert me is not None
    out: set[int] = set()
    for name in me.uses - me.fresh:
        out |= _reaching(names, name, j)
    later = me.later - me.uses
    if later:
        for k in _call_points(names, j, run):
            for name in later:
                n = names[k]
                if k != j and n is not None and name in n.fresh:
                    continue
                out |= _reaching(names, name, k)
    return out


def _fixed_point(names: Sequence[Names | None], roots: Iterable[int]) -> set[int]:
    run = set(roots)
    while True:
        more = set().union(*(providers(names, j, run) for j in run if names[j] is not None)) - run
        if not more:
            return run
        run |= more


def needed(sources: Sequence[str | None], roots: Iterable[int],
           trims: dict[int, str] | None = None) -> tuple[set[int], dict[int, str]]:
    """The indices of the code cells to run: ``roots`` and every cell that may give a cell to run
    a name it reads (``providers``), to a fixed point; and the cells that may run trimmed.

    ``sources[i]`` is None for a cell that is not code; a cell that does not parse is always run,
    whole (nothing is known of it), and so is every code cell before it.
    ``trims``: ``{index: the cell's source with only the
    statements the reference's grade needs}`` (``trim``); such a cell runs whole once a cell to
    run reads a name only its dropped statements bind."""
    modules = module_names(sources)
    whole = all_names(sources, modules)
    roots = {i for i in roots if sources[i] is not None}
    unknown = [i for i, s in enumerate(sources) if s is not None and whole[i] is None]
    # a cell nothing is known of runs, and so does every code cell before it (it may read anything)
    roots |= {i for i, s in enumerate(sources) if s is not None and unknown and i <= max(unknown)}
    trims = {i: t for i, t in (trims or {}).items() if whole[i] is not None}
    while True:
        cut = all_names([trims.get(i, s) for i, s in enumerate(sources)], modules)
        trims = {i: t for i, t in trims.items() if cut[i] is not None}
        run = _fixed_point([cut[i] if i in trims else n for i, n in enumerate(whole)], roots)
        reads = set().union(*((cut[j] or whole[j]).uses | (cut[j] or whole[j]).later
                              for j in run if (cut[j] or whole[j]) is not None))
        lost = {i for i in trims if (whole[i].binds - cut[i].binds) & reads}
        if not lost:
            return run, {i: t for i, t in trims.items() if i in run}
        trims = {i: t for i, t in trims.items() if i not in lost}


def trim(source: str, wanted: set[str], modules: frozenset[str]) -> str | None:
    """The cell with only the top-level statements that bind a name in ``wanted``, what those
    statements read from earlier in the cell, and every statement that binds nothing but calls
    into a module the cell imports (``warnings.filterwarnings``: a set-up effect kept); None when
    nothing would be dropped or the cell cannot be cut (one that does not parse)."""
    code = _python(source)
    if code is None:
        return None
    body = ast.parse(code).body
    plain_imports = {a.asname or a.name.split(".")[0] for n in body if isinstance(n, ast.Import)
                     for a in n.names}
    keep, need = [], set(wanted)
    for stmt in reversed(body):
        names = cell_names(ast.get_source_segment(code, stmt) or ast.unparse(stmt), modules)
        if names is None:
            return None
        effect = not names.binds and (names.uses & plain_imports)
        if names.binds & need or effect:
            keep.append(stmt)
            need |= names.uses | names.later
    if len(keep) == len(body):
        return None
    lines = code.splitlines()
    spans = [(min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])]), s.end_lineno)
             for s in reversed(keep)]
    return "\n".join("\n".join(lines[start - 1:end]) for start, end in spans) + "\n"


def code_sources(nb) -> list[str | None]:
    return [c.source if c.cell_type == "code" else None for c in nb.cells]


def cell_key(cell, index: int) -> str:
    """A cell's name in the record: its nbgrader grade id, else ``#<index>`` (a ``.py`` chapter)."""
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or f"#{index}"


def digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


@_one_at_a_time
def release_plan(nb) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """What the reference's grade does not need: ``({cell key: digest}`` of the code cells it
    need not run, ``{cell key: {"digest", "source"}}`` of the cells it needs only part of)."""
    sources = code_sources(nb)
    roots = {i for i, c in enumerate(nb.cells) if is_graded_cell(c)}
    run, _ = needed(sources, roots)
    modules = module_names(sources)
    names = all_names(sources, modules)
    trims = {}
    for i in sorted(run - roots):
        wanted = set().union(*(names[j].uses | names[j].later for j in run
                               if j != i and names[j] is not None))
        cut = trim(sources[i], wanted, modules)
        if cut is not None:
            trims[i] = cut
    run, trims = needed(sources, roots, trims)
    skip = {cell_key(c, i): digest(c.source) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and i not in run}
    cut = {cell_key(nb.cells[i], i): {"digest": digest(sources[i]), "source": t}
           for i, t in trims.items()}
    return skip, cut


def record(nb) -> None:
    """Record ``release_plan(nb)`` in the notebook's metadata (``release`` and the corpus do)."""
    skip, cut = release_plan(nb)
    nb.metadata[META_KEY] = {"skippable": skip, "trimmed": cut}


def recorded(nb) -> dict:
    """The record ``record`` left in ``nb`` (empty: none, so everything runs)."""
    found = nb.metadata.get(META_KEY) or {}
    return {"skippable": dict(found.get("skippable") or {}),
            "trimmed": dict(found.get("trimmed") or {})} if isinstance(found, dict) else {}


class Plan(NamedTuple):
    """How to grade a notebook: the code cells not run, and those run trimmed (index -> source)."""

    skip: frozenset[int] = frozenset()
    trimmed: dict[int, str] = {}  # never mutated


@_one_at_a_time
def plan(nb, rec: dict | None = None) -> Plan:
    """How to grade ``nb``, given release's record (``recorded``; default: the notebook's own).

    A cell may be skipped or trimmed only if the record names it with the source it has now and it
    is not a solution or a test; every other code cell (a solution, a test, a cell the student
    added or changed) is a root and runs whole; a recorded cell a root needs runs too (``needed``),
    trimmed while nothing that runs reads what its dropped statements bind. Anything that goes
    wrong in the analysis runs everything."""
    rec = recorded(nb) if rec is None else rec
    skip, cut = rec.get("skippable") or {}, rec.get("trimmed") or {}
    if not (skip or cut):
        return Plan()
    try:
        sources = code_sources(nb)
        keys = {i: cell_key(c, i) for i, c in enumerate(nb.cells)}

        def same(i, known):
            return known == digest(sources[i]) and not is_graded_cell(nb.cells[i])

        may_skip = {i for i, s in enumerate(sources) if s is not None and same(i, skip.get(keys[i]))}
        trims = {i: cut[keys[i]]["source"] for i, s in enumerate(sources)
                 if s is not None and keys[i] in cut and same(i, cut[keys[i]].get("digest"))}
        roots = [i for i, s in enumerate(sources) if s is not None and i not in may_skip]
        run, trims = needed(sources, roots, trims)
    except (RecursionError, MemoryError, ValueError, TypeError, KeyError, AttributeError):
        return Plan()  # a hostile or odd notebook: run it all
    return Plan(frozenset(i for i, s in enumerate(sources) if s is not None and i not in run), trims)
