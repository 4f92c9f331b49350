"""Slime call sites: a pinned registry, live quotes from slime's real source, an offline fallback.

The course never stores slime's source text. ``sites.toml`` (next to this module) keeps only
where each call site is (path, line span, enclosing symbol, anchor fragment, sha256 of the
span) and the course's own explanation. The quote is read from slime's source when a cell
runs, in this order:

1. ``SLIME_SRC`` -- a slime git checkout or bare git directory (read ``<commit>:<path>``
   through git), or a plain source tree (read the file, check the hash);
2. a per-user cache: ``$SLIME_COURSE_CACHE`` or ``$XDG_CACHE_HOME/slime-course`` or
   ``~/.cache/slime-course``, laid out as ``<commit>/<path>``;
3. a download of just that file from GitHub's raw host at the pinned commit
   (``SLIME_RAW_BASE`` overrides the base URL, ``SLIME_FETCH_TIMEOUT`` the timeout;
   never when ``SLIME_OFFLINE=1``);
4. the fallback: caption, permalink and explanation, and how to see the quote.

A notebook's last cell is ``show_call_site("06")``; it never raises for lack of source.

Command line::

    python -m lab_snippets.sites check              # every site resolves and matches
    python -m lab_snippets.sites fetch              # fill the cache for the pinned commit
    python -m lab_snippets.sites relocate --to SHA [--write]
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import hashlib
import html
import http.client
import os
import re
import subprocess
import sys
import tempfile
import threading
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

__all__ = [
    "DEFAULT_REGISTRY",
    "CallSiteView",
    "CallSitesView",
    "Registry",
    "RegistryError",
    "Resolver",
    "Site",
    "cache_root",
    "enclosing_symbol",
    "load_registry",
    "main",
    "show_call_site",
    "show_chapter_sites",
    "span_sha256",
]

DEFAULT_REGISTRY = Path(__file__).with_name("sites.toml")
DEFAULT_TIMEOUT = 3.0
GIT_TIMEOUT = 30.0
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


# The book build (lab_snippets.bookbuild) sets these for the kernels it runs: a quote that falls back
# shows readers a calm note instead of the resolver's problems, and each fallback's reason is
# appended (one JSON line) to the log, for the one-line summary printed to the person building.
READER_FALLBACK_ENV = "SLIME_READER_FALLBACK"
QUOTE_LOG_ENV = "SLIME_QUOTE_LOG"


def reader_fallback_note(registry: Registry, site: Site) -> str:
    """What a reader of the published book sees when the build had no slime source: what the
    site is, where to read it, how to see it here. No build problem is shown to readers."""
    return (
        f"This copy of the book was built without slime's source, so the lines are not quoted here: "
        f"they are {site.span} ({site.symbol}) in {registry.repo} at commit {registry.short_commit}. "
        "Read them on GitHub through the link below, or run this chapter with a slime clone "
        "(SLIME_SRC=path/to/slime) to see them here."
    )


def log_quote(site: Site, res: Resolution) -> None:
    """Append the outcome of a quote that was not shown from source to ``$SLIME_QUOTE_LOG`` (if set)."""
    target = os.environ.get(QUOTE_LOG_ENV)
    if not target or res.status == "ok":
        return
    import json

    line = json.dumps({"site": site.id, "chapter": site.chapter, "status": res.status,
                       "reason": " | ".join(res.problems) or res.status})
    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass  # the summary then says the reason is unknown; the page is unaffected


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
    best, best_size = MODULE_SYMBOL, None
    for name, first, last in _symbol_table(source):
        if first <= line <= last and (best_size is None or last - first <= best_size):
            best, best_size = name, last - first
    return best


# --------------------------------------------------------------------------- resolution


@dataclass
class Found:
    """The text of one file at the pinned commit, and where it came from."""

    text: str
    origin: str
    authoritative: bool  # read at the commit itself (git, raw host), not a tree of unknown version


@dataclass
class Resolution:
    site: Site
    status: str  # "ok", "mismatch", "fallback"
    text: str | None = None
    origin: str | None = None
    problems: list[str] = field(default_factory=list)


def cache_root() -> Path:
    override = os.environ.get("SLIME_COURSE_CACHE")
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "slime-course"


def _atomic_write(target: Path, data: bytes) -> None:
    """Write via a temp file in the same directory and os.replace, so a reader never sees half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


