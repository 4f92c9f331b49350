"""Stand-ins for the Part V services' differential tests (issue 37; chapters 23 and 24).

``lab_snippets.scenarios`` runs asyncio code on virtual time. Some of Part V's exercises are
not asyncio code, or reach a stand-in only through a global name: chapter 23's watchdog is a
thread function that reads ``time.monotonic()`` and waits on a ``threading.Event``; chapter 24's
``score_all`` calls the chapter's ``score`` by name. ``rebind`` gives such a function the
stand-ins without touching the notebook's own names: a copy of the function whose globals are a
copy of its module's, with some names (or some objects, wherever they are bound) replaced. The
functions defined beside it are copied with it, so a helper the student wrote sees the same
stand-ins. The student's code and the reference are rebound the same way.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable

__all__ = ["rebind"]


def _copy(fn: types.FunctionType, namespace: dict) -> types.FunctionType:
    copy = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__dict__.update(fn.__dict__)
    return copy


def rebind(fn: Callable, names: dict[str, typing.Any] | None = None,
           objects: typing.Iterable[tuple[typing.Any, typing.Any]] = ()) -> Callable:
    """A copy of the function ``fn`` whose global ``names`` are replaced (``{"score": stand_in}``),
    and whose globals bound to one of ``objects``' originals (compared by identity: a module, or a
    function imported under any name, such as ``time.monotonic`` as ``monotonic``) are bound to its
    stand-in. Every other function defined in the same namespace is copied too, so the copies call
    each other. ``fn``'s own namespace is left as it was."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"rebind needs a plain function, not {type(fn).__name__}")
    old = fn.__globals__
    pairs = list(objects)
    new = dict(old)
    for key, value in old.items():
        for original, stand_in in pairs:
            if value is original:
                new[key] = stand_in
                break
    new.update(names or {})
    for key, value in old.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is old and key not in (names or {}):
            new[key] = _copy(value, new)
    return _copy(fn, new)
