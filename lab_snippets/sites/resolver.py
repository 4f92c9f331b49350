"""Finding slime files at the pinned commit: ``SLIME_SRC``, the per-user cache, a download."""

from __future__ import annotations

import http.client
import os
import subprocess
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from lab_snippets.sites.gitcmd import GIT_TIMEOUT, run_git
from lab_snippets.sites.registry import DEFAULT_TIMEOUT, Registry, Site, span_sha256

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


OFFLINE_ENV = "SLIME_OFFLINE"
# Set beside SLIME_OFFLINE=1 by whoever turned the download off for someone else (the book build,
# for the kernels it starts once its own fetch failed): why, in place of "SLIME_OFFLINE=1".
OFFLINE_WHY_ENV = "SLIME_OFFLINE_WHY"


def offline() -> bool:
    """True when ``SLIME_OFFLINE`` forbids downloads (1, true, yes or on, any case): the one
    reading of the flag, for the kernels and for the book build alike."""
    return _env_flag(OFFLINE_ENV)


def _offline_problem() -> str:
    why = os.environ.get(OFFLINE_WHY_ENV, "").strip()
    if why:
        return f"no download was tried: {why}"
    return "SLIME_OFFLINE=1, so no download was tried. Fix: unset SLIME_OFFLINE."


class SourceProblem(Exception):
    """One step of the resolver could not provide the file; the message names problem and fix.
    ``absent`` is set when the source answered authoritatively that the file is not at the commit."""

    def __init__(self, message: str, *, absent: bool = False) -> None:
        super().__init__(message)
        self.absent = absent


class Resolver:
    """Finds slime files at one commit. Keeps what it read (and which steps failed) for its lifetime,
    so a chapter with several sites does not retry a dead network once per site; the notebooks'
    views share one per process (``process_resolver``), so a kernel tries a dead network once."""

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
        return run_git(args, repo=self.src, bare=self._src_kind == "bare")

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
        return not offline()

    def _from_network(self, path: str, commit: str | None = None) -> Found:
        if not self.network_allowed():
            raise SourceProblem(_offline_problem())
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
                    if found.authoritative:  # a plain tree can change under a long-lived kernel
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


_PROCESS_RESOLVERS: dict[tuple[object, ...], Resolver] = {}
_PROCESS_LOCK = threading.Lock()


def _settings() -> tuple[object, ...]:
    """What decides where a resolver looks: read when it is made, so a change makes another one."""
    return (os.environ.get("SLIME_SRC") or None, offline(), os.environ.get(OFFLINE_WHY_ENV),
            os.environ.get("SLIME_RAW_BASE"), os.environ.get("SLIME_FETCH_TIMEOUT"), str(cache_root()))


def process_resolver(registry: Registry) -> Resolver:
    """This process's resolver for ``registry``'s repository and commit under the current slime
    settings. Every call-site view in a kernel goes through it, so a network found dead is tried
    once per kernel, not once per cell; setting another ``SLIME_*`` value gets a fresh resolver."""
    key = (registry.repo, registry.commit, *_settings())
    with _PROCESS_LOCK:
        resolver = _PROCESS_RESOLVERS.get(key)
        if resolver is None:
            resolver = _PROCESS_RESOLVERS[key] = Resolver(registry)
        return resolver


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


