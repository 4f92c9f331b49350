"""Find checks that compare a measured duration with an absolute constant (issue 38, A01).

The course's rule: every assert compares orders or ratios of measurements taken close together,
never absolute times, so a slow or busy machine makes a chapter slower but does not make it fail.
This scan finds a check that breaks the rule::

    python -m lab_snippets.testing.timing_bounds          # list every finding; exit 1 when any

It reads every code cell of ``notebooks/*.py`` (claim cells, checks, visible and hidden tests;
names flow from cell to cell) and ``lab_snippets/grading.py`` (the property checks hidden tests
compose), and gives each expression a *kind* by a small dataflow over the source:

- ``time``: a measured time or duration: a clock call (``time.perf_counter()``, ``monotonic``,
  ``loop.time()``, a ``Timeline``'s ``now()``), an attribute that holds one (``.seconds``,
  ``.max_gap``, ``.duration``, ``.start``/``.end``/``.at`` of a span or event, ``.beats``,
  ``.best(...)``), a record field such as ``report["cpu"]``, a call such as
  ``overlap_seconds(...)``, a name whose values are any of these, or an unassigned name such as
  ``elapsed``/``gap``/``took`` (a parameter). Differences, sums, scalings and ``min``/``max`` of
  times are times; so is a time divided by a constant or a count;
- ``mixed``: a time plus or minus a constant (an absolute slack added to a measurement);
- ``rate``: a count per time (``n / elapsed``); ``ratio``: a time divided by a time;
- ``const``: a number written in the source, a name whose values all are (``LIMIT = 0.2``, a
  plan of sleeps), arithmetic on them; ``other``: anything else (a count, a parameter).

A finding is a comparison (``<``, ``<=``, ``>``, ``>=``) of a time, mixed or rate with a const or
other (``0`` is a sign check, not a bound), or of a time with a mixed, in an ``assert`` or in
the test of an ``if`` one of whose branches asserts (a branch that decides whether to assert
carries the claim too). A ``while`` condition is not scanned: it bounds how long an experiment
waits. A call to a ``grading`` check whose threshold argument is not measured
(``check_loop_free(seen, 0.05, ...)``, or ``check_within`` with its default slack) is a finding
too (``by=`` a measured reference, or ``slack=0``, is not); inside ``lab_snippets/grading.py``
those checks compare with their parameters, and any other function that compares a time with a
parameter or a constant is a finding.

Explicit exceptions, each on the line of the check or on a comment line right above it, with
its reason (a pragma without one does not count):

- ``# floor: <why>``: a lower bound on a time (an upper bound on a rate) that no load can
  break, because a sleep never ends early; the scan checks the direction;
- ``# resolution: <why>``: the constant is the measurement's own resolution (a sampling gap);
- ``# bound-not-claim: <why>``: a timeout that bounds a hang, or a check that only guards a
  figure's axes.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lab_snippets import REPO_ROOT

TIME, MIXED, RATE, RATIO, MAYBE, CONST, OTHER = "time", "mixed", "rate", "ratio", "maybe", "const", "other"
MEASURED = (TIME, MIXED, RATE)
CLOCKS = {"perf_counter", "monotonic", "time", "process_time", "thread_time", "now",
          "perf_counter_ns", "monotonic_ns", "time_ns"}
TIME_ATTRS = {"seconds", "max_gap", "duration", "elapsed", "start", "end", "at", "gaps", "wall",
              "latency", "took", "t0", "beats"}
TIME_METHODS = {"best", "total", "frozen_time", "gaps_over", "in_flight_average"}
RATIO_METHODS = {"ratio", "spread", "cpu_share"}
PASS_THROUGH = {"min", "max", "sum", "abs", "sorted", "float", "round", "median", "fmean", "mean",
                "quantile", "quantiles", "list", "tuple", "fsum", "ceil", "floor", "int", "dict", "zip",
                "enumerate", "reversed"}
TIME_NAME = re.compile(
    r"(^|_)(elapsed|gap|gaps|duration|durations|latency|latencies|took|wall|cpu|seconds)(_|$)")
PRAGMA = re.compile(r"#\s*(bound-not-claim|floor|resolution):\s*(\S.*)?$")
#: The grading checks that compare with a threshold their caller gives: (position, keyword,
#: whether leaving it out uses a constant default) of each threshold argument.
THRESHOLD_ARGS = {
    "check_loop_free": [(1, "limit", False)],
    "check_within": [(1, "budget", False), (3, "slack", True)],
    "check_stops_promptly": [(1, "limit", False)],
    "check_returns_early": [(1, "work", False), (2, "budget", False)],
}
_ORDER = (MIXED, TIME, RATE, RATIO, MAYBE)


def join(*kinds: str) -> str:
    """The kind of a value built from parts of these kinds (a time anywhere makes a time)."""
    for k in _ORDER:
        if k in kinds:
            return k
    return CONST if kinds and all(k == CONST for k in kinds) else OTHER


def _name_of(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value in (0, 0.0)


def _add(a: str, b: str, zero: bool) -> str:
    if MIXED in (a, b):
        return MIXED
    if TIME in (a, b):
        other = b if a == TIME else a
        return MIXED if other == CONST and not zero else TIME  # t + 0.5: an absolute slack
    return join(a, b)


def _mul(a: str, b: str) -> str:
    if {a, b} == {RATE, TIME}:
        return RATIO  # a count
    return join(a, b)


def _div(a: str, b: str) -> str:
    if MIXED in (a, b):
        return MIXED
    if a == TIME:
        return RATIO if b == TIME else TIME  # a time per item is still a time
    if b == TIME:
        return RATIO if a == RATIO else RATE
    if a == RATE:
        return RATIO if b == RATE else RATE
    if b == RATE:
        return TIME
    return join(a, b)


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of the functions and lambdas defined inside it."""
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


