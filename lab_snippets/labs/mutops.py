"""Mutation operators for the reference solutions (``lab_snippets.labs.mutants``), on the standard
library's ``ast``.

Each operator is aimed at what the exercises teach: an ``await``, a ``finally``, a ``cancel()``,
a timeout, a kill, a bound, a cleanup, a ``join``/``wait``, a blocking sleep. An operator finds
its *sites* in a solution cell (only nodes that start on a line of a ``### BEGIN SOLUTION`` ...
``### END SOLUTION`` region: the code around it is the exercise's given frame) and makes one
mutant per site: the whole cell, changed at that one place, written back by ``ast.unparse``
(comments are lost, which changes no behaviour).

``mutants(source)`` yields ``Mutant`` records in a stable order: operator by operator (the order
of ``OPERATORS``), site by site in source order, so ``<operator>/<k>`` names the same mutant as
long as the solution does not change. A site that yields the original program back (for example
enlarging a literal ``None`` timeout) is not a mutant and is skipped.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"

# Methods and functions whose call, as a statement of its own, each "drop" operator removes.
CANCEL = {"cancel"}
KILL = {"kill", "killpg", "terminate", "send_signal"}
JOIN = {"join", "wait", "wait_closed", "shutdown", "gather", "communicate"}
CLEANUP = {"close", "aclose", "reset", "remove_signal_handler", "set", "forget", "release"}
# Calls whose positional argument at this index is a timeout.
POSITIONAL_TIMEOUT = {"wait_for": 1, "timeout": 0, "wait": 0, "join": 0, "result": 0}
TIMEOUT_NAMES = ("timeout", "budget", "grace")  # a positional Name argument with one of these is one
SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


@dataclass(frozen=True)
class Mutant:
    operator: str      # an OPERATORS key
    index: int         # k-th site of this operator in the cell
    line: int          # line of the site in the cell (1-based)
    site: str          # the original code at the site (first line of it)
    source: str        # the whole mutated cell

    @property
    def name(self):
        return f"{self.operator}/{self.index}"


def solution_lines(source: str) -> set[int]:
    """Lines (1-based) strictly inside the cell's solution regions."""
    inside, lines = False, set()
    for n, text in enumerate(source.splitlines(), 1):
        if BEGIN in text:
            inside = True
        elif END in text:
            inside = False
        elif inside:
            lines.add(n)
    return lines


def _func_name(call: ast.AST) -> str | None:
    if not isinstance(call, ast.Call):
        return None
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _stmt_call_name(stmt: ast.AST) -> str | None:
    """``x.f(...)`` or ``await x.f(...)`` as a statement: ``f``."""
    if not isinstance(stmt, ast.Expr):
        return None
    value = stmt.value.value if isinstance(stmt.value, ast.Await) else stmt.value
    return _func_name(value)


# --------------------------------------------------------------------------------------
# Operators: each is (find sites, apply at one site). A site is a node of the tree; apply
# changes the tree in place (on a deep copy made per mutant) and returns nothing.
# --------------------------------------------------------------------------------------

def _stmt_lists(tree):
    """(owner, field, list) for every statement list in the tree."""
    for node in ast.walk(tree):
        for fld in ("body", "orelse", "finalbody", "handlers"):
            seq = getattr(node, fld, None)
            if isinstance(seq, list) and seq and isinstance(seq[0], ast.stmt):
                yield node, fld, seq


def _replace_stmt(tree, target, replacement: list):
    """Put ``replacement`` (statements; empty: ``pass``) where ``target`` was."""
    for _, _, seq in _stmt_lists(tree):
        for i, stmt in enumerate(seq):
            if stmt is target:
                seq[i:i + 1] = replacement or [ast.Pass()]
                return
    raise LookupError("statement not found")


def _drop_call(names):
    def find(tree):
        return [s for s in ast.walk(tree) if _stmt_call_name(s) in names]

    def apply(tree, stmt):
        _replace_stmt(tree, stmt, [])
    return find, apply


def _find_awaits(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Await)]


class _Swap(ast.NodeTransformer):
    """Replace one node (by identity) with what ``make`` returns for it."""

    def __init__(self, target, make):
        self.target, self.make = target, make

    def visit(self, node):
        if node is self.target:
            return self.make(node)
        return self.generic_visit(node)


def _drop_await(tree, node):
    _Swap(node, lambda n: n.value).visit(tree)


def _find_try_finally(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Try) and n.finalbody]


def _drop_finally(tree, node):
    """``try: B [except ...] finally: F`` -> ``try: B [except ...]`` then ``F`` after it."""
    final = node.finalbody
    if node.handlers:
        node.finalbody = []
        _replace_stmt(tree, node, [node, *final])
    else:
        _replace_stmt(tree, node, [*node.body, *node.orelse, *final])


