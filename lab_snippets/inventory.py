"""Source inventory: every static use of a concurrency mechanism in a Python tree.

The scanner reads a tree of ``.py`` files (a directory, or a git repository at a
commit, read through git without a checkout), parses each file with the standard
library :mod:`ast`, resolves imports and aliases per scope, and records every
occurrence of a concurrency mechanism: its category, full dotted API name, kind
(``call`` or a non-call kind), path, line and enclosing qualified symbol.

A static occurrence is not a run count: a line inside a loop counts once, a line
that never runs counts too.

Command line::

    python -m lab_snippets.inventory scan [PATH] [--commit C] --json OUT
    python -m lab_snippets.inventory render JSON --out book/reference
    python -m lab_snippets.inventory regenerate

``PATH`` defaults to the ``SLIME_SRC`` environment variable. ``regenerate`` scans
``SLIME_SRC`` at the pinned commit and renders the book pages.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import json
import os
import subprocess
import sys
import tomllib
import urllib.parse
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

# The slime commit the course is pinned to. ``lab_snippets/sites.toml`` ``[meta] commit``
# overrides it when that file exists (see :func:`pinned_commit`).
PINNED_COMMIT = "624b824a898ab0ec1fcb4d373004c7f3852bf515"
SLIME_REPO_URL = "https://github.com/THUDM/slime"
SCHEMA_VERSION = 1
PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent
DEFAULT_OUT = PROJECT_ROOT / "book" / "reference"
JSON_NAME = "slime_inventory.json"
PAGE_NAMES = ("inventory.md", "chapter_map.md", "versions.md")
REGENERATE_HINT = (
    "SLIME_SRC=/path/to/slime python -m lab_snippets.inventory regenerate   "
    "(or, to re-render the pages from the committed JSON only: "
    "python -m lab_snippets.inventory render book/reference/slime_inventory.json --out book/reference)"
)

# ---------------------------------------------------------------------------
# Categories
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Category:
    key: str
    title: str
    original: str
    description: str


CATEGORIES: tuple[Category, ...] = (
    Category("async_syntax", "Async syntax", "异步语法",
             "Native coroutine syntax: `async def`, `await`, `async with`, `async for` and async "
             "comprehensions. An `async def` whose body yields is an async generator and is counted "
             "apart from plain `async def`."),
    Category("asyncio", "asyncio tasks and event loop", "asyncio 任务与事件循环",
             "Every name reached through the `asyncio` package: tasks, waiting, synchronisation, "
             "queues, loops, streams and exceptions."),
    Category("threads", "Threads and synchronisation", "线程与同步",
             "`threading` and `_thread`: threads and their synchronisation primitives."),
    Category("sync_queue", "Synchronous queues", "同步队列", "The standard library `queue` module."),
    Category("executors", "Executors and futures", "执行器与 Future",
             "`concurrent.futures`: thread and process pools and their futures."),
    Category("multiprocessing", "Multiprocessing", "多进程",
             "`multiprocessing`, with `torch.multiprocessing` (a wrapper around it) shown apart."),
    Category("subprocess", "External commands", "外部命令",
             "`subprocess`: starting, controlling and talking to child processes, and its constants."),
    Category("signals", "Signals", "系统信号", "`signal`: handlers, masks and signal constants."),
    Category("contextvars", "Task context", "任务上下文", "`contextvars`: context variables and contexts."),
    Category("async_context", "Async context helpers", "异步上下文辅助",
             "The asynchronous parts of `contextlib` (`asynccontextmanager`, `AsyncExitStack`, "
             "`aclosing`, `AbstractAsyncContextManager`)."),
    Category("async_checks", "Async object checks", "异步对象检查",
             "The coroutine and async-generator checks of `inspect`."),
    Category("async_builtins", "Async builtins", "异步内置函数", "The builtins `aiter` and `anext`."),
    Category("async_typing", "Async typing markers", "异步类型标记",
             "`Awaitable`, `Coroutine`, `AsyncIterable`, `AsyncIterator`, `AsyncGenerator` and "
             "`AsyncContextManager` from `typing`, `typing_extensions` or `collections.abc`."),
    Category("sync_sleep", "Synchronous sleep", "同步休眠", "Adjacent mechanism: blocking `time.sleep`."),
    Category("process_control", "Process control helpers", "进程控制辅助",
             "Adjacent mechanism: the process-lifecycle, signal and pipe functions of `os` "
             "(`kill`, `killpg`, `getpid`, `setsid`, `waitpid`, `fork`, `pipe`, `_exit`, ...)."),
    Category("file_locks", "File locks", "文件锁", "Adjacent mechanism: `fcntl` (file locks)."),
    Category("io_readiness", "I/O readiness", "I/O 就绪等待",
             "Adjacent mechanism: `select` and `selectors`."),
    Category("coroutine_helpers", "Coroutine decorator helpers", "协程装饰辅助",
             "`types.coroutine` and the coroutine / async-generator types of `types`."),
)
CATEGORY_BY_KEY = {c.key: c for c in CATEGORIES}
METHODS_CATEGORY = Category(
    "methods_to_verify", "Object methods still to verify", "待核实的对象方法",
    "Method calls whose receiver's type is only guessed: from the constructor or annotation that "
    "built or declared it, or (in files that use some mechanism) from the method name alone. "
    "They are listed apart and never added to the totals.",
)

# Modules whose every attribute belongs to a category (longest prefix first).
MODULE_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("torch.multiprocessing", "multiprocessing"),
    ("concurrent.futures", "executors"),
    ("multiprocessing", "multiprocessing"),
    ("subprocess", "subprocess"),
    ("contextvars", "contextvars"),
    ("selectors", "io_readiness"),
    ("threading", "threads"),
    ("_thread", "threads"),
    ("asyncio", "asyncio"),
    ("signal", "signals"),
    ("select", "io_readiness"),
    ("fcntl", "file_locks"),
    ("queue", "sync_queue"),
)

_ASYNC_MARKERS = ("Awaitable", "Coroutine", "AsyncIterable", "AsyncIterator", "AsyncGenerator")
# Individual members of otherwise unrelated modules.
MEMBER_CATEGORIES: dict[str, str] = {
    **{f"contextlib.{n}": "async_context" for n in
       ("asynccontextmanager", "AsyncExitStack", "aclosing", "AbstractAsyncContextManager")},
    **{f"inspect.{n}": "async_checks" for n in
       ("iscoroutinefunction", "iscoroutine", "isawaitable", "isasyncgen", "isasyncgenfunction",
        "getcoroutinestate", "getcoroutinelocals", "getasyncgenstate", "getasyncgenlocals",
        "markcoroutinefunction", "CORO_CREATED", "CORO_RUNNING", "CORO_SUSPENDED", "CORO_CLOSED",
        "AGEN_CREATED", "AGEN_RUNNING", "AGEN_SUSPENDED", "AGEN_CLOSED")},
    "builtins.aiter": "async_builtins",
    "builtins.anext": "async_builtins",
    **{f"typing.{n}": "async_typing" for n in (*_ASYNC_MARKERS, "AsyncContextManager")},
    **{f"typing_extensions.{n}": "async_typing" for n in (*_ASYNC_MARKERS, "AsyncContextManager")},
    **{f"collections.abc.{n}": "async_typing" for n in _ASYNC_MARKERS},
    "time.sleep": "sync_sleep",
    **{f"os.{n}": "process_control" for n in
       ("kill", "killpg", "getpid", "getppid", "getpgid", "getpgrp", "getsid", "setsid", "setpgid",
        "setpgrp", "wait", "wait3", "wait4", "waitpid", "waitid", "waitstatus_to_exitcode",
        "WNOHANG", "WIFEXITED", "WEXITSTATUS", "WIFSIGNALED", "WTERMSIG", "WIFSTOPPED",
        "fork", "forkpty", "register_at_fork", "pipe", "pipe2", "_exit", "abort",
        "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe",
        "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe",
        "posix_spawn", "posix_spawnp", "pidfd_open", "system", "popen", "nice", "sched_yield")},
    **{f"types.{n}": "coroutine_helpers" for n in ("coroutine", "CoroutineType", "AsyncGeneratorType")},
}
ASYNC_BUILTINS = ("aiter", "anext")


_MODULE_CATEGORY_MAP = dict(MODULE_CATEGORIES)


@functools.cache
def categorize(dotted: str) -> str | None:
    """Category key of a full dotted API name, or None when it is not a concurrency mechanism."""
    parts = dotted.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        category = _MODULE_CATEGORY_MAP.get(prefix) or MEMBER_CATEGORIES.get(prefix)
        if category is not None:
            return category
    return None


_CATEGORY_MODULES = frozenset([*_MODULE_CATEGORY_MAP, *(m.rsplit(".", 1)[0] for m in MEMBER_CATEGORIES)])


# Method names recorded as "still to verify" even when nothing is known about the receiver
# (only in files that use some mechanism). With constructor/annotation evidence any method counts.
NAME_ONLY_METHODS = frozenset({
    "acquire", "release", "locked", "put_nowait", "get_nowait", "task_done", "notify", "notify_all",
    "is_set", "wait", "wait_for", "set_result", "set_exception", "add_done_callback",
    "remove_done_callback", "cancel", "cancelled", "done", "result", "run_until_complete",
    "run_forever", "call_soon", "call_soon_threadsafe", "call_later", "call_at", "create_task",
    "run_in_executor", "is_alive", "terminate", "kill", "communicate", "poll", "send_signal", "submit",
    "shutdown", "drain", "wait_closed", "readexactly", "readuntil", "start", "qsize",
})

# ---------------------------------------------------------------------------
# Chapters and the mechanism -> chapter map
# ---------------------------------------------------------------------------

CHAPTERS: tuple[tuple[str, str, str], ...] = (
    ("01", "async_def", "async def: after defining it, when does it run?"),
    ("02", "await", "await: waiting for a result is not automatic concurrency"),
    ("03", "tasks_gather", "Task and gather: scheduling several pieces of work"),
    ("04", "wait_as_completed", "wait and as_completed: handle finished work first"),
    ("05", "cancellation", "Cancellation and timeouts"),
    ("06", "semaphore", "Semaphore: limiting how much work enters at once"),
    ("07", "queue", "Queue: connecting producer speed and consumer speed"),
    ("08", "thread_pools", "Thread pools: moving blocking work off the event loop"),
    ("09", "lock_event_threads", "Lock, Event and thread exit"),
    ("10", "async_with_for", "async with, async for and async generators"),
    ("11", "contextvar", "ContextVar: concurrent tasks keep their own context"),
    ("12", "processes", "Process pools, subprocesses and the system boundary"),
    ("13", "cross_thread_loop", "Future, callbacks and a cross-thread event loop"),
    ("14", "back_to_slime", "Back to slime: one whole task"),
    ("15", "async_event_lock", "Event notification and async mutual exclusion"),
    ("16", "condition_rlock_timer", "Condition, RLock and Timer"),
    ("17", "executor_shutdown", "Thread pool Future results and shutdown"),
    ("18", "process_lifecycle", "Process lifecycle: from queued work to timeout reaping"),
    ("19", "signals_groups_flock", "Signals, process groups and file locks"),
    ("20", "streams", "asyncio Streams: receiving, framing and closing connections"),
    ("21", "capability_checks", "Async capability checks and protocol boundaries"),
    ("25", "hidden_caps", "Hidden concurrency caps"),
    ("26", "async_subprocesses", "Subprocesses from asyncio"),
    ("27", "hazard_clinic", "A hazard clinic: reading real concurrent code critically"),
)
CHAPTER_BY_NUM = {num: (slug, title) for num, slug, title in CHAPTERS}


def _names(prefix: str, names: str) -> list[str]:
    return [f"{prefix}.{n}" for n in names.split()]


# (patterns, chapters). A pattern is an exact API name, or ends with ".*" for a prefix
# (matching the prefix itself too). First matching rule wins; order is specific -> general.
CHAPTER_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("async def",), ("01",)),
    (("asyncio",), ("21",)),  # the module itself as a value: hasattr/getattr capability checks
    (("await",), ("02",)),
    (("async with", "async for", "async comprehension", "async def (async generator)"), ("10",)),
    (("asyncio.run",), ("01",)),
    (tuple(_names("asyncio", "iscoroutinefunction iscoroutine")), ("21", "01")),
    (tuple(_names("asyncio", "sleep")), ("02",)),
    (tuple(_names("asyncio", "create_task gather TaskGroup ensure_future Task all_tasks current_task")),
     ("03",)),
    (tuple(_names("asyncio", "wait as_completed FIRST_COMPLETED ALL_COMPLETED FIRST_EXCEPTION")), ("04",)),
    (tuple(_names("asyncio", "shield")), ("05", "27")),
    (tuple(_names("asyncio", "CancelledError TimeoutError timeout timeout_at wait_for "
                             "Timeout exceptions.CancelledError exceptions.TimeoutError")), ("05",)),
    (tuple(_names("asyncio", "Semaphore BoundedSemaphore")), ("06",)),
    (tuple(_names("asyncio", "Queue LifoQueue PriorityQueue QueueEmpty QueueFull QueueShutDown")), ("07",)),
    (tuple(_names("asyncio", "to_thread")), ("08", "25")),
    (tuple(_names("asyncio", "run_coroutine_threadsafe new_event_loop set_event_loop get_event_loop "
                             "get_running_loop wrap_future Future AbstractEventLoop isfuture "
                             "BaseEventLoop events.AbstractEventLoop Runner")), ("13", "08")),
    (tuple(_names("asyncio", "Event Lock")), ("15",)),
    (tuple(_names("asyncio", "Condition")), ("16",)),
    (("asyncio.subprocess.*", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"),
     ("12", "18", "26")),
    (tuple(_names("asyncio", "start_server open_connection StreamReader StreamWriter "
                             "IncompleteReadError LimitOverrunError start_unix_server "
                             "open_unix_connection Server")), ("20",)),
    (tuple(_names("threading", "Condition RLock Timer")), ("16",)),
    (tuple(_names("threading", "Semaphore BoundedSemaphore")), ("06", "09")),
    (("threading.local",), ("11",)),
    (("threading.*", "_thread.*"), ("09",)),
    (("queue.*",), ("07",)),
    (("concurrent.futures.ProcessPoolExecutor",), ("12", "17")),
    (("concurrent.futures.*",), ("17", "08")),
    (("multiprocessing.*", "torch.multiprocessing.*"), ("12", "18")),
    (tuple(_names("subprocess", "Popen TimeoutExpired")), ("12", "18", "26")),
    (("subprocess.*",), ("12",)),
    (("signal.*",), ("19",)),
    (("contextvars.*",), ("11",)),
    (("contextlib.*",), ("10",)),
    (("inspect.*",), ("21", "01")),
    (("builtins.aiter", "builtins.anext"), ("10",)),
    (("typing.*", "typing_extensions.*", "collections.abc.*"), ("21",)),
    (("time.sleep",), ("08", "02")),
    (tuple(_names("os", "getpid getppid fork register_at_fork")), ("12",)),
    (tuple(_names("os", "killpg setsid setpgid setpgrp getpgid getpgrp getsid")), ("19",)),
    (tuple(_names("os", "kill wait wait3 wait4 waitpid waitid waitstatus_to_exitcode WNOHANG WIFEXITED "
                        "WEXITSTATUS WIFSIGNALED WTERMSIG WIFSTOPPED _exit abort")), ("18",)),
    (("fcntl.*",), ("19",)),
)


def chapters_for(api: str) -> tuple[str, ...]:
    """Chapters that teach an API (first = main chapter); empty when no chapter teaches it."""
    for patterns, chapters in CHAPTER_RULES:
        for pattern in patterns:
            if pattern.endswith(".*"):
                prefix = pattern[:-2]
                if api == prefix or api.startswith(prefix + "."):
                    return chapters
            elif api == pattern:
                return chapters
    return ()


# ---------------------------------------------------------------------------
# Records
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
        if type(func) is ast.Attribute and self.resolve(func) is None:
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

SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}


def iter_directory(root: Path) -> Iterator[tuple[str, bytes]]:
    """``(posix relative path, bytes)`` for every ``.py`` file, skipping hidden and cache directories."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS]
        for name in filenames:
            if name.endswith(".py"):
                full = Path(dirpath) / name
                if full.is_symlink() or not full.is_file():
                    continue
                found.append(full.relative_to(root).as_posix())
    for rel in sorted(found):
        yield rel, (root / rel).read_bytes()