class Kinds:
    """The kind of every name of one source (a fixpoint over its assignments); ``before`` holds
    the kinds that earlier cells of a notebook left, which this cell's assignments replace."""

    def __init__(self, tree: ast.AST, before: Kinds | None = None) -> None:
        self.base = dict(before.env) if before else {}
        self.base_returns = dict(before.returns) if before else {}
        self.env: dict[str, str] = dict(self.base)
        self.returns: dict[str, str] = dict(self.base_returns)  # what each function returns
        self.tuples: dict[str, list[str]] = dict(before.tuples) if before else {}  # ... element by element
        self.tree = tree
        for _ in range(5):
            previous = (dict(self.env), dict(self.returns))
            self._collect()
            if (self.env, self.returns) == previous:
                break

    def _bind(self, target: ast.expr, kind: str, seen: dict[str, list[str]]) -> None:
        if isinstance(target, ast.Name):
            seen.setdefault(target.id, []).append(kind)
        elif isinstance(target, ast.Attribute):  # self.put_at = [...]: every ``.put_at`` of the source
            seen.setdefault("." + target.attr, []).append(kind)
        elif isinstance(target, ast.Subscript):  # times[i] = ...
            self._bind(target.value, kind, seen)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind(elt, kind, seen)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, kind, seen)

    def _collect(self) -> None:  # noqa: C901 - one case per binding form
        seen: dict[str, list[str]] = {}
        returns: dict[str, list[str]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                values = [r.value for r in _own_nodes(node) if isinstance(r, ast.Return) and r.value]
                returns.setdefault(node.name, []).extend([self.kind(v) for v in values] or [OTHER])
                shapes = {len(v.elts) for v in values if isinstance(v, ast.Tuple)}
                if values and len(shapes) == 1 and all(isinstance(v, ast.Tuple) for v in values):
                    self.tuples[node.name] = [join(*(self.kind(v.elts[i]) for v in values))
                                              for i in range(shapes.pop())]
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                    and node.func.attr in {"append", "add", "extend", "insert", "appendleft", "setdefault"}:
                self._bind(node.func.value, self.kind(node.args[-1]), seen)  # times.append(clock())
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    parts = self._parts(node.value)
                    if isinstance(t, (ast.Tuple, ast.List)) and parts and len(parts) == len(t.elts):
                        for elt, kind in zip(t.elts, parts, strict=True):  # a, b = f(): each its own kind
                            self._bind(elt, kind, seen)
                    else:
                        self._bind(t, self.kind(node.value), seen)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                self._bind(node.target, self.kind(node.value), seen)
            elif isinstance(node, ast.NamedExpr):
                self._bind(node.target, self.kind(node.value), seen)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._bind(node.target, self.kind(node.iter), seen)
            elif isinstance(node, ast.arg):
                seen.setdefault(node.arg, []).append(TIME if TIME_NAME.search(node.arg) else OTHER)
        self.env = {**self.base, **{name: join(*kinds) for name, kinds in seen.items()}}
        self.returns = {**self.base_returns, **{name: join(*kinds) for name, kinds in returns.items()}}

    def _parts(self, node: ast.AST) -> list[str] | None:
        """The kind of each element of a tuple display, or of the tuple a function returns."""
        if isinstance(node, ast.Await):
            node = node.value
        if isinstance(node, ast.Tuple):
            return [self.kind(e) for e in node.elts]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.tuples.get(node.func.id)
        return None

    def kind(self, node: ast.AST | None) -> str:  # noqa: C901 - one case per node type
        if node is None:
            return OTHER
        if isinstance(node, ast.Constant):
            return CONST  # a number, or a flag or label beside numbers in a literal plan
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            return TIME if TIME_NAME.search(node.id) else OTHER
        if isinstance(node, ast.Attribute):
            return TIME if node.attr in TIME_ATTRS else self.env.get("." + node.attr, OTHER)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.BinOp):
            a, b = self.kind(node.left), self.kind(node.right)
            if isinstance(node.op, (ast.Add, ast.Sub)):
                return _add(a, b, _is_zero(node.left) or _is_zero(node.right))
            if isinstance(node.op, ast.Mult):
                return _mul(a, b)
            if isinstance(node.op, ast.Div):
                return _div(a, b)
            return join(a, b)
        if isinstance(node, ast.UnaryOp):
            return self.kind(node.operand)
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):  # a record's field
                words = re.findall(r"[a-z0-9]+", key.value.lower())
                if TIME_NAME.search(key.value) or set(words) & (TIME_ATTRS - {"beats"}):
                    return TIME  # report["cpu"], row["elapsed"], marks["end 0"]
            return self.kind(node.value)
        if isinstance(node, (ast.Starred, ast.Await)):
            return self.kind(node.value)
        if isinstance(node, ast.IfExp):
            return join(self.kind(node.body), self.kind(node.orelse))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return join(*(self.kind(e) for e in node.elts))
        if isinstance(node, ast.Dict):
            values = {self.kind(v) for v in node.values}
            record = all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys)
            if record and len(values) > 1 and set(MEASURED) & values:
                return MAYBE  # a record of times and counts: its fields are judged by name
            return join(*values)
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            return self.kind(node.elt)
        if isinstance(node, ast.DictComp):
            return self.kind(node.value)
        return OTHER

    def _call(self, node: ast.Call) -> str:
        name = _name_of(node.func)
        if name in CLOCKS and (not isinstance(node.func, ast.Name) or name != "time"):
            return TIME
        if name in TIME_METHODS:
            return TIME
        if name in RATIO_METHODS:
            return RATIO
        if name in PASS_THROUGH:
            return join(*(self.kind(a) for a in node.args)) if node.args else OTHER
        if name in {"values", "items", "get", "pop", "setdefault"} and isinstance(node.func, ast.Attribute):
            return self.kind(node.func.value)
        if isinstance(node.func, ast.Name) and node.func.id in self.returns:
            return self.returns[node.func.id]
        return TIME if TIME_NAME.search(name) else OTHER  # overlap_seconds(...), wall(reports)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def _asserts(nodes: list[ast.stmt]) -> bool:
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assert):
                return True
            if isinstance(sub, ast.Raise) and "AssertionError" in ast.unparse(sub):
                return True
    return False