class SourceProblem(Exception):
    """One step of the resolver could not provide the file; the message names problem and fix.
    ``absent`` is set when the source answered authoritatively that the file is not at the commit."""

    def __init__(self, message: str, *, absent: bool = False) -> None:
        super().__init__(message)
        self.absent = absent


class Resolver:
    """Finds slime files at one commit. Keeps what it read (and which steps failed) for its lifetime,
    so a chapter with several sites does not retry a dead network once per site."""

    def __init__(self, registry: Registry, *, use_network: bool | None = None) -> None:
        self.registry = registry
        self.commit = registry.commit
        self._texts: dict[tuple[str, str], Found] = {}
        self._dead: dict[str, str] = {}  # step name -> reason it is unusable in this session
        self._use_network = use_network
        self.src = os.environ.get("SLIME_SRC") or None
        self._src_kind: str | None = None

    # ----- SLIME_SRC

    def _git(self, args: list[str]) -> subprocess.CompletedProcess[bytes]:
        assert self.src is not None
        root = Path(self.src)
        prefix = ["git", "--git-dir", str(root)] if self._src_kind == "bare" else ["git", "-C", str(root)]
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANG="C")
        return subprocess.run(prefix + args, capture_output=True, timeout=GIT_TIMEOUT, env=env, check=False)

    def _classify_src(self, site_path: str) -> str:
        if self._src_kind is not None:
            return self._src_kind
        if "src" in self._dead:
            raise SourceProblem(self._dead["src"])
        assert self.src is not None
        root = Path(self.src).expanduser()
        self.src = str(root)
        try:
            if not root.exists():
                raise SourceProblem(
                    f"SLIME_SRC={root} does not exist. Fix: point SLIME_SRC at a slime clone "
                    f"(git clone https://github.com/{self.registry.repo}) or unset it."
                )
            if not root.is_dir():
                raise SourceProblem(
                    f"SLIME_SRC={root} is a file, not a slime repository or source tree. "
                    "Fix: point SLIME_SRC at the directory of a slime clone."
                )
            if (root / ".git").exists():
                kind = "git"
            elif (root / "HEAD").is_file() and (root / "objects").is_dir():
                kind = "bare"
            elif (root / PurePosixPath(site_path).parts[0]).is_dir():
                kind = "tree"
            else:
                raise SourceProblem(
                    f"SLIME_SRC={root} is neither a git repository nor a slime source tree "
                    f"(no .git, and no {PurePosixPath(site_path).parts[0]}/ directory in it). "
                    "Fix: point SLIME_SRC at the top directory of a slime clone."
                )
            if kind in {"git", "bare"}:
                self._src_kind = kind
                self._check_commit()
        except SourceProblem as exc:
            self._dead["src"] = str(exc)
            self._src_kind = None
            raise
        self._src_kind = kind
        return kind

    def _check_commit(self) -> None:
        try:
            proc = self._git(["cat-file", "-e", f"{self.commit}^{{commit}}"])
        except FileNotFoundError:
            raise SourceProblem(
                "SLIME_SRC is a git repository but the `git` program was not found. "
                "Fix: install git, or point SLIME_SRC at a plain source tree."
            ) from None
        except subprocess.TimeoutExpired:
            raise SourceProblem(
                f"git did not answer within {GIT_TIMEOUT:.0f} s reading SLIME_SRC={self.src}."
            ) from None
        if proc.returncode == 0:
            return
        err = proc.stderr.decode(errors="replace").strip()
        if "dubious ownership" in err:
            raise SourceProblem(
                f"git refuses to read SLIME_SRC={self.src} (it belongs to another user). "
                f"Fix: git config --global --add safe.directory {self.src}"
            )
        if "not a git repository" in err:
            raise SourceProblem(
                f"SLIME_SRC={self.src} looks like a git directory but git cannot read it ({err}). "
                "Fix: point SLIME_SRC at a working slime clone."
            )
        raise SourceProblem(
            f"SLIME_SRC={self.src} does not contain the pinned commit {self.commit[:12]}. "
            f"Fix: git -C {self.src} fetch origin {self.commit} (or clone slime afresh)."
        )

    def _from_src(self, path: str) -> Found:
        kind = self._classify_src(path)
        if kind == "tree":
            file = Path(self.src or "") / path
            try:
                data = file.read_bytes()
            except FileNotFoundError:
                raise SourceProblem(
                    f"{path} is absent from the source tree SLIME_SRC={self.src}. Fix: use a clone at "
                    f"commit {self.commit[:12]} (git checkout {self.commit[:12]})."
                ) from None
            except OSError as exc:
                raise SourceProblem(f"cannot read {file}: {exc}") from None
            return Found(_decode(data, f"{file}"), f"SLIME_SRC tree {self.src}", authoritative=False)
        proc = self._git(["cat-file", "blob", f"{self.commit}:{path}"])
        if proc.returncode != 0:
            raise SourceProblem(
                f"{path} is absent at commit {self.commit[:12]} in SLIME_SRC={self.src}. "
                "Fix: correct the site's path in the registry (or run `relocate`).",
                absent=True,
            )
        return Found(_decode(proc.stdout, f"{self.commit[:7]}:{path}"), f"SLIME_SRC git {self.src}", True)

    # ----- cache

    def cache_file(self, path: str, commit: str | None = None) -> Path:
        return cache_root() / (commit or self.commit) / PurePosixPath(path)

    def _from_cache(self, path: str) -> Found:
        file = self.cache_file(path)
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            raise SourceProblem("not cached") from None
        except OSError as exc:
            raise SourceProblem(f"the cache file {file} cannot be read: {exc}") from None
        return Found(_decode(data, str(file)), f"cache {file}", True)

    def write_cache(self, path: str, text: str, commit: str | None = None) -> Path:
        target = self.cache_file(path, commit)
        _atomic_write(target, text.encode("utf-8"))
        return target

    # ----- network

    def raw_url(self, path: str, commit: str | None = None) -> str:
        base = os.environ.get("SLIME_RAW_BASE") or f"https://raw.githubusercontent.com/{self.registry.repo}"
        return f"{base.rstrip('/')}/{commit or self.commit}/{urllib.parse.quote(path)}"

    def network_allowed(self) -> bool:
        if self._use_network is not None:
            return self._use_network
        return not _env_flag("SLIME_OFFLINE")

    def _from_network(self, path: str, commit: str | None = None) -> Found:
        if not self.network_allowed():
            raise SourceProblem("SLIME_OFFLINE=1, so no download was tried. Fix: unset SLIME_OFFLINE.")
        if "net" in self._dead:
            raise SourceProblem(self._dead["net"])
        url = self.raw_url(path, commit)
        try:
            timeout = float(os.environ.get("SLIME_FETCH_TIMEOUT") or DEFAULT_TIMEOUT)
        except ValueError:
            timeout = DEFAULT_TIMEOUT
        host = urllib.parse.urlsplit(url).netloc
        try:
            data = _download(url, timeout)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise SourceProblem(
                    f"{url} answered 404: {path} is absent at commit {(commit or self.commit)[:12]}. "
                    "Fix: correct the site's path in the registry (or run `relocate`).",
                    absent=True,
                ) from None
            raise SourceProblem(f"download of {url} failed: HTTP {exc.code} {exc.reason}.") from None
        except http.client.IncompleteRead as exc:
            raise SourceProblem(
                f"download of {url} was cut off ({len(exc.partial)} bytes received, more were promised); "
                "nothing was cached. Fix: retry, or set SLIME_SRC."
            ) from None
        except TimeoutError:
            self._dead["net"] = (
                f"{host} did not answer within {timeout:g} s. Fix: retry online, raise SLIME_FETCH_TIMEOUT, "
                "or set SLIME_SRC to a slime clone."
            )
            raise SourceProblem(self._dead["net"]) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                what = f"did not answer within {timeout:g} s"
            else:
                what = f"could not be reached ({reason})"
            self._dead["net"] = (
                f"{host} {what}. Fix: allow network access, or set SLIME_SRC to a slime clone, "
                "or set SLIME_OFFLINE=1 to skip the download."
            )
            raise SourceProblem(self._dead["net"]) from None
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise SourceProblem(f"download of {url} failed: {exc!r}. Fix: retry, or set SLIME_SRC.") from None
        return Found(_decode(data, url), f"download {url}", True)

    # ----- the chain

    def resolve(self, site: Site) -> Resolution:
        """Return the site's file text and status; never raises for lack of source."""
        problems: list[str] = []
        suspect: Found | None = None  # a text whose hash did not match; shown if nothing better

        def matches(found: Found) -> bool:
            return span_sha256(found.text, site.start, site.end) == site.sha256

        key = (self.commit, site.path)
        if key in self._texts and matches(self._texts[key]):
            found = self._texts[key]
            return Resolution(site, "ok", found.text, found.origin)

        if self.src:
            try:
                found = self._from_src(site.path)
            except SourceProblem as exc:
                problems.append(str(exc))
            else:
                if matches(found):
                    self._texts[key] = found
                    return Resolution(site, "ok", found.text, found.origin, problems)
                if found.authoritative:
                    return Resolution(site, "mismatch", found.text, found.origin, problems)
                problems.append(
                    f"SLIME_SRC={self.src} is a plain tree whose {site.path} differs from commit "
                    f"{self.commit[:7]} here. Fix: git checkout {self.commit[:12]} in that clone."
                )
                suspect = found

        try:
            found = self._from_cache(site.path)
        except SourceProblem as exc:
            if str(exc) != "not cached":
                problems.append(str(exc))
        else:
            if matches(found):
                self._texts[key] = found
                return Resolution(site, "ok", found.text, found.origin, problems)
            problems.append(
                f"the cached {self.cache_file(site.path)} is corrupt (hash mismatch); ignored it"
                + (
                    ""
                    if self.network_allowed()
                    else ". Fix: run `python -m lab_snippets.sites fetch` online."
                )
            )

        try:
            found = self._from_network(site.path)
        except SourceProblem as exc:
            problems.append(str(exc))
        else:
            if matches(found):
                self._texts[key] = found
                try:
                    self.write_cache(site.path, found.text)
                except OSError as exc:
                    problems.append(f"could not write the cache ({exc}); the quote is shown anyway")
                return Resolution(site, "ok", found.text, found.origin, problems)
            return Resolution(site, "mismatch", found.text, found.origin, problems)

        if suspect is not None:
            return Resolution(site, "mismatch", suspect.text, suspect.origin, problems)
        return Resolution(site, "fallback", None, None, problems)

    def read_at(self, commit: str, path: str) -> str:
        """The file at any commit (for ``relocate``): git SLIME_SRC, then cache, then the raw host.
        Raises SourceProblem (with ``absent`` when a source says the file is not at that commit)."""
        key = (commit, path)
        if key in self._texts:
            return self._texts[key].text
        problems = []
        if self.src:
            saved = self.commit
            self.commit = commit
            try:
                if self._classify_src(path) == "tree":
                    raise SourceProblem("SLIME_SRC is a plain source tree; relocate needs a git SLIME_SRC")
                found = self._from_src(path)
                self._texts[key] = found
                return found.text
            except SourceProblem as exc:
                if exc.absent:
                    raise
                problems.append(str(exc))
            finally:
                self.commit = saved
                self._dead.pop("src", None)
                self._src_kind = None
        file = self.cache_file(path, commit)
        if file.is_file():
            try:
                return _decode(file.read_bytes(), str(file))
            except SourceProblem as exc:
                problems.append(str(exc))
        try:
            found = self._from_network(path, commit)
        except SourceProblem as exc:
            if exc.absent:
                raise
            problems.append(str(exc))
            raise SourceProblem(" | ".join(problems)) from None
        self._texts[key] = found
        return found.text


