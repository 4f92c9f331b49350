"""The grading guard: trusted code that runs in the student's kernel and undoes tampering before tests.

The worker sends this file's source to the kernel before the first cell (the sandbox mounts
no grader code, so the kernel cannot import it) and calls ``install(shell, nonce, slot)``.
That puts two functions in the user namespace under the random name ``slot``:

* ``record(names)``, called after each trusted (instructor) cell, remembers the helpers it
  defined (functions, classes, modules) and snapshots the watched modules again;
* ``check()``, called before every test cell, restores whatever a submission changed (the
  watched modules' functions, the shell's and kernel's methods, IPython's transformers,
  custom exception handler and event callbacks, ``sys`` hooks, recorded helpers) and prints
  ``LAB-GUARD <nonce> <json list of what it restored>``.

Standard library only, and no name it needs is looked up after ``install``: the builtins it
uses are bound when this module runs, before any student code.
"""

from __future__ import annotations

import json
import sys
import types

_print, _setattr, _delattr, _isinstance, _list, _vars, _type, _dumps, _callable, _getattr = (
    print, setattr, delattr, isinstance, list, vars, type, json.dumps, callable, getattr)

CODE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, property,
              classmethod, staticmethod, types.MethodDescriptorType, types.WrapperDescriptorType)
WATCHED = ("builtins", "asyncio", "time", "threading", "functools", "contextvars",
           "concurrent.futures", "inspect", "traceback", "math", "operator", "json", "sys",
           "IPython.core.interactiveshell", "ipykernel.zmqshell", "ipykernel.ipkernel")
WATCHED_PREFIXES = ("asyncio.", "concurrent.futures.")
HOOK_LISTS = ("input_transformers_cleanup", "input_transformers_post", "ast_transformers")
# swapped by ipykernel itself around each cell: not evidence of tampering
SKIP = frozenset({"input", "raw_input", "getpass", "excepthook"})
SYS_HOOKS = ("stdout", "stderr", "displayhook")  # (sys.excepthook is swapped by ipykernel)


def code_of(namespace) -> dict:
    """The callables (and descriptors) of a namespace, by name."""
    return {k: v for k, v in _list(namespace.items()) if _isinstance(v, CODE_TYPES) and k not in SKIP}