def _tested_compares(tree: ast.AST) -> Iterator[ast.Compare]:
    """Comparisons in an assert, or in the test of an ``if``/``elif`` one of whose branches
    asserts (the test decides whether, or what, to assert)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) or (isinstance(node, ast.If) and _asserts(node.body + node.orelse)):
            for sub in ast.walk(node.test):
                if isinstance(sub, ast.Compare):
                    yield sub


def _pragmas(tree: ast.AST, lines: list[str]) -> dict[int, tuple[str, str]]:
    """Line -> (kind, reason) of each exception: a pragma at the end of a line covers that line's
    statement; a pragma on a line of its own covers the whole statement that follows it."""
    statements = sorted((n for n in ast.walk(tree) if isinstance(n, ast.stmt)), key=lambda n: n.lineno)
    out: dict[int, tuple[str, str]] = {}
    for number, line in enumerate(lines, start=1):
        m = PRAGMA.search(line)
        if not m:
            continue
        kind, reason = m.group(1), (m.group(2) or "").strip()
        if line.lstrip().startswith("#"):
            after = next((n for n in statements if n.lineno > number), None)
        else:
            on = [n for n in statements if n.lineno <= number <= (n.end_lineno or n.lineno)]
            after = min(on, key=lambda n: (n.end_lineno or n.lineno) - n.lineno) if on else None
        if after is None or not any(n is after for n in statements):
            continue
        for covered in range(after.lineno, (after.end_lineno or after.lineno) + 1):
            out[covered] = (kind, reason)
    return out


def _threshold_findings(tree: ast.AST, kinds: Kinds, path: str) -> Iterator[tuple[ast.AST, str]]:
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _name_of(node.func) in THRESHOLD_ARGS):
            continue
        by = next((k.value for k in node.keywords if k.arg == "by"), None)
        if by is not None:  # the bound is this measured reference; the others only word the message
            if kinds.kind(by) not in (TIME, MAYBE):
                yield node, f"{_name_of(node.func)}(..., by={ast.unparse(by)}, ...)"
            continue
        for pos, kw, const_default in THRESHOLD_ARGS[_name_of(node.func)]:
            arg = node.args[pos] if len(node.args) > pos else next(
                (k.value for k in node.keywords if k.arg == kw), None)
            if arg is None and const_default:
                yield node, f"{_name_of(node.func)}(...) with the default, constant {kw}"
            elif arg is not None and not _is_zero(arg) and kinds.kind(arg) not in (TIME, MAYBE):
                yield node, f"{_name_of(node.func)}(..., {kw}={ast.unparse(arg)}, ...)"


def scan_tree(tree: ast.AST, kinds: Kinds, lines: list[str], path: str,
              skip_functions: frozenset[str] = frozenset()) -> list[Finding]:
    """Findings of one parsed source (``lines`` is the whole file, for its pragmas); comparisons
    inside the functions named in ``skip_functions`` are left out."""
    out: list[Finding] = []
    pragmas = _pragmas(tree, lines)
    skipped = {id(sub) for fn in ast.walk(tree)
               if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name in skip_functions
               for sub in ast.walk(fn)}

    def excused(node: ast.AST, floor: bool) -> bool:
        kind, reason = pragmas.get(node.lineno, ("", ""))
        return bool(reason) and (kind in ("bound-not-claim", "resolution") or (kind == "floor" and floor))

    for cmp in _tested_compares(tree):
        if id(cmp) in skipped:
            continue
        sides = [cmp.left, *cmp.comparators]
        for op, a, b in zip(cmp.ops, sides, sides[1:], strict=False):
            if not isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
                continue
            ka, kb = kinds.kind(a), kinds.kind(b)
            if MAYBE in (ka, kb) or not set(MEASURED) & {ka, kb}:
                continue
            measured, bound = (a, b) if ka in MEASURED else (b, a)
            km, kbound = kinds.kind(measured), kinds.kind(bound)
            absolute = kbound in (CONST, OTHER) or (km == TIME and kbound == MIXED) or km == MIXED
            if not absolute or (kbound == CONST and _is_zero(bound)):
                continue
            greater = (measured is a) == isinstance(op, (ast.Gt, ast.GtE))
            floor = greater != (km == RATE)  # a time at least c, or a rate at most c
            if not excused(cmp, floor):
                out.append(Finding(path, cmp.lineno, ast.unparse(cmp)[:160]))
                break
    for node, text in _threshold_findings(tree, kinds, path):
        if not excused(node, False):
            out.append(Finding(path, node.lineno, text))
    return out


_CELL = re.compile(r"^# %%")


def _code_cells(text: str) -> list[tuple[int, str]]:
    """(line of the ``# %%`` marker, source) of each code cell of a py:percent notebook, with
    IPython magics and shell lines blanked."""
    cells: list[tuple[int, list[str] | None]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if _CELL.match(line):
            cells.append((number, None if "[markdown]" in line else []))
            continue
        source = cells[-1][1] if cells else None
        if source is not None:
            source.append("" if line.lstrip().startswith(("%", "!")) else line)
    return [(start, "\n".join(src)) for start, src in cells if src is not None]


def _parse(source: str) -> ast.Module:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    return compile(source, "<cell>", "exec", flags=flags, dont_inherit=True)


def scan_notebook_text(text: str, path: str = "<notebook>") -> list[Finding]:
    """Findings in every code cell of one notebook's py:percent text (names flow across cells)."""
    lines = text.splitlines()
    out: list[Finding] = []
    kinds: Kinds | None = None
    for start, src in _code_cells(text):
        try:
            tree = _parse("\n" * start + src)  # each cell at its own lines
        except SyntaxError:
            continue
        kinds = Kinds(tree, kinds)
        out += scan_tree(tree, kinds, lines, path)
    return out


def scan_module_text(text: str, path: str = "<module>") -> list[Finding]:
    """Findings of a module of checks: the threshold checks' own comparisons are left to their
    call sites; every other comparison of a time with a parameter or a constant is reported."""
    tree = _parse(text)
    return scan_tree(tree, Kinds(tree), text.splitlines(), path, frozenset(THRESHOLD_ARGS))


def scanned_files(root: Path = REPO_ROOT) -> list[Path]:
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.py")) + [root / "lab_snippets" / "grading.py"]


def scan(root: Path = REPO_ROOT) -> list[Finding]:
    """Every finding of the course's notebooks and its grading checks."""
    out: list[Finding] = []
    for path in scanned_files(root):
        rel = str(path.relative_to(root))
        text = path.read_text()
        notebook = path.parent.name == "notebooks"
        out += scan_notebook_text(text, rel) if notebook else scan_module_text(text, rel)
    return out


def main(argv: list[str] | None = None) -> int:
    findings = scan()
    for f in findings:
        print(f)
    print(f"{len(findings)} comparison(s) of a measured duration with an absolute bound")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