def _download(url: str, timeout: float) -> bytes:
    """GET ``url``. urllib's timeout bounds the connect and each read but not the DNS lookup, so the
    request runs in a daemon thread under an overall deadline; a hung resolver cannot hang a cell."""
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            req = urllib.request.Request(url, headers={"User-Agent": "slime-course-lab-snippets"})
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                box["data"] = resp.read()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=worker, name="slime-course-download", daemon=True)
    thread.start()
    thread.join(2 * timeout + 0.5)
    if thread.is_alive():
        raise TimeoutError(f"no answer from {url} within {2 * timeout + 0.5:g} s")
    if "error" in box:
        raise box["error"]
    return box["data"]


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SourceProblem(f"{where} is not UTF-8 text (corrupt?)") from None


# --------------------------------------------------------------------------- display

_CODE_BG = "#f6f8fa"
_CODE_FG = "#1f2328"
_MARK_BG = "#fff1a8"
_STYLE_NAME = "default"


def _highlight_lines(code: str) -> list[str]:
    """Pygments-highlight ``code`` into one inline-styled HTML string per line (no CSS classes)."""
    n = code.count("\n") + 1
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:  # pragma: no cover - pygments is a course dependency
        return [html.escape(line) for line in code.split("\n")]
    formatter = HtmlFormatter(noclasses=True, nowrap=True, style=_STYLE_NAME)
    out = highlight(code, PythonLexer(stripnl=False, ensurenl=True), formatter).split("\n")
    return (out + [""] * n)[:n]


