"""The call-site registry (``lab_snippets/sites.toml``): its schema, loading and checking, and the
helpers that locate a site in a source text (span hash, anchor line, enclosing symbol)."""

from __future__ import annotations

import ast
import difflib
import functools
import hashlib
import os
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from lab_snippets import PACKAGE_DIR

DEFAULT_REGISTRY = PACKAGE_DIR / "sites.toml"
DEFAULT_TIMEOUT = 3.0
MODULE_SYMBOL = "<module>"

FIELDS: dict[str, type] = {
    "id": str,
    "chapter": str,
    "title": str,
    "path": str,
    "start": int,
    "end": int,
    "symbol": str,
    "anchor": str,
    "sha256": str,
    "explanation": str,
}
_ID_RE = re.compile(r"^\d{2}[a-z]?$")
_CHAPTER_RE = re.compile(r"^\d{2}$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
_SYMBOL_RE = re.compile(r"^(<module>|[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)$")

HOW_TO_SEE = (
    "To see the quote: set SLIME_SRC to a slime clone (git clone https://github.com/THUDM/slime), "
    "or allow network access, or run `python -m lab_snippets.sites fetch` once while online."
)


# --------------------------------------------------------------------------- registry


class RegistryError(ValueError):
    """The registry file is missing, unreadable, or has a malformed entry."""


@dataclass(frozen=True)
class Site:
    id: str
    chapter: str
    title: str
    path: str
    start: int
    end: int
    symbol: str
    anchor: str
    sha256: str
    explanation: str

    @property
    def span(self) -> str:
        return f"{self.path}:{self.start}\u2013{self.end}"


@dataclass(frozen=True)
class Registry:
    repo: str
    commit: str
    sites: tuple[Site, ...]
    path: Path
    errors: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def short_commit(self) -> str:
        return self.commit[:7]

    def get(self, site_id: str) -> Site:
        for site in self.sites:
            if site.id == site_id:
                return site
        raise RegistryError(self._unknown_id_message(site_id))

    def chapter_sites(self, chapter: str) -> list[Site]:
        found = [s for s in self.sites if s.chapter == chapter]
        if not found:
            chapters = sorted({s.chapter for s in self.sites})
            raise RegistryError(
                f"{self.path}: no site for chapter {chapter!r}; chapters in the registry: "
                f"{', '.join(chapters) or '(none)'}"
            )
        return found

    def _unknown_id_message(self, site_id: str) -> str:
        known = [s.id for s in self.sites]
        bad = [e for e in self.errors if f'id "{site_id}"' in e]
        if bad:
            return "; ".join(bad)
        padded = str(site_id).zfill(2) if str(site_id)[:1].isdigit() else str(site_id)
        hint = [padded] if padded in known else difflib.get_close_matches(str(site_id), known, n=1)
        more = f" Did you mean {hint[0]!r}?" if hint else ""
        return f"{self.path}: unknown site id {site_id!r}.{more} Known ids: {', '.join(known) or '(none)'}."

    def permalink(self, site: Site) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{site.path}#L{site.start}-L{site.end}"

    def caption(self, site: Site) -> str:
        return f"{self.repo}@{self.short_commit} \u00b7 {site.span} \u00b7 {site.symbol}"


def _entry_name(index: int, entry: Any) -> str:
    sid = entry.get("id") if isinstance(entry, dict) else None
    return f'site #{index + 1} (id "{sid}")' if isinstance(sid, str) else f"site #{index + 1}"


def _validate_site(index: int, entry: Any) -> tuple[Site | None, list[str]]:
    name = _entry_name(index, entry)
    if not isinstance(entry, dict):
        return None, [f"{name}: must be a table ([[site]]), got {type(entry).__name__}"]
    errors: list[str] = []
    unknown = [k for k in entry if k not in FIELDS]
    for key, kind in FIELDS.items():
        if key not in entry:
            typo = difflib.get_close_matches(key, unknown, n=1, cutoff=0.6)
            hint = f" (found {typo[0]!r} -- a typo?)" if typo else ""
            errors.append(f"{name}: missing field {key!r}{hint}")
            continue
        value = entry[key]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            errors.append(f"{name}: field {key!r} must be an integer, got {value!r}")
        elif kind is str and not isinstance(value, str):
            errors.append(f"{name}: field {key!r} must be a string, got {value!r}")
        elif kind is str and not value.strip():
            errors.append(f"{name}: field {key!r} is empty")
    if errors:
        return None, errors
    sid, chapter, path = entry["id"], entry["chapter"], entry["path"]
    start, end = entry["start"], entry["end"]
    if not _ID_RE.match(sid):
        errors.append(f"{name}: field 'id' must look like '06' or '06b', got {sid!r}")
    if not _CHAPTER_RE.match(chapter):
        errors.append(f"{name}: field 'chapter' must be two digits like '06', got {chapter!r}")
    elif not sid.startswith(chapter):
        errors.append(f"{name}: field 'id' {sid!r} must start with its chapter {chapter!r}")
    pure = PurePosixPath(path)
    if "\\" in path or pure.is_absolute() or ".." in pure.parts or path != str(pure):
        errors.append(f"{name}: field 'path' must be a relative POSIX path inside slime, got {path!r}")
    if start < 1:
        errors.append(f"{name}: field 'start' must be >= 1 (lines are 1-based), got {start}")
    if end < start:
        errors.append(f"{name}: field 'end' ({end}) is before 'start' ({start}); the span is inclusive")
    if not _SHA256_RE.match(entry["sha256"]):
        errors.append(f"{name}: field 'sha256' must be 64 lowercase hex digits, got {entry['sha256']!r}")
    if "\n" in entry["anchor"]:
        errors.append(f"{name}: field 'anchor' must be a fragment of one line, not several lines")
    if not _SYMBOL_RE.match(entry["symbol"]):
        errors.append(
            f"{name}: field 'symbol' must be a dotted name like 'Class.method' or '<module>', "
            f"got {entry['symbol']!r}"
        )
    if errors:
        return None, errors
    return Site(**{k: entry[k] for k in FIELDS}), []


def load_registry(path: str | os.PathLike[str] | None = None, *, strict: bool = True) -> Registry:
    """Read and validate the registry. With ``strict`` any bad entry raises ``RegistryError``
    naming the entry and field; otherwise valid entries are kept and problems are in ``errors``."""
    reg_path = Path(path) if path is not None else DEFAULT_REGISTRY
    try:
        data = tomllib.loads(reg_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RegistryError(f"registry not found: {reg_path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError(f"registry {reg_path} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"registry {reg_path} is not valid TOML: {exc}") from None
    meta = data.get("meta")
    if not isinstance(meta, dict):
        raise RegistryError(f"{reg_path}: missing [meta] table (with repo and commit)")
    repo, commit = meta.get("repo"), meta.get("commit")
    if not isinstance(repo, str) or not re.match(r"^[\w.-]+/[\w.-]+$", repo):
        raise RegistryError(f"{reg_path}: [meta] field 'repo' must be 'owner/name', got {repo!r}")
    if not isinstance(commit, str) or not _COMMIT_RE.match(commit):
        raise RegistryError(
            f"{reg_path}: [meta] field 'commit' must be 40 lowercase hex digits, got {commit!r}"
        )
    entries = data.get("site")
    if not isinstance(entries, list) or not entries:
        raise RegistryError(f"{reg_path}: no [[site]] entries")
    sites: list[Site] = []
    errors: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        site, errs = _validate_site(i, entry)
        errors.extend(f"{reg_path}: {e}" for e in errs)
        if site is None:
            continue
        if site.id in seen:
            errors.append(f"{reg_path}: {_entry_name(i, entry)}: field 'id' {site.id!r} is used twice")
            continue
        seen.add(site.id)
        sites.append(site)
    if errors and strict:
        raise RegistryError("\n".join(errors))
    return Registry(repo, commit, tuple(sites), reg_path, tuple(errors), data)


# --------------------------------------------------------------------------- text helpers


def span_sha256(text: str, start: int, end: int) -> str:
    """The registry's hash: sha256 of lines start..end (1-based, inclusive) with their line ends."""
    return hashlib.sha256("".join(text.splitlines(keepends=True)[start - 1 : end]).encode()).hexdigest()


def _anchor_line(lines: Sequence[str], site: Site, start: int | None = None, end: int | None = None):
    start = site.start if start is None else start
    end = site.end if end is None else end
    for n in range(start, min(end, len(lines)) + 1):
        if site.anchor in lines[n - 1]:
            return n
    return None


@functools.lru_cache(maxsize=16)
def _symbol_table(source: str) -> tuple[tuple[str, int, int], ...]:
    """(qualified name, first line incl. decorators, last line) for every def/class."""
    tree = ast.parse(source)
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}" if prefix else child.name
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out.append((name, first, child.end_lineno or child.lineno))
                visit(child, name)
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(out)


def enclosing_symbol(source: str, line: int) -> str:
    """The innermost def/class (qualified with '.') whose lines contain ``line``, or '<module>'."""
    return spanning_symbol(source, line, line)


def spanning_symbol(source: str, start: int, end: int) -> str:
    """The innermost def/class whose lines contain all of ``start``..``end``, or '<module>'."""
    best, best_size = MODULE_SYMBOL, None
    for name, first, last in _symbol_table(source):
        if first <= start and end <= last and (best_size is None or last - first <= best_size):
            best, best_size = name, last - first
    return best