def _git(path: Path, *args: str, stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", "-C", str(path), *args], input=stdin, capture_output=True, check=False)
    if proc.returncode != 0:
        raise InventoryError(f"git {' '.join(args[:2])} failed in {path}: "
                             f"{proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def is_git_repo(path: Path) -> bool:
    proc = subprocess.run(["git", "-C", str(path), "rev-parse", "--git-dir"],
                          capture_output=True, check=False)
    return proc.returncode == 0


def iter_git(path: Path, commit: str) -> Iterator[tuple[str, bytes]]:
    """``.py`` files of a git repository (bare or not) at ``commit``, read from the object store."""
    resolved = _git(path, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").decode().strip()
    listing = _git(path, "ls-tree", "-r", "-z", "--full-tree", resolved)
    blobs: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, otype, sha = meta.decode().split()
        rel = name.decode("utf-8", errors="surrogateescape")
        if otype == "blob" and mode in ("100644", "100755") and rel.endswith(".py"):
            blobs.append((rel, sha))
    blobs.sort()
    if not blobs:
        return
    out = _git(path, "cat-file", "--batch", stdin="".join(f"{sha}\n" for _, sha in blobs).encode())
    pos = 0
    for rel, _sha in blobs:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        start = header_end + 1
        yield rel, out[start:start + size]
        pos = start + size + 1


class InventoryError(Exception):
    """A user-facing error (bad path, unknown commit, missing SLIME_SRC)."""


def source_files(path: Path, commit: str | None) -> tuple[Iterator[tuple[str, bytes]], str | None]:
    """Pick the reader: git at a commit, a bare repository at HEAD, or a plain directory."""
    if not path.exists():
        raise InventoryError(f"{path} does not exist")
    if not path.is_dir():
        raise InventoryError(f"{path} is not a directory")
    if commit is not None:
        if not is_git_repo(path):
            raise InventoryError(f"--commit given but {path} is not a git repository")
        full = _git(path, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").decode().strip()
        return iter_git(path, full), full
    bare = subprocess.run(["git", "-C", str(path), "rev-parse", "--is-bare-repository"],
                          capture_output=True, text=True, check=False)
    if bare.returncode == 0 and bare.stdout.strip() == "true":
        full = _git(path, "rev-parse", "--verify", "HEAD^{commit}").decode().strip()
        return iter_git(path, full), full
    return iter_directory(path), None


def scan_tree(path: Path, commit: str | None = None, repo_url: str | None = SLIME_REPO_URL,
              label: str | None = None) -> dict:
    """Scan a tree and return the inventory as a JSON-ready dict."""
    files, full_commit = source_files(path, commit)
    results = [scan_source(data, rel) for rel, data in files]
    repo_url = repo_url.rstrip("/") if (repo_url and full_commit) else None
    if label is None:
        label = "/".join(repo_url.split("/")[-2:]) if repo_url else path.resolve().name
    return build_inventory(results, commit=full_commit, repo_url=repo_url, label=label)


def build_inventory(results: list[FileResult], commit: str | None, repo_url: str | None, label: str) -> dict:
    occurrences = sorted(o for r in results for o in r.occurrences)
    candidates = sorted(c for r in results for c in r.candidates)
    totals = Counter(o.category for o in occurrences)
    return {
        "schema": SCHEMA_VERSION,
        "tool": "lab_snippets.inventory",
        "source": {"label": label, "repo_url": repo_url, "commit": commit},
        "parser": f"Python {sys.version_info.major}.{sys.version_info.minor} ast",
        "files_scanned": len(results),
        "files_with_occurrences": len({o.path for o in occurrences}),
        "unparsable": [{"path": r.path, "error": r.error} for r in sorted(results, key=lambda r: r.path)
                       if r.error],
        "totals": {c.key: totals.get(c.key, 0) for c in CATEGORIES},
        "candidates_total": len(candidates),
        "occurrences": [asdict(o) for o in occurrences],
        "candidates": [asdict(c) for c in candidates],
    }


def dump_json(inventory: dict) -> str:
    """Stable, diff-friendly JSON: one record per line."""
    head = {k: v for k, v in inventory.items() if k not in ("occurrences", "candidates")}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    for key in ("occurrences", "candidates"):
        records = inventory[key]
        lines.append(f"  {json.dumps(key)}: [")
        for i, rec in enumerate(records):
            comma = "," if i < len(records) - 1 else ""
            lines.append("    " + json.dumps(rec, ensure_ascii=False, separators=(", ", ": ")) + comma)
        lines.append("  ]," if key == "occurrences" else "  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def load_json(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA_VERSION:
        raise InventoryError(f"{path}: schema {data.get('schema')!r}, expected {SCHEMA_VERSION}")
    return data


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------

KIND_LABELS = {
    "call": "call", "syntax": "syntax", "annotation": "annotation", "except": "`except` clause",
    "decorator": "decorator", "assign_target": "assignment target", "reference": "argument / reference",
}
TOP_FILES = 10


def _md_code(text: str) -> str:
    return f"``{text}``" if "`" in text else f"`{text}`"


class _Links:
    def __init__(self, inventory: dict, notebooks_dir: Path | None) -> None:
        src = inventory["source"]
        self.commit = src.get("commit")
        self.base = src.get("repo_url")
        self.notebooks_dir = notebooks_dir
        self._toc_text: str | None = None

    def location(self, path: str, line: int) -> str:
        text = _md_code(f"{path}:{line}")
        if self.base and self.commit:
            return f"[{text}]({self.base}/blob/{self.commit}/{urllib.parse.quote(path)}#L{line})"
        return text

    def file(self, path: str) -> str:
        if self.base and self.commit:
            return f"[{_md_code(path)}]({self.base}/blob/{self.commit}/{urllib.parse.quote(path)})"
        return _md_code(path)

    def chapter(self, num: str, short: bool = False) -> str:
        slug, title = CHAPTER_BY_NUM[num]
        text = num if short else f"{num} · {title}"
        if self.linkable(num, slug):
            return f"{{doc}}`{text} <../../notebooks/{num}_{slug}>`"
        return text

    def linkable(self, num: str, slug: str) -> bool:
        """A chapter gets a link only if its notebook exists and the book's toc (if any) lists it."""
        if self.notebooks_dir is None or not (self.notebooks_dir / f"{num}_{slug}.py").is_file():
            return False
        toc = self.notebooks_dir.parent / "_toc.yml"
        if not toc.is_file():
            return True
        if self._toc_text is None:
            self._toc_text = toc.read_text(encoding="utf-8")
        return f"notebooks/{num}_{slug}" in self._toc_text

    def chapters(self, api: str, short: bool = True) -> str:
        nums = chapters_for(api)
        return ", ".join(self.chapter(n, short) for n in nums) if nums else "—"


def _header(inventory: dict, title: str, label: str) -> list[str]:
    return [
        "<!-- Generated by `python -m lab_snippets.inventory render`; do not edit by hand. -->",
        "",
        f"({label})=",
        f"# {title}",
        "",
    ]


def _source_line(inventory: dict) -> str:
    src = inventory["source"]
    commit = src.get("commit")
    if commit and src.get("repo_url"):
        return f"[`{src['label']}` at `{commit[:12]}`]({src['repo_url']}/tree/{commit})"
    if commit:
        return f"`{src['label']}` at `{commit[:12]}`"
    return f"`{src['label']}` (working tree)"


def _api_rows(occs: list[dict], links: _Links) -> list[str]:
    by_api: dict[str, Counter] = defaultdict(Counter)
    for o in occs:
        by_api[o["api"]][o["kind"]] += 1
    rows = ["| API | total | call | non-call | non-call kinds | files | chapter |",
            "|---|---:|---:|---:|---|---:|---|"]
    order = sorted(by_api, key=lambda a: (-sum(by_api[a].values()), a))
    files = defaultdict(set)
    for o in occs:
        files[o["api"]].add(o["path"])
    for api in order:
        kinds = by_api[api]
        total = sum(kinds.values())
        call = kinds.get("call", 0)
        syntax = kinds.get("syntax", 0)
        non_call = total - call - syntax
        detail = ", ".join(f"{KIND_LABELS[k]} {kinds[k]}" for k in NON_CALL_KINDS if kinds.get(k))
        call_cell = "—" if syntax else str(call)
        non_call_cell = "—" if syntax else str(non_call)
        rows.append(f"| {_md_code(api)} | {total} | {call_cell} | {non_call_cell} | {detail or '—'} "
                    f"| {len(files[api])} | {links.chapters(api)} |")
    return rows


def _top_files(occs: list[dict], links: _Links) -> list[str]:
    per_file = Counter(o["path"] for o in occs)
    top = sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_FILES]
    rows = ["| file | occurrences |", "|---|---:|"]
    rows += [f"| {links.file(path)} | {n} |" for path, n in top]
    return rows


def _dropdown(title: str, body: list[str]) -> list[str]:
    return ["````{dropdown} " + title, *body, "````"]


def _location_rows(occs: list[dict], links: _Links) -> list[str]:
    rows = ["| API | kind | location | symbol |", "|---|---|---|---|"]
    for o in sorted(occs, key=lambda o: (o["api"], o["path"], o["line"], o["col"])):
        location = links.location(o["path"], o["line"])
        rows.append(f"| {_md_code(o['api'])} | {KIND_LABELS[o['kind']]} | {location} "
                    f"| {_md_code(o['symbol'])} |")
    return rows


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def render_inventory(inventory: dict, links: _Links) -> str:
    occs_by_cat: dict[str, list[dict]] = defaultdict(list)
    for o in inventory["occurrences"]:
        occs_by_cat[o["category"]].append(o)
    out = _header(inventory, "Source inventory", "reference-inventory")
    total = sum(inventory["totals"].values())
    out += [
        f"Every static use of a concurrency mechanism in {_source_line(inventory)}: "
        f"{inventory['files_scanned']} `.py` files scanned with the {inventory['parser']} parser, "
        f"{inventory['files_with_occurrences']} of them use at least one mechanism. "
        f"**{total}** occurrences in {len(CATEGORIES)} categories, plus "
        f"{inventory['candidates_total']} object methods still to verify (listed apart, not in the totals).",
        "",
        "```{important}",
        "A static occurrence is not a run count. A line inside a loop counts once; a line that never "
        "runs counts too. The numbers say where to read, not how often anything happens.",
        "```",
        "",
        "How to read the tables: *call* means the name is called right there (`asyncio.gather(...)`); "
        "the non-call kinds are a type annotation, an `except` clause, a decorator, an assignment "
        "target (usually a test replacing the function) and an argument or other reference "
        "(`isinstance(x, asyncio.Task)`, `raise`, passing `subprocess.PIPE`). Imports themselves are "
        "not counted; a name counts where it is used, whatever alias it was imported under, and not "
        "when a local variable or parameter shadows it. Each location links to its line at the pinned "
        "commit. The *chapter* column points to the chapter that teaches the mechanism "
        "(see {ref}`reference-chapter-map`).",
        "",
    ]
    if inventory["unparsable"]:
        out += ["Files that could not be parsed (reported, not scanned):", ""]
        out += [f"- {links.file(u['path'])}: {u['error']}" for u in inventory["unparsable"]]
        out.append("")
    out += ["## Totals", "", "| category | original title | total | call | non-call | files |",
            "|---|---|---:|---:|---:|---:|"]
    for cat in CATEGORIES:
        occs = occs_by_cat.get(cat.key, [])
        calls = sum(1 for o in occs if o["kind"] == "call")
        syntax = sum(1 for o in occs if o["kind"] == "syntax")
        nfiles = len({o["path"] for o in occs})
        call_cell = "—" if cat.key == "async_syntax" else str(calls)
        non_call_cell = "—" if cat.key == "async_syntax" else str(len(occs) - calls - syntax)
        out.append(f"| {{ref}}`{cat.title} <inventory-{cat.key.replace('_', '-')}>` | {cat.original} "
                   f"| {len(occs)} | {call_cell} | {non_call_cell} | {nfiles} |")
    out.append(f"| **all categories** | | **{total}** | | | {inventory['files_with_occurrences']} |")
    out.append(f"| {{ref}}`{METHODS_CATEGORY.title} <inventory-methods-to-verify>` "
               f"| {METHODS_CATEGORY.original} | {inventory['candidates_total']} (not in totals) | | | "
               f"{len({c['path'] for c in inventory['candidates']})} |")
    out.append("")
    for cat in CATEGORIES:
        occs = occs_by_cat.get(cat.key, [])
        out += [f"(inventory-{cat.key.replace('_', '-')})=", f"## {cat.title}", "",
                f"*{cat.original}* — {cat.description}", "",
                f"**{len(occs)}** static occurrences in "
                f"{_plural(len({o['path'] for o in occs}), 'file')}.", ""]
        if not occs:
            out += ["None at this commit.", ""]
            continue
        groups = [("", occs)]
        if cat.key == "multiprocessing":
            torch = [o for o in occs if o["api"].startswith("torch.")]
            std = [o for o in occs if not o["api"].startswith("torch.")]
            groups = [("Standard library `multiprocessing`", std), ("`torch.multiprocessing`", torch)]
        for subtitle, sub in groups:
            if subtitle:
                out += [f"### {subtitle}", "", f"{len(sub)} occurrences.", ""]
                if not sub:
                    continue
            out += _api_rows(sub, links) + [""]
        out += ["Files with the most occurrences:", ""] + _top_files(occs, links) + [""]
        out += _dropdown(f"All {len(occs)} locations ({cat.title})", _location_rows(occs, links)) + [""]
    out += _render_candidates(inventory, links)
    return "\n".join(out).rstrip("\n") + "\n"


def _render_candidates(inventory: dict, links: _Links) -> list[str]:
    cands = inventory["candidates"]
    cat = METHODS_CATEGORY
    out = ["(inventory-methods-to-verify)=", f"## {cat.title}", "",
           f"*{cat.original}* — {cat.description}", "",
           f"**{len(cands)}** candidates in {_plural(len({c['path'] for c in cands}), 'file')}, "
           "never added to the totals. *constructed*: the receiver was assigned from a known call "
           "(`x = threading.Lock()`, `with ThreadPoolExecutor() as x`, `for f in as_completed(...)`); "
           "*annotated*: its annotation names a known type; *inline*: the call is made directly on a "
           "known call's result; *name only*: nothing is known but the method name, in a file that uses "
           "some mechanism. A guess ending in `()` is the result of a method of a guessed object.", ""]
    if not cands:
        return out + ["None at this commit.", ""]
    by_method: dict[str, Counter] = defaultdict(Counter)
    guesses: dict[str, Counter] = defaultdict(Counter)
    for c in cands:
        by_method[c["method"]][c["evidence"]] += 1
        if c["guess"]:
            guesses[c["method"]][c["guess"]] += 1
    evidences = ("constructed", "annotated", "inline", "name only")
    out += ["| method | total | " + " | ".join(evidences) + " | most common guesses |",
            "|---|---:|" + "---:|" * len(evidences) + "---|"]
    for method in sorted(by_method, key=lambda m: (-sum(by_method[m].values()), m)):
        counts = by_method[method]
        common = sorted(guesses[method].items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        common_cell = ", ".join(f"{_md_code(g)} {n}" for g, n in common) or "—"
        out.append(f"| {_md_code('.' + method + '()')} | {sum(counts.values())} | "
                   + " | ".join(str(counts.get(e, 0)) for e in evidences) + f" | {common_cell} |")
    out.append("")
    rows = ["| method | receiver | guess | evidence | location | symbol |", "|---|---|---|---|---|---|"]
    for c in sorted(cands, key=lambda c: (c["method"], c["path"], c["line"], c["col"])):
        guess = _md_code(c["guess"]) if c["guess"] else "—"
        rows.append(f"| {_md_code('.' + c['method'] + '()')} | {_md_code(c['receiver'])} | {guess} | "
                    f"{c['evidence']} | {links.location(c['path'], c['line'])} | {_md_code(c['symbol'])} |")
    out += _dropdown(f"All {len(cands)} candidates", rows) + [""]
    return out


def render_chapter_map(inventory: dict, links: _Links) -> str:
    counts: dict[str, Counter] = defaultdict(Counter)
    for o in inventory["occurrences"]:
        counts[o["category"]][o["api"]] += 1
    out = _header(inventory, "Mechanisms and chapters", "reference-chapter-map")
    out += [
        f"Every mechanism the {_source_line(inventory)} inventory finds, with the chapter that teaches "
        "it (the first chapter listed is the main one). Counts are static occurrences, not run counts; "
        "follow the category link to {ref}`reference-inventory` for every location. Chapters not yet "
        "written appear as plain text.",
        "",
        "## By chapter",
        "",
        "| chapter | main chapter for | also taught here | occurrences (main) |",
        "|---|---|---|---:|",
    ]
    main: dict[str, list[tuple[str, int]]] = defaultdict(list)
    also: dict[str, list[tuple[str, int]]] = defaultdict(list)
    untaught: list[tuple[str, str, int]] = []
    for cat in CATEGORIES:
        for api, n in counts[cat.key].items():
            nums = chapters_for(api)
            if not nums:
                untaught.append((cat.key, api, n))
                continue
            main[nums[0]].append((api, n))
            for num in nums[1:]:
                also[num].append((api, n))

    def cell(apis: list[tuple[str, int]]) -> str:
        ordered = sorted(apis, key=lambda an: (-an[1], an[0]))
        return ", ".join(f"{_md_code(a)} ({n})" for a, n in ordered) if ordered else "—"

    for num, _slug, _title in CHAPTERS:
        main_cell = cell(main.get(num, []))
        if num == "14" and not main.get(num):
            main_cell = "— (this chapter combines chapters 01–13 along one slime task)"
        out.append(f"| {links.chapter(num)} | {main_cell} | {cell(also.get(num, []))} "
                   f"| {sum(n for _, n in main.get(num, []))} |")
    out += ["", "## By category", ""]
    for cat in CATEGORIES:
        apis = sorted(counts[cat.key].items(), key=lambda an: (-an[1], an[0]))
        out += [f"### {cat.title}", "",
                f"{{ref}}`All locations <inventory-{cat.key.replace('_', '-')}>` · {cat.original}", ""]
        if not apis:
            out += ["No occurrence at this commit.", ""]
            continue
        out += ["| API | occurrences | chapters |", "|---|---:|---|"]
        out += [f"| {_md_code(a)} | {n} | {links.chapters(a, short=False)} |" for a, n in apis]
        out.append("")
    out += ["## Used by slime, taught by no chapter", ""]
    if untaught:
        out += ["These mechanisms appear in the inventory but no chapter teaches them (yet). They are "
                "listed so that nothing slime relies on is silently left out.", "",
                "| category | API | occurrences |", "|---|---|---:|"]
        order = [c.key for c in CATEGORIES]
        for key, api, n in sorted(untaught, key=lambda t: (order.index(t[0]), -t[2], t[1])):
            out.append(f"| {CATEGORY_BY_KEY[key].title} | {_md_code(api)} | {n} |")
    else:
        out.append("Every mechanism slime uses is taught by some chapter.")
    out += ["", f"The {METHODS_CATEGORY.title.lower()} ({inventory['candidates_total']} candidates) are not "
            "mapped: their receiver types are guesses. See {ref}`inventory-methods-to-verify`."]
    return "\n".join(out).rstrip("\n") + "\n"


PYTHON_DOCS = (
    ("asyncio", "https://docs.python.org/3/library/asyncio.html",
     "coroutines and tasks, waiting, timeouts and cancellation, synchronisation primitives, queues, "
     "streams, subprocesses, the event loop and futures (chapters 01–08, 10, 13–15, 20)"),
    ("threading", "https://docs.python.org/3/library/threading.html",
     "threads, `Lock`, `RLock`, `Event`, `Condition`, `Semaphore`, `Timer` (chapters 09, 16)"),
    ("multiprocessing", "https://docs.python.org/3/library/multiprocessing.html",
     "start methods, `Process`, `Pool`, queues and pipes between processes (chapters 12, 18)"),
    ("concurrent.futures", "https://docs.python.org/3/library/concurrent.futures.html",
     "`ThreadPoolExecutor`, `ProcessPoolExecutor`, `Future`, `as_completed`, `shutdown` (chapters 08, 17)"),
    ("contextvars", "https://docs.python.org/3/library/contextvars.html",
     "`ContextVar`, tokens and how each task gets a copy of the context (chapter 11)"),
    ("subprocess", "https://docs.python.org/3/library/subprocess.html",
     "`run`, `Popen`, pipes, timeouts and sessions (chapters 12, 18, 19)"),
    ("signal", "https://docs.python.org/3/library/signal.html",
     "handlers, which thread runs them, default dispositions (chapter 19)"),
)
SUPPORTING_DOCS = (
    ("queue", "https://docs.python.org/3/library/queue.html"),
    ("contextlib", "https://docs.python.org/3/library/contextlib.html"),
    ("inspect", "https://docs.python.org/3/library/inspect.html"),
    ("os (process management)", "https://docs.python.org/3/library/os.html#process-management"),
    ("fcntl", "https://docs.python.org/3/library/fcntl.html"),
    ("ast", "https://docs.python.org/3/library/ast.html"),
    ("Developing with asyncio", "https://docs.python.org/3/library/asyncio-dev.html"),
)
PEPS = (
    ("492", "Coroutines with async and await syntax",
     "introduced `async def`, `await`, `async with`, `async for` and the awaitable protocol"),
    ("525", "Asynchronous Generators",
     "lets an `async def` contain `yield`, and adds `aclose` and the finalisation hooks"),
    ("530", "Asynchronous Comprehensions", "allows `async for` and `await` inside comprehensions"),
    ("567", "Context Variables", "the `contextvars` module and the per-task context copy"),
    ("654", "Exception Groups and except*",
     "how `TaskGroup` reports several failures at once (Python 3.11)"),
    ("3156", "Asynchronous IO Support Rebooted: the \"asyncio\" Module",
     "the design of the event loop, transports, futures and tasks"),
)


def render_versions(inventory: dict, links: _Links) -> str:
    src = inventory["source"]
    commit = src.get("commit") or "(not pinned)"
    out = _header(inventory, "Versions and references", "reference-versions")
    out += [
        "The course keeps three things apart: what a small experiment in Python shows, what slime's "
        "source at one fixed commit does, and what the documents below say.",
        "",
        "## Python",
        "",
        "The notebooks run on **Python 3.11, 3.12 and 3.13**. 3.11 is the floor because the course uses "
        "`asyncio.TaskGroup`, `asyncio.timeout` and `Task.uncancel`, which first appear there; a few "
        "experiments show newer behaviour and check the version before running it (for example "
        "`asyncio.Queue.shutdown`, added in 3.13). The source inventory parses files with the "
        f"standard library `ast` of the interpreter that ran the scan (this one: {inventory['parser']}).",
        "",
        "## The slime pin",
        "",
        f"Every slime location in the book refers to {_source_line(inventory)}, full commit "
        f"`{commit}`. Chapters read slime's source at that commit at run time when a copy is available "
        "(environment variable `SLIME_SRC` pointing at a clone or bare mirror); without one they still "
        "show the location and a permalink.",
        "",
        "To move the course to another slime commit:",
        "",
        "1. Relocate the recorded call sites and check that each still matches: "
        "`python -m lab_snippets.sites relocate --to COMMIT`.",
        "2. Regenerate the inventory from the new pin and re-render these pages: "
        "`SLIME_SRC=/path/to/slime python -m lab_snippets.inventory regenerate`.",
        "3. Run the tests (`pytest`), which fail while any generated page is out of step with "
        "the committed inventory.",
        "",
        "## Documents the course relies on",
        "",
        "### Python documentation",
        "",
    ]
    for name, url, why in PYTHON_DOCS:
        out.append(f"- [`{name}`]({url}): {why}.")
    out += ["", "Also used for single topics: "
            + ", ".join(f"[{name}]({url})" for name, url in SUPPORTING_DOCS) + ".", "",
            "### Python Enhancement Proposals", ""]
    for num, title, why in PEPS:
        out.append(f"- [PEP {num} – {title}](https://peps.python.org/pep-{int(num):04d}/): {why}.")
    out += ["", "### slime", "",
            f"- [THUDM/slime]({SLIME_REPO_URL}): the framework the course reads; the "
            "{ref}`reference-inventory` and the {ref}`reference-chapter-map` are generated from it."]
    return "\n".join(out).rstrip("\n") + "\n"


def render_pages(inventory: dict, notebooks_dir: Path | None) -> dict[str, str]:
    """All generated pages as ``{file name: text}``; deterministic for a given JSON and notebook set."""
    links = _Links(inventory, notebooks_dir)
    return {
        "inventory.md": render_inventory(inventory, links),
        "chapter_map.md": render_chapter_map(inventory, links),
        "versions.md": render_versions(inventory, links),
    }


def default_notebooks_dir(out: Path) -> Path:
    """The directory the pages' ``../../notebooks`` links point to."""
    return (out / ".." / ".." / "notebooks").resolve()


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def pinned_commit() -> str:
    sites = PACKAGE_DIR / "sites.toml"
    if sites.is_file():
        try:
            meta = tomllib.loads(sites.read_text(encoding="utf-8")).get("meta", {})
        except tomllib.TOMLDecodeError as exc:
            raise InventoryError(f"{sites}: {exc}") from exc
        if isinstance(meta.get("commit"), str) and meta["commit"]:
            return meta["commit"]
    return PINNED_COMMIT


def slime_src() -> Path:
    value = os.environ.get("SLIME_SRC")
    if not value:
        raise InventoryError("no PATH given and SLIME_SRC is not set: point SLIME_SRC at a clone or bare "
                             "mirror of THUDM/slime, or pass a PATH")
    path = Path(value).expanduser()
    if not path.is_dir():
        raise InventoryError(f"SLIME_SRC={value} is not a directory")
    return path


def write_pages(inventory: dict, out: Path, notebooks_dir: Path | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_pages(inventory, notebooks_dir or default_notebooks_dir(out)).items():
        target = out / name
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def _summary(inventory: dict) -> str:
    lines = [f"{inventory['files_scanned']} files scanned, {len(inventory['unparsable'])} unparsable"]
    for cat in CATEGORIES:
        lines.append(f"  {cat.title:32} {inventory['totals'][cat.key]:6}")
    lines.append(f"  {'(total)':32} {sum(inventory['totals'].values()):6}")
    lines.append(f"  {METHODS_CATEGORY.title + ' (apart)':32} {inventory['candidates_total']:6}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.inventory",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_scan = sub.add_parser("scan", help="scan a tree and write the inventory JSON")
    p_scan.add_argument("path", nargs="?", type=Path,
                        help="directory or git repository (default: $SLIME_SRC)")
    p_scan.add_argument("--commit", help="read the tree at this commit through git (no checkout)")
    p_scan.add_argument("--json", required=True, type=Path, help="output JSON file ('-' for stdout)")
    p_scan.add_argument("--repo-url", default=SLIME_REPO_URL,
                        help="base URL for location links (default: %(default)s; '' for no links)")
    p_render = sub.add_parser("render", help="render the Markdown pages from an inventory JSON")
    p_render.add_argument("json", type=Path)
    p_render.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p_render.add_argument("--notebooks", type=Path, default=None,
                          help="where chapter notebooks live (default: OUT/../../notebooks)")
    p_regen = sub.add_parser("regenerate", help="scan $SLIME_SRC at the pinned commit, then render")
    p_regen.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p_regen.add_argument("--commit", default=None, help="override the pin (default: sites.toml or built-in)")
    args = parser.parse_args(argv)
    try:
        if args.command == "scan":
            path = args.path if args.path is not None else slime_src()
            inventory = scan_tree(path, args.commit, repo_url=args.repo_url or None,
                                  label="THUDM/slime" if args.path is None else None)
            text = dump_json(inventory)
            if str(args.json) == "-":
                sys.stdout.write(text)
            else:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(text, encoding="utf-8")
                print(_summary(inventory), file=sys.stderr)
        elif args.command == "render":
            inventory = load_json(args.json)
            for target in write_pages(inventory, args.out, args.notebooks):
                print(f"wrote {target}", file=sys.stderr)
        else:
            commit = args.commit or pinned_commit()
            inventory = scan_tree(slime_src(), commit, repo_url=SLIME_REPO_URL, label="THUDM/slime")
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / JSON_NAME).write_text(dump_json(inventory), encoding="utf-8")
            print(_summary(inventory), file=sys.stderr)
            for target in write_pages(inventory, args.out):
                print(f"wrote {target}", file=sys.stderr)
    except InventoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