@dataclass
class CallSiteView:
    """What ``show_call_site`` returns: renders as HTML in Jupyter/Jupyter Book, text elsewhere."""

    registry: Registry | None
    site: Site | None
    status: str  # "ok", "mismatch", "fallback", "error"
    lines: list[tuple[int, str]] = field(default_factory=list)
    anchor_line: int | None = None
    origin: str | None = None
    problems: list[str] = field(default_factory=list)

    @classmethod
    def from_resolution(cls, registry: Registry, res: Resolution) -> CallSiteView:
        site = res.site
        lines: list[tuple[int, str]] = []
        anchor = None
        if res.text is not None:
            all_lines = res.text.splitlines()
            lines = [(n, all_lines[n - 1]) for n in range(site.start, min(site.end, len(all_lines)) + 1)]
            anchor = _anchor_line(all_lines, site)
        return cls(registry, site, res.status, lines, anchor, res.origin, list(res.problems))

    @classmethod
    def error(cls, message: str) -> CallSiteView:
        return cls(None, None, "error", problems=[message])

    # ----- shared text

    def _caption(self) -> str:
        assert self.registry is not None and self.site is not None
        return self.registry.caption(self.site)

    def _notes(self) -> list[str]:
        notes = list(self.problems)
        if self.status == "mismatch":
            assert self.site is not None
            notes.insert(
                0,
                f"slime changed here since the course was pinned: {self.site.span} no longer has the "
                f"hash in the registry. These are the lines found (from {self.origin}). "
                "Fix: `python -m lab_snippets.sites relocate` or correct the entry.",
            )
        elif self.status == "fallback":
            if _env_flag(READER_FALLBACK_ENV):
                assert self.registry is not None and self.site is not None
                return [reader_fallback_note(self.registry, self.site)]
            notes.append(HOW_TO_SEE)
        return notes

    @property
    def css_class(self) -> str:
        return {
            "ok": "slime-quote",
            "mismatch": "slime-quote slime-mismatch",
            "fallback": "slime-quote slime-fallback",
            "error": "slime-quote slime-fallback slime-error",
        }[self.status]

    # ----- HTML

    def _repr_html_(self) -> str:
        box = (
            "border:1px solid rgba(128,128,128,.55);border-radius:6px;padding:.6em .8em;"
            "margin:.5em 0;max-width:100%;overflow:hidden"
        )
        parts = [f'<div class="{self.css_class}" style="{box}">']
        if self.status == "error" or self.registry is None or self.site is None:
            parts.append('<div style="font-weight:bold">slime call site unavailable</div>')
            parts += [f'<div style="white-space:pre-wrap">{html.escape(p)}</div>' for p in self.problems]
            parts.append("</div>")
            return "".join(parts)
        site, link = self.site, self.registry.permalink(self.site)
        parts.append(
            '<div style="font-family:monospace;font-size:.9em;margin-bottom:.4em">'
            f'<a href="{html.escape(link)}" style="color:inherit">{html.escape(self._caption())}</a>'
            f' <span style="opacity:.7">\u2014 {html.escape(site.title)}</span></div>'
        )
        notes = self._notes()
        if notes:
            warn = self.status == "mismatch"
            border = "#d1242f" if warn else "rgba(128,128,128,.7)"
            parts.append(f'<div style="border-left:3px solid {border};padding-left:.6em;margin:.4em 0">')
            parts += [f'<div style="white-space:pre-wrap">{html.escape(n)}</div>' for n in notes]
            parts.append("</div>")
        if self.lines:
            parts.append(self._code_html())
        parts.append(
            f'<div style="margin-top:.4em"><a href="{html.escape(link)}" style="color:inherit">'
            f"view these lines on GitHub</a></div>"
        )
        parts.append(f'<div style="margin-top:.4em">{html.escape(site.explanation.strip())}</div>')
        parts.append("</div>")
        return "".join(parts)

    def _code_html(self) -> str:
        highlighted = _highlight_lines("\n".join(text for _, text in self.lines))
        width = len(str(self.lines[-1][0]))
        rows = []
        for (n, _), code in zip(self.lines, highlighted, strict=True):
            marked = n == self.anchor_line
            bg = f"background:{_MARK_BG};" if marked else ""
            edge = "#bf8700" if marked else "transparent"
            rows.append(
                f'<span class="slime-line{" slime-anchor" if marked else ""}" data-line="{n}" '
                f'style="display:block;min-width:100%;width:max-content;box-sizing:border-box;{bg}'
                f'border-left:3px solid {edge}">'
                f'<span style="color:#6e7781;user-select:none;padding:0 .6em 0 .3em">{n:>{width}}</span>'
                f"{code}</span>"
            )
        pre = (
            f"background:{_CODE_BG};color:{_CODE_FG};border:1px solid rgba(128,128,128,.4);"
            "border-radius:4px;padding:.4em 0;margin:.3em 0;overflow-x:auto;font-size:.85em;line-height:1.4"
        )
        return f'<pre style="{pre}">{"".join(rows)}</pre>'

    # ----- text

    def _text(self, markdown: bool) -> str:
        if self.status == "error" or self.registry is None or self.site is None:
            return "slime call site unavailable:\n" + "\n".join(self.problems)
        site, link = self.site, self.registry.permalink(self.site)
        head = f"{self._caption()} \u2014 {site.title}"
        blocks = [f"**{head}**" if markdown else head]
        blocks += [("> " if markdown else "! ") + n for n in self._notes()]
        if self.lines:
            width = len(str(self.lines[-1][0]))
            body = "\n".join(
                f"{'>' if n == self.anchor_line else ' '}{n:>{width}}  {text}" for n, text in self.lines
            )
            if markdown:
                ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
                body = f"{ticks}\n{body}\n{ticks}"
            blocks.append(body)
        blocks.append(f"[view these lines on GitHub]({link})" if markdown else link)
        blocks.append(site.explanation.strip())
        return ("\n\n" if markdown else "\n").join(blocks)

    def _repr_markdown_(self) -> str:
        return self._text(markdown=True)

    def __repr__(self) -> str:
        return self._text(markdown=False)


