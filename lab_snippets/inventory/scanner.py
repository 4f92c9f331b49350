"""The scanner: one file's AST, imports and aliases resolved per scope, every occurrence recorded."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from lab_snippets.inventory.raycalls import imports_ray, ray_calls
from lab_snippets.inventory.rules import _CATEGORY_MODULES, ASYNC_BUILTINS, NAME_ONLY_METHODS, categorize

# ---------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Occurrence:
    path: str
    line: int
    col: int
    category: str
    api: str
    kind: str  # call | syntax | annotation | except | decorator | assign_target | reference
    symbol: str


@dataclass(frozen=True, order=True)
class Candidate:
    path: str
    line: int
    col: int
    method: str
    receiver: str
    guess: str  # the constructor / annotation API the receiver type is guessed from ("" if none)
    evidence: str  # constructed | annotated | inline | name only
    symbol: str


@dataclass
class FileResult:
    path: str
    occurrences: list[Occurrence] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    error: str | None = None


NON_CALL_KINDS = ("annotation", "except", "decorator", "assign_target", "reference")

# ---------------------------------------------------------------------------
# Scopes and name resolution
# ---------------------------------------------------------------------------


class Scope:
    __slots__ = ("kind", "parent", "bindings", "imports", "globals", "nonlocals", "evidence",
                 "attr_evidence", "star_modules")

    def __init__(self, kind: str, parent: Scope | None) -> None:
        self.kind = kind  # module | function | class | comprehension
        self.parent = parent
        self.bindings: dict[str, set[str]] = {}
        self.imports: dict[str, str] = {}
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        self.evidence: dict[str, list[tuple[str, ast.AST, Scope, Scope | None]]] = {}
        self.attr_evidence: dict[str, list[tuple[str, ast.AST, Scope, Scope | None]]] = {}
        self.star_modules: list[str] = []

    def bind(self, name: str, how: str) -> None:
        self.bindings.setdefault(name, set()).add(how)

    def module(self) -> Scope:
        s = self
        while s.parent is not None:
            s = s.parent
        return s


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LITERALS = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, *_COMPREHENSIONS)


def _bind_args(scope: Scope, args: ast.arguments) -> None:
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if a is not None:
            scope.bind(a.arg, "param")


def _collect_bindings(scope: Scope, nodes: Iterable[ast.AST]) -> None:
    """Record the names a scope binds, without entering nested scopes."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Name:
            if not isinstance(node.ctx, ast.Load):
                scope.bind(node.id, "local")
            continue
        if t in _FUNCS or t is ast.ClassDef:
            scope.bind(node.name, "local")
            continue
        if t is ast.Lambda or t in _COMPREHENSIONS:
            continue
        if t is ast.Import:
            for alias in node.names:
                if alias.asname:
                    name, target = alias.asname, alias.name
                else:
                    name = target = alias.name.split(".")[0]
                scope.bind(name, "import")
                scope.imports.setdefault(name, target)
            continue
        if t is ast.ImportFrom:
            if node.level or not node.module:
                for alias in node.names:
                    scope.bind(alias.asname or alias.name, "local")
                continue
            for alias in node.names:
                if alias.name == "*":
                    scope.star_modules.append(node.module)
                    continue
                name = alias.asname or alias.name
                scope.bind(name, "import")
                scope.imports.setdefault(name, f"{node.module}.{alias.name}")
            continue
        if t is ast.Global:
            scope.globals.update(node.names)
            continue
        if t is ast.Nonlocal:
            scope.nonlocals.update(node.names)
            continue
        if t is ast.ExceptHandler and node.name:
            scope.bind(node.name, "local")
        elif t is ast.MatchAs or t is ast.MatchStar:
            if node.name:
                scope.bind(node.name, "local")
        elif t is ast.MatchMapping and node.rest:
            scope.bind(node.rest, "local")
        stack.extend(ast.iter_child_nodes(node))
    if scope.globals and scope.parent is not None:
        # `global x` then binding x: the binding belongs to the module (seen by later scopes).
        module = scope.module()
        for name in scope.globals & scope.bindings.keys():
            for how in scope.bindings.pop(name):
                module.bind(name, how)
            if name in scope.imports:
                module.imports.setdefault(name, scope.imports.pop(name))


