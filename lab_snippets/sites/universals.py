"""Universal statements about slime, checked by a search over the pinned tree.

A sentence that says something about *all* of slime ("every request goes through", "only",
"never", "no other", "always", "all") cannot be confirmed by reading one site: the place
that makes it false is somewhere else. ``lab_snippets/sites/universals.toml`` therefore
holds one ``[[statement]]`` for every sentence of a call-site explanation or of a chapter's
"In slime" section that uses one of those words. Each statement has either

- a **check**: a Python regular expression, the path prefixes to search, and the exact set
  of places (``path`` or ``path::symbol``) where it matches at the pinned commit; the check
  fails when slime has another place, or when an expected place no longer matches; or
- a **reason** it needs none (the word is about the quoted lines, or about Python, not a
  statement about slime as a whole).

``python -m lab_snippets.sites check`` runs the checks when ``SLIME_SRC`` points at a slime
clone (they search the whole tree, which the per-user cache of pinned files does not hold);
``tests/test_universals.py`` fails when a sentence with a universal word has no statement.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from lab_snippets import PACKAGE_DIR, REPO_ROOT
from lab_snippets.sites.gitcmd import run_git
from lab_snippets.sites.registry import Registry, enclosing_symbol

DEFAULT_STATEMENTS = PACKAGE_DIR / "sites" / "universals.toml"
NOTEBOOKS = REPO_ROOT / "notebooks"
#: The words that make a sentence a statement about all of slime (whole words, any case).
UNIVERSAL_WORDS = re.compile(r"\b(every|all|never|only|no other|always)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\[_])")
_WHERE = re.compile(r"^(site \d{2}[a-z]?|chapter \d{2})$")


class UniversalsError(ValueError):
    """The statements file is missing, unreadable, or has a malformed entry."""


@dataclass(frozen=True)
class Statement:
    where: str
    sentence: str
    pattern: str | None = None
    paths: tuple[str, ...] = ()
    expect: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def label(self) -> str:
        short = self.sentence if len(self.sentence) <= 70 else self.sentence[:67] + "..."
        return f"{self.where}: {short!r}"


def load_statements(path: str | Path | None = None) -> list[Statement]:
    path = Path(path or DEFAULT_STATEMENTS)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UniversalsError(f"{path}: cannot read the statements: {exc}") from None
    statements, errors = [], []
    for index, entry in enumerate(data.get("statement", [])):
        try:
            statements.append(_statement(entry))
        except UniversalsError as exc:
            errors.append(f"statement #{index + 1}: {exc}")
    if errors:
        raise UniversalsError(f"{path}:\n" + "\n".join(errors))
    return statements


def _statement(entry: dict) -> Statement:
    known = {"where", "sentence", "pattern", "paths", "expect", "reason"}
    if unknown := set(entry) - known:
        raise UniversalsError(f"unknown field(s) {sorted(unknown)}")
    where, sentence = entry.get("where", ""), entry.get("sentence", "")
    if not _WHERE.match(where):
        raise UniversalsError(f"'where' must look like 'site 02', 'site 02b' or 'chapter 02', got {where!r}")
    if not sentence.strip():
        raise UniversalsError("'sentence' (a fragment of the sentence it carries) is empty")
    has_check = "pattern" in entry
    if has_check == ("reason" in entry):
        raise UniversalsError(
            f"{where}: give either a check (pattern, paths, expect) or a reason, not both or none")
    if not has_check:
        if not entry["reason"].strip():
            raise UniversalsError(f"{where}: the reason is empty")
        return Statement(where, sentence, reason=entry["reason"])
    if not entry.get("paths") or "expect" not in entry:
        raise UniversalsError(
            f"{where}: a check needs 'paths' (where to search) and 'expect' (where it may match)")
    try:
        re.compile(entry["pattern"])
    except re.error as exc:
        raise UniversalsError(f"{where}: bad pattern {entry['pattern']!r}: {exc}") from None
    return Statement(where, sentence, entry["pattern"], tuple(entry["paths"]), tuple(entry["expect"]))


# --------------------------------------------------------------------------- the prose


def sentences(text: str) -> list[str]:
    """``text`` split into sentences, whitespace collapsed."""
    flat = " ".join(text.split())
    return [s for s in _SENTENCE_END.split(flat) if s]


def in_slime_text(chapter_path: Path) -> str:
    """The markdown of a chapter's "In slime" section (from its heading to the end of the chapter)."""
    import jupytext

    notebook = jupytext.read(chapter_path)
    parts: list[str] = []
    inside = False
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        source = cell.source
        if not inside and "## In slime" in source:
            inside, source = True, source[source.index("## In slime") + len("## In slime"):]
        if inside:
            parts.append(source)
    return "\n\n".join(parts)


def chapter_text(chapter_path: Path) -> str:
    """The markdown of a whole chapter (every markdown cell, in order)."""
    import jupytext

    return "\n\n".join(c.source for c in jupytext.read(chapter_path).cells if c.cell_type == "markdown")