@dataclass
class CallSitesView:
    """Several call sites shown in order (chapter 14's task chain)."""

    views: list[CallSiteView]

    def _repr_html_(self) -> str:
        return '<div class="slime-quotes">' + "".join(v._repr_html_() for v in self.views) + "</div>"

    def _repr_markdown_(self) -> str:
        return "\n\n---\n\n".join(v._repr_markdown_() for v in self.views)

    def __repr__(self) -> str:
        return "\n\n".join(repr(v) for v in self.views)


def _load_for_display(registry: str | os.PathLike[str] | Registry | None) -> Registry:
    if isinstance(registry, Registry):
        return registry
    return load_registry(registry, strict=False)


def show_call_site(
    site_id: str, *, registry: str | os.PathLike[str] | Registry | None = None
) -> CallSiteView:
    """The quote of one slime call site (exactly ``site_id``). Never raises: a missing source, a dead
    network or a bad registry entry give a view with a clear message and the fallback."""
    try:
        reg = _load_for_display(registry)
        site = reg.get(str(site_id))
    except RegistryError as exc:
        return CallSiteView.error(f"{exc}\nFix the entry, then run `python -m lab_snippets.sites check`.")
    return _view(reg, site, Resolver(reg))


def show_chapter_sites(
    chapter: str, *, registry: str | os.PathLike[str] | Registry | None = None
) -> CallSitesView:
    """All sites of ``chapter`` in registry order (e.g. chapter 14's chain '14', '14b', '14c')."""
    try:
        reg = _load_for_display(registry)
        sites = reg.chapter_sites(str(chapter))
    except RegistryError as exc:
        return CallSitesView([CallSiteView.error(f"{exc}\nFix the registry, then run `check`.")])
    resolver = Resolver(reg)
    return CallSitesView([_view(reg, s, resolver) for s in sites])