_star_cache: dict[str, frozenset[str]] = {}


def _star_names(module: str) -> frozenset[str]:
    """Public names a ``from module import *`` brings in (only for modules we can import)."""
    if module not in _star_cache:
        names: frozenset[str] = frozenset()
        if module in _CATEGORY_MODULES and not module.startswith("torch"):
            try:
                mod = importlib.import_module(module)
                names = frozenset(getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")]))
            except ImportError:
                pass
        _star_cache[module] = names
    return _star_cache[module]


def _lookup(scope: Scope, name: str) -> tuple[str, str | None, Scope | None]:
    """Resolve a loaded name: ("import", dotted, scope) | ("local", None, scope) | ("builtin"|"free", ...)."""
    cur: Scope | None = scope
    first = True
    while cur is not None:
        if cur.kind == "class" and not first:
            cur = cur.parent
            continue
        first = False
        if name in cur.globals:
            cur = cur.module()
            first = True
            if name in cur.bindings:
                return _binding_result(cur, name)
            break
        if name in cur.nonlocals:
            cur = cur.parent
            continue
        if name in cur.bindings:
            return _binding_result(cur, name)
        cur = cur.parent
    module = scope.module()
    for star in module.star_modules:
        if name in _star_names(star):
            return "import", f"{star}.{name}", module
    if name in ASYNC_BUILTINS:
        return "builtin", f"builtins.{name}", None
    return "free", None, None


def _binding_result(scope: Scope, name: str) -> tuple[str, str | None, Scope | None]:
    hows = scope.bindings[name]
    if "import" in hows and (hows == {"import"} or scope.kind == "module"):
        # At module level an import beside another binding (the usual try/except ImportError
        # fallback) still counts as the import; inside a function any other binding shadows it.
        return "import", scope.imports[name], scope
    return "local", None, scope


def _chain(node: ast.AST) -> tuple[ast.Name | None, list[str]]:
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    attrs.reverse()
    return (node if isinstance(node, ast.Name) else None), attrs


def _label(node: ast.AST) -> str:
    root, attrs = _chain(node)
    if root is not None:
        return ".".join([root.id, *attrs])
    if isinstance(node, ast.Call):
        return "<call result>"
    if isinstance(node, ast.Await):
        return "<await result>"
    if isinstance(node, ast.Subscript):
        return "<subscript>"
    return "<expression>"


# ---------------------------------------------------------------------------
# The per-file scanner
# ---------------------------------------------------------------------------


class _FileScanner:
    def __init__(self, path: str) -> None:
        self.path = path
        self.occurrences: list[Occurrence] = []
        self.pending: list[tuple[str, ast.expr, Scope, Scope | None, int, int, str]] = []
        self.qual: list[str] = []
        self.scope: Scope = Scope("module", None)
        self.class_scope: Scope | None = None  # class whose method we are in (for self.x)
        self._guess_cache: dict[tuple[int, str], tuple[str, str] | None] = {}

    # -- helpers ---------------------------------------------------------
    @property
    def symbol(self) -> str:
        return ".".join(self.qual) if self.qual else "<module>"

    def record(self, node: ast.AST, category: str, api: str, kind: str, symbol: str | None = None) -> None:
        self.occurrences.append(Occurrence(self.path, node.lineno, node.col_offset, category, api, kind,
                                           symbol or self.symbol))

    def resolve(self, node: ast.AST, scope: Scope | None = None) -> str | None:
        root, attrs = _chain(node)
        if root is None or not isinstance(root.ctx, ast.Load):
            return None
        how, dotted, _ = _lookup(scope or self.scope, root.id)
        if how not in ("import", "builtin") or dotted is None:
            return None
        return ".".join([dotted, *attrs])

    # -- walking ---------------------------------------------------------
    def run(self, tree: ast.Module) -> None:
        self.imports_ray = any(imports_ray(node) for node in ast.walk(tree))
        _collect_bindings(self.scope, tree.body)
        for stmt in tree.body:
            self.visit(stmt)

    def visit(self, node: ast.AST, ctx: str | None = None) -> None:
        t = type(node)
        if t is ast.Name or t is ast.Attribute:
            self.visit_ref(node, ctx)
        elif t is ast.Call:
            self.visit_call(node)
        elif t in _FUNCS:
            self.visit_function(node)
        elif t is ast.ClassDef:
            self.visit_class(node)
        elif t is ast.Lambda:
            self.visit_lambda(node)
        elif t in _COMPREHENSIONS:
            self.visit_comprehension(node)
        elif t is ast.Await:
            self.record(node, "async_syntax", "await", "syntax")
            self.visit(node.value)
        elif t is ast.AsyncWith or t is ast.With:
            if t is ast.AsyncWith:
                self.record(node, "async_syntax", "async with", "syntax")
            for item in node.items:
                self.visit(item.context_expr)
                if item.optional_vars is not None:
                    self.visit(item.optional_vars)
                    self.add_evidence(item.optional_vars, "constructed", item.context_expr)
            for stmt in node.body:
                self.visit(stmt)
        elif t is ast.AsyncFor or t is ast.For:
            if t is ast.AsyncFor:
                self.record(node, "async_syntax", "async for", "syntax")
            self.add_evidence(node.target, "constructed", node.iter)
            for child in ast.iter_child_nodes(node):
                self.visit(child)
        elif t is ast.Assign:
            self.visit(node.value)
            for target in node.targets:
                self.visit(target)
                self.add_evidence(target, "constructed", node.value)
        elif t is ast.AnnAssign:
            self.visit_annotation(node.annotation)
            if node.value is not None:
                self.visit(node.value)
                self.add_evidence(node.target, "constructed", node.value)
            self.visit(node.target)
            self.add_evidence(node.target, "annotated", node.annotation)
        elif t is ast.ExceptHandler:
            if node.type is not None:
                self.visit(node.type, "except")
            for stmt in node.body:
                self.visit(stmt)
        elif t is ast.Constant and ctx == "annotation" and isinstance(node.value, str):
            self.visit_string_annotation(node)
        else:
            child_ctx = ctx if ctx in ("annotation", "except") else None
            for child in ast.iter_child_nodes(node):
                self.visit(child, child_ctx)

    def visit_ref(self, node: ast.Name | ast.Attribute, ctx: str | None) -> None:
        dotted = self.resolve(node)
        if dotted is not None:
            category = categorize(dotted)
            if category is not None:
                if ctx in ("call", "annotation", "except", "decorator"):
                    kind = ctx
                elif not isinstance(node.ctx, ast.Load):
                    kind = "assign_target"
                else:
                    kind = "reference"
                self.record(node, category, dotted, kind)
            return
        if type(node) is ast.Attribute:
            self.visit(node.value, ctx if ctx in ("annotation", "except") else None)

    def visit_call(self, node: ast.Call) -> None:
        func = node.func
        for where, api in (found := ray_calls(node, self.resolve(func), self.imports_ray)):
            self.record(where, "ray", api, "call")
        if not found.own_form and type(func) is ast.Attribute and self.resolve(func) is None:
            root, _ = _chain(func.value)
            module_attr = root is not None and _lookup(self.scope, root.id)[0] in ("import", "builtin")
            literal = isinstance(func.value, _LITERALS)
            if not module_attr and not literal:
                self.pending.append((func.attr, func.value, self.scope, self.class_scope,
                                     node.lineno, node.col_offset, self.symbol))
        self.visit(func, "call")
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            self.visit(kw.value)

    def visit_annotation(self, node: ast.AST | None) -> None:
        if node is not None:
            self.visit(node, "annotation")

    def visit_string_annotation(self, node: ast.Constant) -> None:
        try:
            expr = ast.parse(node.value.strip(), mode="eval").body
        except SyntaxError:
            return
        for sub in ast.walk(expr):
            if hasattr(sub, "lineno"):
                sub.lineno, sub.col_offset = node.lineno, node.col_offset
        self.visit(expr, "annotation")

    def visit_arguments(self, args: ast.arguments) -> None:
        for default in (*args.defaults, *[d for d in args.kw_defaults if d is not None]):
            self.visit(default)
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None and a.annotation is not None:
                self.visit_annotation(a.annotation)

    def push(self, kind: str, name: str | None) -> tuple[Scope, list[str]]:
        saved = (self.scope, list(self.qual))
        self.scope = Scope(kind, self.scope)
        if name is not None:
            if self.qual and saved[0].kind == "function":
                self.qual.append("<locals>")
            self.qual.append(name)
        return saved

    def pop(self, saved: tuple[Scope, list[str]]) -> None:
        self.scope, self.qual = saved[0], saved[1]

    def visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for dec in node.decorator_list:
            self.visit(dec, "decorator")
        self.visit_arguments(node.args)
        self.visit_annotation(node.returns)
        outer_class = self.scope if self.scope.kind == "class" else None
        saved_class = self.class_scope
        saved = self.push("function", node.name)
        if type(node) is ast.AsyncFunctionDef:
            api = "async def (async generator)" if _is_generator(node) else "async def"
            self.record(node, "async_syntax", api, "syntax")
        if outer_class is not None:
            self.class_scope = outer_class
        _bind_args(self.scope, node.args)
        args = node.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if a.annotation is not None:
                self.add_evidence(ast.Name(id=a.arg, ctx=ast.Store()), "annotated", a.annotation)
        _collect_bindings(self.scope, node.body)
        for stmt in node.body:
            self.visit(stmt)
        self.class_scope = saved_class
        self.pop(saved)

    def visit_class(self, node: ast.ClassDef) -> None:
        for dec in node.decorator_list:
            self.visit(dec, "decorator")
        for base in node.bases:
            self.visit(base)
        for kw in node.keywords:
            self.visit(kw.value)
        saved = self.push("class", node.name)
        _collect_bindings(self.scope, node.body)
        for stmt in node.body:
            self.visit(stmt)
            # Class-level annotations (dataclass fields) are evidence for self.<name>.
            if type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name:
                self.scope.attr_evidence.setdefault(stmt.target.id, []).append(
                    ("annotated", stmt.annotation, self.scope, None))
        self.pop(saved)

    def visit_lambda(self, node: ast.Lambda) -> None:
        self.visit_arguments(node.args)
        saved_qual = list(self.qual)
        saved = self.push("function", None)
        _bind_args(self.scope, node.args)
        self.visit(node.body)
        self.pop(saved)
        self.qual = saved_qual

    def visit_comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        gens = node.generators
        if any(g.is_async for g in gens) or _contains_await(node):
            self.record(node, "async_syntax", "async comprehension", "syntax")
        self.visit(gens[0].iter)
        saved = self.push("comprehension", None)
        self.qual = list(saved[1])
        _collect_bindings(self.scope, [g.target for g in gens])
        for i, gen in enumerate(gens):
            if i:
                self.visit(gen.iter)
            self.visit(gen.target)
            for cond in gen.ifs:
                self.visit(cond)
        if type(node) is ast.DictComp:
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self.pop(saved)

    # -- receiver evidence ----------------------------------------------
    def add_evidence(self, target: ast.AST, how: str, expr: ast.AST) -> None:
        entry = (how, expr, self.scope, self.class_scope)
        if type(target) is ast.Name:
            self.scope.evidence.setdefault(target.id, []).append(entry)
        elif (type(target) is ast.Attribute and type(target.value) is ast.Name
              and target.value.id in ("self", "cls") and self.class_scope is not None):
            self.class_scope.attr_evidence.setdefault(target.attr, []).append(entry)

    def expr_guess(self, expr: ast.AST, scope: Scope, cls: Scope | None, how: str,
                   depth: int = 0) -> str | None:
        if depth > 4:
            return None
        if how == "annotated":
            return self.annotation_guess(expr, scope)
        if type(expr) is ast.Await:
            expr = expr.value
        if type(expr) is not ast.Call:
            return None
        dotted = self.resolve(expr.func, scope)
        if dotted is not None:
            return dotted if categorize(dotted) is not None else None
        if type(expr.func) is ast.Attribute:
            inner = self.receiver_guess(expr.func.value, scope, cls, depth + 1)
            if inner is not None:
                base = inner[0] if inner[0].endswith(")") else inner[0] + "()"
                return f"{base}.{expr.func.attr}()"
        return None

    def annotation_guess(self, ann: ast.AST, scope: Scope) -> str | None:
        """The known type an annotation declares: ``X``, ``X[...]``, ``X | None``, ``Optional[X]``."""
        t = type(ann)
        if t is ast.Constant and isinstance(ann.value, str):
            try:
                return self.annotation_guess(ast.parse(ann.value.strip(), mode="eval").body, scope)
            except SyntaxError:
                return None
        if t is ast.BinOp and isinstance(ann.op, ast.BitOr):
            return self.annotation_guess(ann.left, scope) or self.annotation_guess(ann.right, scope)
        if t is ast.Subscript:
            outer = self.resolve(ann.value, scope)
            if outer in ("typing.Optional", "typing.Union"):
                parts = ann.slice.elts if type(ann.slice) is ast.Tuple else [ann.slice]
                for part in parts:
                    found = self.annotation_guess(part, scope)
                    if found:
                        return found
                return None
            ann = ann.value
        if type(ann) in (ast.Name, ast.Attribute):
            dotted = self.resolve(ann, scope)
            if dotted is not None and categorize(dotted) is not None:
                return dotted
        return None

    def receiver_guess(self, recv: ast.AST, scope: Scope, cls: Scope | None,
                       depth: int = 0) -> tuple[str, str] | None:
        if type(recv) is ast.Name:
            _, _, owner = _lookup(scope, recv.id)
            if owner is None:
                return None
            return self._evidence_guess((id(owner), recv.id), owner.evidence.get(recv.id, []), depth)
        if (type(recv) is ast.Attribute and type(recv.value) is ast.Name
                and recv.value.id in ("self", "cls") and cls is not None):
            return self._evidence_guess((id(cls), "self." + recv.attr), cls.attr_evidence.get(recv.attr, []),
                                        depth)
        if type(recv) in (ast.Call, ast.Await):
            guess = self.expr_guess(recv, scope, cls, "constructed", depth)
            return (guess, "inline") if guess else None
        return None

    def _evidence_guess(self, key: tuple[int, str], entries: list, depth: int) -> tuple[str, str] | None:
        # Memoised per binding; a binding being evaluated counts as unknown (breaks x = x.method() cycles).
        if key in self._guess_cache:
            return self._guess_cache[key]
        self._guess_cache[key] = None
        found = None
        for how, expr, escope, ecls in entries:
            guess = self.expr_guess(expr, escope, ecls, how, depth)
            if guess:
                found = (guess, how)
                break
        self._guess_cache[key] = found
        return found

    def finish(self) -> list[Candidate]:
        out = []
        for method, recv, scope, cls, line, col, symbol in self.pending:
            found = self.receiver_guess(recv, scope, cls)
            if found is not None:
                out.append(Candidate(self.path, line, col, method, _label(recv), found[0], found[1], symbol))
            elif method in NAME_ONLY_METHODS and self.occurrences:
                out.append(Candidate(self.path, line, col, method, _label(recv), "", "name only", symbol))
        return out


def _walk_own_scope(node: ast.AST) -> Iterator[ast.AST]:
    stack = list(ast.iter_child_nodes(node))
    while stack:
        sub = stack.pop()
        if isinstance(sub, (*_FUNCS, ast.ClassDef, ast.Lambda)):
            continue
        yield sub
        stack.extend(ast.iter_child_nodes(sub))


def _is_generator(node: ast.AsyncFunctionDef) -> bool:
    return any(type(sub) in (ast.Yield, ast.YieldFrom) for sub in _walk_own_scope(node))


def _contains_await(node: ast.AST) -> bool:
    return any(type(sub) is ast.Await for sub in _walk_own_scope(node))


PARSE_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


def scan_source(source: bytes | str, path: str) -> FileResult:
    """Scan one file's text. Top-level ``await`` (notebooks) is accepted."""
    result = FileResult(path)
    try:
        tree = compile(source, path, "exec", flags=PARSE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        msg = getattr(exc, "msg", None) or str(exc)
        result.error = f"{type(exc).__name__}: {msg}" + (f" (line {line})" if line else "")
        return result
    scanner = _FileScanner(path)
    scanner.run(tree)
    result.candidates = sorted(scanner.finish())
    result.occurrences = sorted(scanner.occurrences)
    return result


# ---------------------------------------------------------------------------
# Reading trees
# ---------------------------------------------------------------------------