def _cleanup_into_try(tree, node):
    """``try: B finally: F`` -> ``try: B; F``: the cleanup runs only when B gets to its end."""
    final = node.finalbody
    node.finalbody = []
    node.body = [*node.body, *final]
    if not node.handlers:
        _replace_stmt(tree, node, [*node.body, *node.orelse])


def _timeout_arg(call):
    """(kind, where) of the call's timeout: ("kw", index in keywords) or ("pos", index in args)."""
    for i, kw in enumerate(call.keywords):
        if kw.arg == "timeout":
            return "kw", i
    name = _func_name(call)
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "asyncio" \
            and name == "wait":
        name = None  # asyncio.wait(fs): its first argument is the awaitables, not a timeout
    pos = POSITIONAL_TIMEOUT.get(name)
    if pos is not None and len(call.args) == pos + 1 and not isinstance(call.args[pos], ast.Starred):
        return "pos", pos
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Name) and any(t in arg.id.lower() for t in TIMEOUT_NAMES):
            return "pos", i
    return None


def _find_timeouts(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _timeout_arg(n)]


def _drop_timeout(tree, call):
    """No timeout: the keyword goes; a positional one becomes ``None`` (``wait_for`` and
    ``asyncio.timeout`` require the argument; ``None`` means no limit for every call here)."""
    kind, i = _timeout_arg(call)
    if kind == "kw":
        del call.keywords[i]
    else:
        call.args[i] = ast.Constant(None)


def _enlarge_timeout(tree, call):
    """A timeout ``t`` becomes ``t * 10 + 1`` (seconds)."""
    kind, i = _timeout_arg(call)
    old = call.keywords[i].value if kind == "kw" else call.args[i]
    if isinstance(old, ast.Constant) and old.value is None:
        return  # no timeout to enlarge: the mutant equals the original and is skipped
    new = ast.BinOp(ast.BinOp(old, ast.Mult(), ast.Constant(10)), ast.Add(), ast.Constant(1))
    if kind == "kw":
        call.keywords[i].value = new
    else:
        call.args[i] = new


def _find_compares(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Compare)
            and any(type(op) in SWAP for op in n.ops)]


def _swap_compare(tree, node):
    """The first ``<``/``<=``/``>``/``>=`` of a comparison becomes its strict/non-strict twin."""
    for i, op in enumerate(node.ops):
        if type(op) in SWAP:
            node.ops[i] = SWAP[type(op)]()
            return


def _find_min_max(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id in ("min", "max")]


def _swap_min_max(tree, node):
    node.func = ast.Name("max" if node.func.id == "min" else "min", ast.Load())


def _is_asyncio_sleep(node):
    return (isinstance(node, ast.Await) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "sleep"
            and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == "asyncio")


def _find_sleeps(tree):
    return [n for n in ast.walk(tree) if _is_asyncio_sleep(n)]


def _blocking_sleep(tree, node):
    """``await asyncio.sleep(x)`` -> ``__import__('time').sleep(x)`` (blocks the loop)."""
    def make(n):
        call = copy.deepcopy(n.value)
        call.func = ast.Attribute(ast.Call(ast.Name("__import__", ast.Load()),
                                           [ast.Constant("time")], []), "sleep", ast.Load())
        return call
    _Swap(node, make).visit(tree)


def _find_guards(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.With | ast.AsyncWith)
            and all(item.optional_vars is None and _func_name(item.context_expr) != "timeout"
                    for item in n.items)]  # a timeout block is drop-timeout's


def _drop_guard(tree, node):
    """``[async] with lock:`` (nothing bound) -> its body, unguarded."""
    _replace_stmt(tree, node, list(node.body))


def _find_shields(tree):
    return [n for n in ast.walk(tree) if _func_name(n) == "shield" and len(n.args) == 1]


def _drop_shield(tree, node):
    _Swap(node, lambda n: n.args[0]).visit(tree)


def _find_reraise(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.exc is None]


def _drop_reraise(tree, node):
    _replace_stmt(tree, node, [])


def _in_async(tree):
    """Nodes whose nearest enclosing function is an ``async def`` (``await`` is allowed there)."""
    out = set()

    def walk(node, is_async):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.AsyncFunctionDef):
                walk(child, True)
            elif isinstance(child, ast.FunctionDef | ast.Lambda):
                walk(child, False)
            else:
                if is_async:
                    out.add(id(child))
                walk(child, is_async)
    walk(tree, False)
    return out


def _find_create_task(tree):
    ok = _in_async(tree)
    return [n for n in ast.walk(tree) if _func_name(n) == "create_task" and id(n) in ok
            and len(n.args) == 1]


def _done_now(value):
    """``asyncio.sleep(0, value)``: an awaitable that returns ``value`` (already computed)."""
    return ast.Call(ast.Attribute(ast.Name("asyncio", ast.Load()), "sleep", ast.Load()),
                    [ast.Constant(0), value], [])


def _serialize_task(tree, call):
    """``create_task(c)`` -> ``create_task(asyncio.sleep(0, await c))``: c runs to its end first."""
    call.args[0] = _done_now(ast.Await(call.args[0]))