def prose(registry: Registry, notebooks: Path = NOTEBOOKS, *,
          whole_chapters: bool = False) -> Iterator[tuple[str, str]]:
    """Every ``(where, sentence)`` of the call-site explanations and the chapters' In slime sections.

    Every such sentence with a universal word needs a statement. A statement may also carry a
    sentence about slime elsewhere in a chapter (the teacher server's Ray reads in chapter 28's
    experiments, say); ``whole_chapters=True`` yields those too, so such a statement is not stale.
    """
    for site in registry.sites:
        for sentence in sentences(site.explanation):
            yield f"site {site.id}", sentence
    for path in sorted(notebooks.glob("[0-9][0-9]_*.py")):
        text = chapter_text(path) if whole_chapters else in_slime_text(path)
        for sentence in sentences(text):
            yield f"chapter {path.name[:2]}", sentence


def universal_sentences(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(where, s) for where, s in pairs if UNIVERSAL_WORDS.search(s)]


def _carries(statement: Statement, where: str, sentence: str) -> bool:
    return statement.where == where and " ".join(statement.sentence.split()) in sentence


def unaccounted(statements: Sequence[Statement], pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Sentences with a universal word that no statement carries."""
    return [(w, s) for w, s in universal_sentences(pairs) if not any(_carries(st, w, s) for st in statements)]


def stale(statements: Sequence[Statement], pairs: Iterable[tuple[str, str]]) -> list[Statement]:
    """Statements whose sentence is no longer in the prose (edited or removed)."""
    pairs = list(pairs)
    return [st for st in statements if not any(_carries(st, w, s) for w, s in pairs)]


# --------------------------------------------------------------------------- the tree


class Tree:
    """The Python files of slime at one commit: a git clone (work tree or bare) or a plain tree."""

    def __init__(self, root: str | Path, commit: str) -> None:
        self.root, self.commit = Path(root), commit
        self.bare = (self.root / "HEAD").is_file() and (self.root / "objects").is_dir()
        self.git = self.bare or (self.root / ".git").exists()
        self._cache: dict[str, str] = {}

    def _git(self, args: list[str], input: bytes | None = None) -> bytes:
        proc = run_git(args, repo=self.root, bare=self.bare, input=input)
        if proc.returncode != 0:
            raise UniversalsError(f"git {' '.join(args[:2])} failed in {self.root}: "
                                  f"{proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout

    def files(self, prefixes: Sequence[str]) -> list[str]:
        if self.git:
            listing = self._git(["ls-tree", "-r", "--name-only", self.commit]).decode().splitlines()
        else:
            listing = [str(p.relative_to(self.root)) for p in self.root.rglob("*.py")
                       if ".git" not in p.parts]
        return sorted(f for f in listing if f.endswith(".py") and any(f.startswith(p) for p in prefixes))

    def read_all(self, paths: Sequence[str]) -> dict[str, str]:
        missing = [p for p in paths if p not in self._cache]
        if missing and self.git:
            request = "".join(f"{self.commit}:{p}\n" for p in missing).encode()
            out = self._git(["cat-file", "--batch"], input=request)
            for path in missing:
                header, _, out = out.partition(b"\n")
                size = int(header.split()[2])
                self._cache[path] = out[:size].decode("utf-8", errors="replace")
                out = out[size + 1:]
        for path in missing:
            if not self.git:
                self._cache[path] = (self.root / path).read_text(encoding="utf-8", errors="replace")
        return {p: self._cache[p] for p in paths}


def places(statement: Statement, tree: Tree) -> set[str]:
    """Where the statement's pattern matches: ``path``, or ``path::symbol`` when ``expect`` names symbols."""
    pattern = re.compile(statement.pattern or "")
    by_symbol = any("::" in e for e in statement.expect)
    found: set[str] = set()
    for path, text in tree.read_all(tree.files(statement.paths)).items():
        for number, line in enumerate(text.splitlines(), start=1):
            if pattern.search(line):
                if not by_symbol:
                    found.add(path)
                    break
                try:
                    found.add(f"{path}::{enclosing_symbol(text, number)}")
                except SyntaxError:
                    found.add(f"{path}::<unparsed>")
    return found


def check(statement: Statement, tree: Tree) -> list[str]:
    """Problems with one checked statement at the tree's commit (empty when it holds)."""
    found, expected = places(statement, tree), set(statement.expect)
    problems = []
    if extra := sorted(found - expected):
        problems.append(f"/{statement.pattern}/ also matches {', '.join(extra)}")
    if gone := sorted(expected - found):
        problems.append(f"/{statement.pattern}/ no longer matches {', '.join(gone)}")
    return problems


def report(statements: Sequence[Statement], tree: Tree | None, out: TextIO) -> int:
    """Run every check; print one line each; return the number that failed."""
    checks = [st for st in statements if st.pattern is not None]
    if tree is None:
        print(f"universal statements: {len(checks)} checks not run (they search the whole pinned tree; "
              "set SLIME_SRC to a slime clone)", file=out)
        return 0
    failed = 0
    for st in checks:
        problems = check(st, tree)
        failed += bool(problems)
        print(("FAIL " if problems else "ok   ") + f"universal {st.label}" +
              (": " + "; ".join(problems) if problems else ""), file=out)
    print(f"checked {len(checks)} universal statements "
          f"({len(statements) - len(checks)} more carry a reason): {len(checks) - failed} hold, "
          f"{failed} failed", file=out)
    return failed
