"""The real source of a worker, shown on the page where the prose discusses it (issue 41).

    from lab_snippets.showcode import show_source
    show_source(_cmd_chatter)                              # the whole function
    show_source(daemon_exit, first="atexit.register", last="record(\"main\"")   # only these lines

Code that a spawned process or a ``python -m`` child runs must live in an importable module, so the
reader would never see it; ``show_source`` displays the function as it is in that module (read by
``inspect`` at run time, so what the page shows is what the child runs), as a highlighted Python
block headed by the module's path, without its docstring (the prose says what it is for).
``first``/``last`` keep the lines from the first one holding
``first`` to the first one after it holding ``last``; a ``# ...`` line marks what was left out.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

__all__ = ["source_lines", "show_source"]


def _where(obj) -> str:
    # the file the source comes from: a decorated function's (``@contextmanager``), not its wrapper's
    path = Path(inspect.getsourcefile(inspect.unwrap(obj)) or "?")
    parts = path.parts
    return "/".join(parts[parts.index("lab_snippets"):]) if "lab_snippets" in parts else path.name


def _without_docstring(lines: list[str]) -> list[str]:
    """``lines`` (a function's dedented source) without its docstring: the prose beside the block
    says what the function is for, and a docstring is often wider than the page."""
    tree = ast.parse("\n".join(lines))
    node = tree.body[0] if tree.body else None
    body = getattr(node, "body", None)
    first = body[0] if body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return lines
    doc = body[0]
    return lines[: doc.lineno - 1] + lines[doc.end_lineno:]


def source_lines(obj, first: str | None = None, last: str | None = None) -> list[str]:
    """The lines of ``obj``'s source (dedented, its docstring left out), trimmed to
    ``first``..``last`` when given."""
    lines = _without_docstring(textwrap.dedent(inspect.getsource(obj)).rstrip("\n").split("\n"))
    start, end = 0, len(lines)
    if first is not None:
        start = next((i for i, line in enumerate(lines) if first in line), None)
        if start is None:
            raise ValueError(f"no line of {obj.__qualname__} holds {first!r}")
    if last is not None:
        stop = next((i for i in range(start, len(lines)) if last in lines[i]), None)
        if stop is None:
            raise ValueError(f"no line of {obj.__qualname__} after {first!r} holds {last!r}")
        end = stop + 1
    kept = textwrap.dedent("\n".join(lines[start:end])).split("\n")
    if start > 0:
        kept.insert(0, "# ...")
    if end < len(lines):
        kept.append("# ...")
    return kept


def show_source(obj, first: str | None = None, last: str | None = None):
    """Display ``obj``'s source as a Python block under its file's name (a Markdown fence: the book
    renders it as a code block, Jupyter highlights it; no text/latex, so no page loads MathJax)."""
    from IPython.display import Markdown, display

    body = "\n".join(source_lines(obj, first, last))
    fence = "````" if "```" in body else "```"
    shown = Markdown(f"`{_where(obj)}` · `{obj.__qualname__}`\n\n{fence}python\n{body}\n{fence}\n")
    display(shown)
    return None