class Guard:
    """Snapshots taken before student code runs, and the restoring ``check``."""

    def __init__(self, shell, nonce: str) -> None:
        self.ip, self.nonce = shell, nonce
        self.modules: dict = {}   # name -> (module, {attr: callable})
        self.classes: list = []   # (class, {attr: callable})
        self.hooks: dict = {}
        self.events: dict = {}
        self.user: dict = {}      # helpers instructor cells defined
        self.snap_modules()
        self.snap_hooks()
        kernel = _getattr(shell, "kernel", None)
        self.objects = [o for o in (shell, kernel, _getattr(kernel, "session", None),
                                    _getattr(shell, "displayhook", None),
                                    _getattr(shell, "display_pub", None)) if o is not None]
        for o in self.objects:
            for c in _type(o).__mro__:
                if c is not object and c not in [x for x, _ in self.classes]:
                    self.classes.append((c, code_of(_vars(c))))
        result = sys.modules["IPython.core.interactiveshell"].ExecutionResult
        self.classes.append((result, code_of(_vars(result))))
        self.instances = [(o, {k: v for k, v in _vars(o).items() if _callable(v)})
                          for o in self.objects]
        self.sys_hooks = {a: _getattr(sys, a) for a in SYS_HOOKS}
        self.trace = (sys.gettrace(), sys.getprofile())

    # ----- snapshots

    def snap_modules(self) -> None:
        for n, m in _list(sys.modules.items()):
            if m is not None and n not in self.modules and (
                    n in WATCHED or n.startswith(WATCHED_PREFIXES)):
                self.modules[n] = (m, code_of(_vars(m)))

    def snap_hooks(self) -> None:
        self.hooks = {a: _list(_getattr(self.ip, a)) for a in HOOK_LISTS}
        self.events = {k: _list(v) for k, v in self.ip.events.callbacks.items()}

    def record(self, names, clean: bool = False) -> None:
        """After a trusted cell: remember the helpers it defined; data may legitimately change.
        A helper the cell rebound to data (``for lane, start, letter in ...`` after a
        ``def start``) keeps being watched, with the cell's value as the trusted one.

        ``clean``: the worker knows no submission cell ran since the guard last stood where its
        snapshots are (installed, or a ``check`` restored them), so whatever changed in a watched
        module was done by trusted cells, and becomes the trusted value. ``import ray`` does that:
        its Cython core replaces ``inspect.isgenerator`` by a wrapper that also knows Cython's
        generators (Cython's ``__Pyx_patch_inspect``)."""
        if clean:
            for n, (m, _snap) in _list(self.modules.items()):
                self.modules[n] = (m, code_of(_vars(m)))
        for n in names:
            v = self.ip.user_ns.get(n, self)
            if _callable(v) or _isinstance(v, types.ModuleType) or (n in self.user and v is not self):
                self.user[n] = v
        self.snap_modules()
        self.snap_hooks()

    # ----- restoring

    def restore_sys(self, fixed: list) -> None:
        for a, v in self.sys_hooks.items():
            if _getattr(sys, a) is not v:
                _setattr(sys, a, v)
                fixed.append("sys." + a)
        if (sys.gettrace(), sys.getprofile()) != self.trace:
            sys.settrace(self.trace[0])
            sys.setprofile(self.trace[1])
            fixed.append("sys.settrace/setprofile")

    def restore_modules(self, fixed: list) -> None:
        for n, (m, snap) in _list(self.modules.items()):
            if sys.modules.get(n) is not m:
                sys.modules[n] = m
                fixed.append("sys.modules[" + n + "]")
            d = _vars(m)
            for k, v in snap.items():
                if d.get(k) is not v:
                    _setattr(m, k, v)
                    fixed.append(n + "." + k)

    def restore_classes(self, fixed: list) -> None:
        for c, snap in self.classes:
            d = _vars(c)
            for k, v in snap.items():
                if d.get(k) is not v:
                    _setattr(c, k, v)
                    fixed.append(c.__name__ + "." + k)
            for k in _list(d):
                if k not in snap and k not in SKIP and _isinstance(d[k], types.FunctionType):
                    _delattr(c, k)
                    fixed.append(c.__name__ + "." + k + " (added)")

    def restore_instances(self, fixed: list) -> None:
        for o, snap in self.instances:
            d = _vars(o)
            for k, v in snap.items():
                if d.get(k) is not v:
                    d[k] = v
                    fixed.append(_type(o).__name__ + " instance ." + k)
            for k in _list(d):
                if k not in snap and k not in SKIP and _callable(d[k]) and _isinstance(
                        _getattr(_type(o), k, None), (types.FunctionType, property)):
                    _delattr(o, k)
                    fixed.append(_type(o).__name__ + " instance ." + k)

    def restore_shell(self, fixed: list) -> None:
        ip = self.ip
        for a, v in self.hooks.items():
            if _getattr(ip, a) != v:
                _getattr(ip, a)[:] = v
                fixed.append("shell." + a)
        if ip.custom_exceptions:
            ip.set_custom_exc((), None)
            fixed.append("shell.set_custom_exc")
        for k in _list(ip.events.callbacks):
            if ip.events.callbacks[k] != self.events.get(k, []):
                ip.events.callbacks[k] = _list(self.events.get(k, []))
                fixed.append("shell.events." + k)

    def restore_user(self, fixed: list) -> None:
        ns = self.ip.user_ns
        for k, v in self.user.items():
            if ns.get(k, self.user) is not v:
                ns[k] = v
                fixed.append(k)
        for n in ("asyncio", "time"):
            if n in ns and n in self.modules and ns[n] is not self.modules[n][0]:
                ns[n] = self.modules[n][0]
                fixed.append(n)

    def restore(self) -> list[str]:
        """Undo every change the guard watches; return what was restored (sorted, unique)."""
        fixed: list[str] = []
        self.restore_sys(fixed)
        self.restore_modules(fixed)
        self.restore_classes(fixed)
        self.restore_shell(fixed)  # before the instances: set_custom_exc replaces shell.CustomTB
        self.restore_instances(fixed)
        self.restore_user(fixed)
        return sorted(set(fixed))

    def check(self) -> None:
        """Restore, then report to the worker (one line on stdout, proven by the nonce)."""
        _print("LAB-GUARD", self.nonce, _dumps(self.restore()))


def install(shell, nonce: str, slot: str) -> Guard:
    """Take the snapshots now and publish ``(record, check)`` as ``shell.user_ns[slot]``."""
    guard = Guard(shell, nonce)
    shell.user_ns[slot] = (guard.record, guard.check)
    return guard


def injection(nonce: str, slot: str) -> str:
    """The cell the worker runs in the kernel: this module's source, run in a private namespace."""
    with open(__file__, encoding="utf-8") as fh:
        source = fh.read()
    return (f"_lab_guard_ns = {{'__name__': '_lab_guard'}}\n"
            f"exec(compile({source!r}, '<lab-guard>', 'exec'), _lab_guard_ns)\n"
            f"_lab_guard_ns['install'](get_ipython(), {nonce!r}, {slot!r})\n"
            "del _lab_guard_ns\n")