def _view(reg: Registry, site: Site, resolver: Resolver) -> CallSiteView:
    try:
        res = resolver.resolve(site)
    except Exception as exc:  # noqa: BLE001 - a notebook cell must never fail here
        res = Resolution(site, "fallback", problems=[f"unexpected error while reading slime: {exc!r}"])
    log_quote(site, res)
    return CallSiteView.from_resolution(reg, res)


# --------------------------------------------------------------------------- command line


def check_site(registry: Registry, site: Site, res: Resolution) -> list[str]:
    """Problems with one resolved site (empty when it is fine)."""
    if res.text is None:
        return ["no source: " + (" | ".join(res.problems) or "nothing could be read")]
    lines = res.text.splitlines()
    failures: list[str] = []
    if site.end > len(lines):
        failures.append(f"span ends at line {site.end} but {site.path} has {len(lines)} lines")
    if res.status == "mismatch":
        failures.append(f"hash mismatch: lines {site.start}-{site.end} are not the pinned text")
    anchor = _anchor_line(lines, site)
    if anchor is None:
        failures.append(f"anchor {site.anchor!r} is not in lines {site.start}-{site.end}")
    elif site.path.endswith(".py"):
        try:
            actual = enclosing_symbol(res.text, anchor)
        except SyntaxError as exc:
            failures.append(f"{site.path} does not parse: {exc}")
        else:
            if actual != site.symbol:
                failures.append(f"symbol is {actual!r} at line {anchor}, registry says {site.symbol!r}")
    return failures