def _find_executor(tree):
    return [n for n in ast.walk(tree) if (_func_name(n) == "run_in_executor" and len(n.args) >= 2)
            or (_func_name(n) == "to_thread" and n.args)]


def _inline_executor(tree, call):
    """``loop.run_in_executor(pool, f, *a)`` / ``asyncio.to_thread(f, *a)`` -> a task of
    ``asyncio.sleep(0, f(*a))``: ``f`` runs on the event loop's thread, blocking it."""
    args = call.args[1:] if _func_name(call) == "run_in_executor" else call.args
    task = ast.Call(ast.Attribute(ast.Name("asyncio", ast.Load()), "ensure_future", ast.Load()),
                    [_done_now(ast.Call(args[0], list(args[1:]), []))], [])
    _Swap(call, lambda n: task).visit(tree)


Finder = Callable[[ast.AST], list]
Applier = Callable[[ast.AST, ast.AST], None]

# name -> (what it does, find, apply); the order is the order mutants are made and numbered in.
OPERATORS: dict[str, tuple[str, Finder, Applier]] = {
    "drop-await": ("`await x` -> `x`", _find_awaits, _drop_await),
    "drop-finally": ("`try/finally` -> the finally body after the try", _find_try_finally,
                     _drop_finally),
    "cleanup-into-try": ("the finally body moved to the end of the try body", _find_try_finally,
                         _cleanup_into_try),
    "drop-cancel": ("a `.cancel()` statement removed", *_drop_call(CANCEL)),
    "drop-kill": ("a `kill`/`killpg`/`terminate`/`send_signal` statement removed", *_drop_call(KILL)),
    "drop-join": ("a `join`/`wait`/`wait_closed`/`shutdown`/`gather`/`communicate` statement removed",
                  *_drop_call(JOIN)),
    "drop-cleanup": ("a `close`/`aclose`/`reset`/`set`/`release`/`forget`/`remove_signal_handler` "
                     "statement removed", *_drop_call(CLEANUP)),
    "drop-timeout": ("a call's timeout removed (or `None`)", _find_timeouts, _drop_timeout),
    "enlarge-timeout": ("a call's timeout `t` -> `t * 10 + 1`", _find_timeouts, _enlarge_timeout),
    "swap-compare": ("`<` <-> `<=`, `>` <-> `>=`", _find_compares, _swap_compare),
    "swap-min-max": ("`min(...)` <-> `max(...)`", _find_min_max, _swap_min_max),
    "blocking-sleep": ("`await asyncio.sleep(x)` -> `time.sleep(x)`", _find_sleeps, _blocking_sleep),
    "drop-guard": ("`[async] with lock:` -> its body", _find_guards, _drop_guard),
    "drop-shield": ("`asyncio.shield(x)` -> `x`", _find_shields, _drop_shield),
    "drop-reraise": ("a bare `raise` removed", _find_reraise, _drop_reraise),
    "serialize-task": ("`create_task(c)` -> `create_task(asyncio.sleep(0, await c))` (c runs first, "
                       "alone)", _find_create_task, _serialize_task),
    "inline-executor": ("`run_in_executor(pool, f, *a)` / `to_thread(f, *a)` -> `f(*a)` run on the "
                        "loop", _find_executor, _inline_executor),
}


def _site_text(source_lines, node):
    line = source_lines[node.lineno - 1].strip() if 0 < node.lineno <= len(source_lines) else ""
    return line[:100]


def _path_to(tree, target):
    """The node's position as a list of (field, index) steps, to find it again in a copy."""
    def walk(node, path):
        if node is target:
            return path
        for fld, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for i, child in enumerate(items):
                if isinstance(child, ast.AST):
                    found = walk(child, [*path, (fld, i if isinstance(value, list) else None)])
                    if found is not None:
                        return found
        return None
    return walk(tree, [])


def _follow(tree, path):
    node = tree
    for fld, i in path:
        value = getattr(node, fld)
        node = value if i is None else value[i]
    return node


def mutants(source: str, operators=None) -> Iterator[Mutant]:
    """Every mutant of a solution cell's source, one per (operator, site in a solution region)."""
    tree = ast.parse(source)
    original = ast.unparse(tree)
    lines, src_lines = solution_lines(source), source.splitlines()
    for name in operators or OPERATORS:
        _, find, apply = OPERATORS[name]
        sites = sorted((n for n in find(tree) if n.lineno in lines),
                       key=lambda n: (n.lineno, n.col_offset))
        for k, node in enumerate(sites):
            path = _path_to(tree, node)
            work = copy.deepcopy(tree)
            apply(work, _follow(work, path))
            ast.fix_missing_locations(work)
            text = ast.unparse(work)
            if text != original:
                yield Mutant(name, k, node.lineno, _site_text(src_lines, node), text + "\n")
