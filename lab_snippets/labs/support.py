"""What a corpus verdict depends on besides its chapter's graded cells and the submission.

A recorded verdict (``labs.corpus``) is current while what produced it is unchanged. The chapter's
grading plan and the entry's source are one part (``corpus.chapter_digest_of``); this module gives
the other: the course's own modules that grading runs, and the pinned packages.

- **The modules**: every ``lab_snippets`` module the graded cells import, every module the grader
  itself runs (``GRADER``: the ``lab_snippets.labs`` package, whole, since its ``__init__`` imports
  its members by name at run time, except ``NOT_GRADING``: the release and its command line, which
  make student versions and never run in a grade, and ``RAY_ONLY``: the cluster's path, which a
  corpus verdict, graded on this machine, never takes), and, transitively, every ``lab_snippets``
  module those import (absolute or relative imports, at any depth of a module, inside functions too), with the
  ``__init__`` of each package on the way. Found by reading the sources (``ast``), not by importing.
- **The pins**: ``requirements.txt``, as text.

Not covered, on purpose: the interpreter (verdicts are recorded per Python), the chapter's prose
and the cells the grade does not run (they do not change a grade). Not covered, knowingly: a
module named only in a string at run time outside ``lab_snippets.labs`` (there is none today:
``tests/test_corpus_support.py`` checks it).
"""

from __future__ import annotations

import ast
import hashlib
import re
from functools import lru_cache
from pathlib import Path

from lab_snippets import REPO_ROOT as REPO
from lab_snippets.labs.common import parse_python

PACKAGE = "lab_snippets"
GRADER = ("lab_snippets.labs",)  # the whole subpackage (see the module's docstring)
#: Modules of ``GRADER`` that a grade never imports: ``labs release`` (and its Chinese step, which
#: reads the zh tooling) and the command line. ``tests/test_corpus_support.py`` checks that no
#: grading module reaches them.
NOT_GRADING = ("publish", "cli", "__main__")
#: Modules only ``labs grade --ray`` runs (the grader imports them in its ``if ray:`` branch). A
#: corpus verdict is graded on this machine's pool, never on a cluster, so they do not make one;
#: ``tests/test_labs_ray.py`` checks that a cluster's grades equal the pool's, and
#: ``tests/test_corpus_support.py`` that nothing else imports them.
RAY_ONLY = ("raygrade",)
PINS = REPO / "requirements.txt"
_NAMED = re.compile(r"\blab_snippets(?:\.\w+)*")


def module_file(name: str, repo: Path = REPO) -> Path | None:
    """The file of module ``name`` under ``repo`` (a package's ``__init__.py``), or None."""
    base = repo.joinpath(*name.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def imported(code: str, package: str | None = None) -> set[str]:
    """The ``lab_snippets`` module names ``code`` imports (``package``: the one a relative import
    is relative to). Code that does not parse (a cell with a magic) is read for dotted names."""
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(_NAMED.findall(code))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and package:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # kept only if it is a module
    return {n for n in found if n == PACKAGE or n.startswith(PACKAGE + ".")}


def _with_parents(names: set[str]) -> set[str]:
    out = set()
    for n in names:
        parts = n.split(".")
        out |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return out


def closure(roots: set[str], repo: Path = REPO) -> dict[str, Path]:
    """Every module file reached from ``roots`` by imports, with the packages on the way."""
    todo = set(_with_parents(roots))
    for root in roots & set(GRADER):
        todo |= {f"{root}.{p.stem}" for p in module_file(root, repo).parent.glob("*.py")
                 if p.name != "__init__.py" and p.stem not in NOT_GRADING + RAY_ONLY}
    ray_only = {f"{g}.{m}" for g in GRADER for m in RAY_ONLY}
    seen: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        if name in seen or name in ray_only:
            continue
        path = module_file(name, repo)
        if path is None:
            continue
        seen[name] = path
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        todo |= _with_parents(_module_imports(path, path.stat().st_mtime_ns, package)) - set(seen)
    return seen


@lru_cache(maxsize=512)
def _module_imports(path: Path, mtime_ns: int, package: str) -> frozenset[str]:
    return frozenset(imported(path.read_text(encoding="utf-8"), package))


@lru_cache(maxsize=512)
def _file_digest(path: Path, mtime_ns: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def support_digest(codes: tuple[str, ...] | list[str], repo: Path = REPO) -> str:
    """The digest of the modules grading ``codes`` (the graded cells) runs, and of the pins."""
    roots = set(GRADER).union(*(imported(c) for c in codes))
    h = hashlib.sha256()
    pins = repo / "requirements.txt"
    h.update(pins.read_bytes() if pins.is_file() else b"")
    for name, path in sorted(closure(roots, repo).items()):
        h.update(f"\0{name}\0".encode())
        h.update(_file_digest(path, path.stat().st_mtime_ns).encode())
    return h.hexdigest()[:16]