def cmd_check(registry: Registry, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    resolver = Resolver(registry)
    bad = unresolved = 0
    for error in registry.errors:
        print(f"FAIL registry: {error}", file=out)
    for site in registry.sites:
        res = resolver.resolve(site)
        failures = check_site(registry, site, res)
        if res.text is None:
            unresolved += 1
        if failures:
            bad += 1
            print(f"FAIL {site.id:<4} {site.span} {site.symbol}: " + "; ".join(failures), file=out)
        else:
            where = (res.origin or "").rsplit(" ", 1)[0]
            print(f"ok   {site.id:<4} {site.span} {site.symbol} [{where}]", file=out)
    n = len(registry.sites)
    if n and unresolved == n:
        print(
            f"no slime source at all: none of {n} sites could be read.\n{HOW_TO_SEE}",
            file=out,
        )
        return 2
    print(
        f"checked {n} sites at {registry.repo}@{registry.short_commit}: {n - bad} ok, {bad} failed"
        + (f", {len(registry.errors)} registry errors" if registry.errors else ""),
        file=out,
    )
    return 1 if bad or registry.errors else 0


def cmd_fetch(registry: Registry, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    resolver = Resolver(registry)
    failed = 0
    by_path: dict[str, list[Site]] = {}
    for site in registry.sites:
        by_path.setdefault(site.path, []).append(site)
    for path, sites in by_path.items():
        results = [resolver.resolve(s) for s in sites]
        good = [r for r in results if r.status == "ok"]
        if len(good) == len(results):
            res = good[0]
            if res.origin and res.origin.startswith("cache "):
                print(f"ok   {path} (already cached)", file=out)
            else:
                target = resolver.write_cache(path, res.text or "")
                print(f"ok   {path} -> {target} (from {res.origin})", file=out)
        else:
            failed += 1
            why = [p for r in results for p in r.problems] or [
                f"site {r.site.id}: hash mismatch" for r in results if r.status == "mismatch"
            ]
            print(f"FAIL {path}: " + " | ".join(dict.fromkeys(why)), file=out)
    print(
        f"cache {cache_root() / registry.commit}: {len(by_path) - failed} of {len(by_path)} files", file=out
    )
    return 1 if failed else 0


@dataclass
class Relocation:
    site: Site
    status: str  # "unchanged", "moved", "changed", "missing"
    start: int | None = None
    end: int | None = None
    sha256: str | None = None
    note: str = ""


def relocate_site(site: Site, old_text: str | None, new_text: str | None) -> Relocation:
    """Find ``site`` in ``new_text`` by its symbol (AST) and anchor; shift the span with the anchor."""
    if new_text is None:
        return Relocation(site, "missing", note=f"{site.path} is absent at the new commit")
    old_lines = old_text.splitlines() if old_text is not None else None
    length = site.end - site.start
    old_anchor = _anchor_line(old_lines, site) if old_lines is not None else None
    offset = (old_anchor - site.start) if old_anchor is not None else 0
    occurrence = 0
    if old_text is not None and old_anchor is not None:
        try:
            occurrence = _occurrences(old_text, site).index(old_anchor)
        except (SyntaxError, ValueError):
            occurrence = 0
    try:
        candidates = _occurrences(new_text, site)
    except SyntaxError as exc:
        return Relocation(site, "missing", note=f"{site.path} does not parse at the new commit: {exc}")
    if not candidates:
        names = {name for name, _, _ in _symbol_table(new_text)}
        what = "symbol" if site.symbol not in names and site.symbol != MODULE_SYMBOL else "anchor in symbol"
        return Relocation(site, "missing", note=f"{what} not found: {site.symbol} / {site.anchor!r}")

    def span_for(line: int) -> tuple[int, int]:
        start = max(1, line - offset)
        return start, start + length

    chosen = next(
        (c for c in candidates if span_sha256(new_text, *span_for(c)) == site.sha256),
        candidates[min(occurrence, len(candidates) - 1)],
    )
    start, end = span_for(chosen)
    digest = span_sha256(new_text, start, end)
    n_lines = len(new_text.splitlines())
    if end > n_lines:
        end = n_lines
        digest = span_sha256(new_text, start, end)
    if digest == site.sha256:
        status = "unchanged" if start == site.start else "moved"
    else:
        status = "changed"
    note = f"{site.start}-{site.end} -> {start}-{end}" if start != site.start else f"{start}-{end}"
    if old_text is None:
        note += " (old text unavailable: took the first anchor in the symbol)"
    return Relocation(site, status, start, end, digest, note)


def _occurrences(text: str, site: Site) -> list[int]:
    """Lines containing the anchor whose innermost enclosing def/class is the site's symbol."""
    lines = text.splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if site.anchor in line]
    if not hits:
        return []
    return [n for n in hits if enclosing_symbol(text, n) == site.symbol]


def cmd_relocate(registry: Registry, to: str, write: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    to = to.strip().lower()
    if not _COMMIT_RE.match(to):
        print(f"--to must be a full 40-hex commit id, got {to!r}", file=out)
        return 2
    resolver = Resolver(registry)
    results: list[Relocation] = []
    for site in registry.sites:
        try:
            old = resolver.read_at(registry.commit, site.path)
        except SourceProblem:
            old = None
        try:
            new = resolver.read_at(to, site.path)
        except SourceProblem as exc:
            if exc.absent:
                results.append(Relocation(site, "missing", note=f"{site.path} is absent at {to[:7]}"))
                continue
            print(f"cannot read {site.path} at {to[:7]}: {exc}", file=out)
            return 2
        results.append(relocate_site(site, old, new))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
        print(f"{r.status:<9} {r.site.id:<4} {r.site.path} {r.site.symbol}: {r.note}", file=out)
    print(
        f"relocate {registry.short_commit} -> {to[:7]}: "
        + ", ".join(f"{counts.get(k, 0)} {k}" for k in ("unchanged", "moved", "changed", "missing")),
        file=out,
    )
    if not write:
        print("registry not written (pass --write to update it)", file=out)
        return 1 if counts.get("missing") else 0
    if counts.get("missing"):
        print("not writing: fix or remove the missing sites by hand first", file=out)
        return 1
    write_relocated(registry, to, results)
    print(
        f"wrote {registry.path}"
        + (" -- review the explanations of changed sites" if counts.get("changed") else ""),
        file=out,
    )
    return 0


def write_relocated(registry: Registry, commit: str, results: Iterable[Relocation]) -> None:
    import tomli_w

    data = {k: v for k, v in registry.raw.items()}
    data["meta"] = dict(data["meta"], commit=commit)
    by_id = {r.site.id: r for r in results}
    new_sites = []
    for entry in data["site"]:
        entry = dict(entry)
        r = by_id.get(entry.get("id"))
        if r is not None and r.start is not None:
            entry.update(start=r.start, end=r.end, sha256=r.sha256)
        new_sites.append(entry)
    data["site"] = new_sites
    _atomic_write(registry.path, tomli_w.dumps(data, multiline_strings=True).encode("utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.sites", description=__doc__.split("\n")[0])
    parser.add_argument("--registry", default=None, help="registry file (default: lab_snippets/sites.toml)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="every site resolves at the pinned commit and matches")
    sub.add_parser("fetch", help="fill the per-user cache for the pinned commit")
    rel = sub.add_parser("relocate", help="re-find every site in another commit")
    rel.add_argument("--to", required=True, metavar="COMMIT", help="full commit id to move to")
    rel.add_argument("--write", action="store_true", help="rewrite the registry")
    args = parser.parse_args(argv)
    try:
        registry = load_registry(args.registry, strict=False)
    except RegistryError as exc:
        print(f"FAIL {exc}", file=sys.stdout)
        return 1
    if args.command == "check":
        return cmd_check(registry)
    if registry.errors:
        for error in registry.errors:
            print(f"FAIL registry: {error}")
        return 1
    if args.command == "fetch":
        return cmd_fetch(registry)
    return cmd_relocate(registry, args.to, args.write)


if __name__ == "__main__":
    sys.exit(main())
