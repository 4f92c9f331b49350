"""Ray's call forms that no import names, for the scanner: ``handle.method.remote(...)`` and the
options given to ``.options(...)`` or ``ray.remote(...)`` (``max_concurrency=``, ``num_gpus=``, ...).

Only files that import ``ray`` are asked (``imports_ray``): elsewhere a ``.remote`` attribute
is nobody's Ray call.
"""

from __future__ import annotations

import ast

from lab_snippets.inventory.rules import RAY_OPTIONS, RAY_REMOTE_CALL, ray_option_api


def imports_ray(node: ast.AST) -> bool:
    """Whether ``node`` is an ``import ray...`` or a ``from ray... import ...``."""
    if type(node) is ast.Import:
        return any(a.name == "ray" or a.name.startswith("ray.") for a in node.names)
    return type(node) is ast.ImportFrom and node.level == 0 and (
        node.module == "ray" or (node.module or "").startswith("ray."))


class RayCalls(list):
    """(node, api) pairs to record; ``own_form`` when the call is ``x.remote(...)`` or
    ``x.options(...)`` itself, which the scanner then does not list as an unknown method."""

    own_form = False


def ray_calls(node: ast.Call, named: str | None, in_ray_file: bool = True) -> RayCalls:
    """What a call in a Ray file adds: ``.remote()`` for ``x.remote(...)``, one
    ``.options(<keyword>=)`` per Ray option keyword of ``x.options(...)`` or ``ray.remote(...)``.
    ``named`` is the dotted name the call's function resolves to (None when it is not an import);
    a file that does not import ray (``in_ray_file`` false) adds nothing."""
    func = node.func
    found = RayCalls()
    if not in_ray_file:
        return found
    unnamed_attr = type(func) is ast.Attribute and named is None
    if unnamed_attr and func.attr == "remote":
        found.append((node, RAY_REMOTE_CALL))
        found.own_form = True
    elif (unnamed_attr and func.attr == "options") or named == "ray.remote":
        found.extend((kw.value, ray_option_api(kw.arg)) for kw in node.keywords if kw.arg in RAY_OPTIONS)
        found.own_form = unnamed_attr
    return found
