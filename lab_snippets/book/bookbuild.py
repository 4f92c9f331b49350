"""Build the book faster: run the chapters two at a time into the jupyter cache, then build from it.

    python -m lab_snippets.book.bookbuild            # pre-execute (2 at a time), then jupyter-book build -W -n
    python -m lab_snippets.book.bookbuild --serial   # what the book did before: Sphinx runs each chapter in turn
    python -m lab_snippets.book.bookbuild --clean    # remove _build first (a clean build)
    python -m lab_snippets.book.bookbuild --english-only   # skip the Chinese edition

The Chinese edition is rendered from the catalogues in ``locale/`` and the same jupyter cache
(nothing executes again) and published at ``_build/html/zh_CN``. Once every chapter is in the cache,
the two editions are rendered side by side, each in its own process (two Sphinx processes for two
cores); with ``--serial`` the English build executes the chapters and the Chinese one follows it.

A build that succeeds writes a fingerprint of its inputs (the paths, sizes and modification times
of the sources, catalogues and the package, the jupyter cache's database, the interpreter and its
installed packages, the slime settings) to ``_build/.bookbuild-stamp``; the next build with the
same fingerprint and its pages in place stops there, as ``make`` would. Pages whose quote fell back
are built again while a download is allowed.

Jupyter Book (myst-nb, ``execute_notebooks: cache``) runs the chapters one after the other while
Sphinx reads them, and reads a page from its jupyter cache (``_build/.jupyter_cache``) when the
notebook's code matches an execution stored there. So the chapters are first executed by
jupyter-cache's multiprocessing worker, ``jobs`` at a time (each in its own folder, as myst-nb
does, with the book's cell timeout), into that same cache; the book build then finds every page
there and executes nothing. Sphinx's own ``-j`` is not used: an extension of the book is not
parallel-safe and ``-W`` fails.

jupyter-cache reports a notebook that failed but does not fail itself; here any chapter that
failed or could not run stops the build with exit status 1 and its traceback, before Sphinx runs
(so a flaky cell is never quietly executed a second time by the book build). The book build keeps
``-W -n --keep-going``.

The slime quotes in the chapters' last cells: the build uses ``SLIME_SRC`` when it is set;
otherwise, when the per-user cache lacks a pinned file and the network is allowed (not
``SLIME_OFFLINE=1``), it fetches just the pinned files once into that cache
(``python -m lab_snippets.sites fetch``). Without either, a quote falls back to a calm note for
readers (what the site is, its permalink, how to see it), and the build ends with one line saying
how many quotes fell back and why. A chapter cached with fallbacks is run again once a source is
there, so the published book gets the real lines.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import io
import json
import logging
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

from lab_snippets import REPO_ROOT

ROOT = REPO_ROOT
CHAPTER = re.compile(r"^\d\d_[a-z0-9_]+\.py$")
# jupyter-cache's reader for text notebooks; it reads py:percent files as myst-nb's custom format
# does (jupytext), so the cache key (code cells and kernelspec) is the same for both.
JUPYTEXT_READER = {"name": "jupytext", "type": "plugin"}


def cache_path(root: Path) -> Path:
    """The jupyter cache Jupyter Book reads (its default, ``_build/.jupyter_cache``)."""
    return Path(root) / "_build" / ".jupyter_cache"


def chapter_files(root: Path) -> list[Path]:
    """The chapter notebooks, largest first (a rough proxy for the longest running, so that the last
    chapters to start are short ones and the two workers finish close together)."""
    files = [p for p in (Path(root) / "notebooks").glob("*.py") if CHAPTER.match(p.name)]
    return sorted(files, key=lambda p: (-p.stat().st_size, p.name))


@dataclass
class Preexecution:
    """What one pre-execution did: chapters run, found already cached, and failed (with tracebacks)."""

    executed: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed


def _run_one(data):
    """Execute one chapter into the cache, in a pool worker (a forked process).

    jupyter-cache 1.0.1 trims the cache after storing each execution (``truncate_caches``): it
    lists the records to keep, then, in a second query, every record not in that list, and
    deletes those. With two workers, a record the other worker adds between the two queries is
    deleted (before its notebook file exists: ``KeyError: Notebook file does not exist for cache
    record``; after: a fresh execution silently lost). So the workers do not trim; ``preexecute``
    trims once, after the pool.
    """
    from jupyter_cache.cache.main import JupyterCacheBase
    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc

    JupyterCacheBase.truncate_caches = lambda self: None  # this worker process only
    return ExecutionWorkerLocalMProc()(data)


def probe_memo(root: Path) -> Path:
    return Path(root) / "_build" / ".cache-probe.json"


def probe_cache(root: Path) -> dict[Path, int | None]:
    """``{chapter: primary key of its execution in the book's cache, or None}``.

    jupyter-cache matches a notebook by a hash of its code and kernel, which needs the chapter
    parsed (jupytext: about 2 s for the 27). The match is remembered in ``_build/.cache-probe.json``
    with the file's size and modification time and the record's hash key; a chapter whose file and
    record are both unchanged is not parsed again."""
    from jupyter_cache import get_cache

    files = chapter_files(root)
    if not (cache_path(root) / "global.db").exists():
        return dict.fromkeys(files)
    cache = get_cache(str(cache_path(root)))
    records = {r.pk: r.hashkey for r in cache.list_cache_records()}
    try:
        memo = json.loads(probe_memo(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    found: dict[Path, int | None] = {}
    for path in files:
        st = path.stat()
        seen = memo.get(path.name)
        if isinstance(seen, list) and len(seen) == 4 and seen[:2] == [st.st_size, st.st_mtime_ns] \
                and records.get(seen[2]) == seen[3]:
            found[path] = seen[2]
            continue
        import jupytext

        try:
            record = cache.match_cache_notebook(jupytext.read(path, fmt="py:percent"))
        except KeyError:
            found[path] = None
            memo.pop(path.name, None)
            continue
        found[path] = record.pk
        memo[path.name] = [st.st_size, st.st_mtime_ns, record.pk, record.hashkey]
    probe_memo(root).write_text(json.dumps(memo, indent=0) + "\n", encoding="utf-8")
    return found


def preexecute(root: Path = ROOT, jobs: int = 2, timeout: int = 60,
               probed: dict[Path, int | None] | None = None) -> Preexecution:
    """Execute every chapter not already in the cache, ``jobs`` at a time, into the book's cache.

    myst-nb's own project records are cleared first (they name the reader Sphinx used; the cache's
    executed notebooks are kept), then each chapter the cache lacks (``probed``, else
    ``probe_cache``) is added with the jupytext reader and executed.
    """
    from jupyter_cache import get_cache
    from jupyter_cache.cache.db import NbProjectRecord
    from jupyter_cache.executors.basic import ProcessData

    start = time.monotonic()
    probed = probe_cache(root) if probed is None else probed
    cache = get_cache(str(cache_path(root)))
    for record in cache.list_project_records():
        cache.remove_nb_from_project(record.pk)
    files = chapter_files(root)
    result = Preexecution(cached=[p.name for p in files if probed.get(p) is not None])
    order = [cache.add_nb_to_project(str(p.resolve()), read_data=JUPYTEXT_READER)
             for p in files if probed.get(p) is None]
    NbProjectRecord.remove_tracebacks([r.pk for r in order], cache.db)
    if order:
        # jupyter-cache's workers log through multiprocessing's logger at a custom level; quiet it.
        multiprocessing.get_logger().setLevel(logging.WARNING)
        context = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
        with context.Pool(max(1, min(jobs, len(order)))) as pool:
            jobs_data = [ProcessData(r.pk, r.uri, cache, timeout, False) for r in order]
            outcomes = list(pool.imap_unordered(_run_one, jobs_data, chunksize=1))
        cache.truncate_caches()  # once, with no worker writing (see _run_one)
        for code, uri in outcomes:
            name = Path(uri).name
            if code == 0:
                result.executed.append(name)
            else:
                record = cache.get_project_record(uri)
                result.failed[name] = record.traceback or (
                    "jupyter-cache could not run this notebook (no traceback recorded)")
    result.seconds = time.monotonic() - start
    return result


# ---------------------------------------------------------------- nothing changed

# What the pages are made from: a change to any file here, to the interpreter or its installed
# packages, to the slime source settings or to the jupyter cache means the book is built again.
INPUT_DIRS = ("notebooks", "book", "locale", "lab_snippets")
INPUT_FILES = ("_config.yml", "_toc.yml", "requirements.txt")
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints"}


def stamp_path(root: Path) -> Path:
    return Path(root) / "_build" / ".bookbuild-stamp"


def input_fingerprint(root: Path, editions: tuple[str, ...]) -> str:
    """A hash of the build's inputs as the file system describes them (path, size, modification
    time; nothing is read), of the settings, and of the jupyter cache's database file."""
    root = Path(root)
    digest = hashlib.sha256()
    paths = [root / name for name in INPUT_FILES]
    for folder in INPUT_DIRS:
        paths += [p for p in (root / folder).rglob("*") if not SKIP_PARTS & set(p.parts)]
    purelib = Path(sysconfig.get_paths()["purelib"])  # its time changes when packages are installed
    paths += [cache_path(root) / "global.db", purelib]
    for path in sorted(paths):
        try:
            st = path.stat()
        except OSError:
            digest.update(f"{path}: missing\n".encode())
            continue
        if path.is_file() or path == purelib:
            digest.update(f"{path.relative_to(root) if path.is_relative_to(root) else path}: "
                          f"{st.st_size} {st.st_mtime_ns}\n".encode())
    settings = [sys.executable, sys.version, *editions,
                *(f"{k}={os.environ.get(k, '')}" for k in ("SLIME_SRC", "SLIME_OFFLINE"))]
    digest.update("\n".join(settings).encode())
    return digest.hexdigest()


def outputs_exist(root: Path, editions: tuple[str, ...]) -> bool:
    html = Path(root) / "_build" / "html"
    return (html / "index.html").is_file() and ("zh_CN" not in editions or (published_zh(root) / "index.html").is_file())


def up_to_date(root: Path, editions: tuple[str, ...]) -> bool:
    """True when the last successful build had exactly these inputs and its pages are still there.

    Pages whose quote fell back are never up to date while a download is allowed (not
    ``SLIME_OFFLINE=1``): the build tries to get slime's files again."""
    stamp = stamp_path(root)
    if not (stamp.is_file() and outputs_exist(root, editions)):
        return False
    if os.environ.get("SLIME_OFFLINE") != "1" and any(
            c["fallback"] or c["mismatch"] for c in quote_counts(Path(root) / "_build" / "html").values()):
        return False
    return stamp.read_text(encoding="utf-8").strip() == input_fingerprint(root, editions)


def record_build(root: Path, editions: tuple[str, ...]) -> None:
    stamp_path(root).write_text(input_fingerprint(root, editions) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- slime quotes


def quote_log(root: Path) -> Path:
    return Path(root) / "_build" / "slime_quotes.jsonl"


def prepare_quotes(log=print, registry=None) -> str:
    """Make the pinned slime files readable for the chapters' kernels; how: ``src``, ``cache``,
    ``fetched`` or ``none`` (no source: the quotes fall back)."""
    from lab_snippets import sites

    if os.environ.get("SLIME_SRC"):
        return "src"
    registry = registry or sites.load_registry(strict=False)
    resolver = sites.Resolver(registry)
    paths = sorted({site.path for site in registry.sites})
    if paths and all(resolver.cache_file(path).is_file() for path in paths):
        return "cache"
    if not resolver.network_allowed():
        return "none"
    out = io.StringIO()
    from lab_snippets.sites.admin import cmd_fetch

    status = cmd_fetch(registry, out=out)
    log(f"slime quotes: fetched the pinned files into {sites.cache_root() / registry.commit} "
        f"({out.getvalue().strip().splitlines()[-1] if out.getvalue().strip() else 'no output'})")
    return "fetched" if status == 0 else "none"


def drop_stale_fallbacks(root: Path, probed: dict[Path, int | None] | None = None) -> list[str]:
    """Remove cached executions whose quote fell back, so those chapters run again with the source
    (and mark them uncached in ``probed``, when given)."""
    from jupyter_cache import get_cache

    if not (cache_path(root) / "global.db").exists():
        return []
    probed = probe_cache(root) if probed is None else probed
    cache = get_cache(str(cache_path(root)))
    pages = quote_counts(Path(root) / "_build" / "html")
    dropped = []
    for path, pk in probed.items():
        page = pages.get(path.stem)
        if page is not None and not page["fallback"]:
            continue  # its page shows the quote: no need to open the cached notebook
        if pk is not None and "slime-fallback" in json.dumps(cache.get_cache_bundle(pk).nb.cells):
            cache.remove_cache(pk)
            probed[path] = None
            dropped.append(path.name)
    return dropped


QUOTE_CLASS = re.compile(r'class="slime-quote( slime-(?:fallback|mismatch))?[ "]')


def quote_counts(html: Path) -> dict[str, dict[str, int]]:
    """``{chapter stem: {"ok": n, "fallback": n, "mismatch": n}}`` from the built chapter pages."""
    counts = {}
    for page in sorted((Path(html) / "notebooks").glob("*.html")):
        found = collections.Counter()
        for m in QUOTE_CLASS.finditer(page.read_text(encoding="utf-8", errors="replace")):
            found[(m.group(1) or " slime-ok").split("-")[-1]] += 1
        counts[page.stem] = {k: found.get(k, 0) for k in ("ok", "fallback", "mismatch")}
    return counts


def quote_summary(root: Path) -> str:
    """One line for the person building: how many quotes fell back, and why."""
    counts = quote_counts(Path(root) / "_build" / "html")
    total = sum(sum(c.values()) for c in counts.values())
    bad = {stem: c["fallback"] + c["mismatch"] for stem, c in counts.items() if c["fallback"] + c["mismatch"]}
    if not bad:
        return f"slime quotes: all {total} shown from slime's source"
    reasons: collections.Counter[str] = collections.Counter()
    log_file = quote_log(root)
    latest = {}
    if log_file.exists():
        for line in log_file.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            latest[entry.get("site")] = entry
    chapters = {stem[:2] for stem in bad}
    for entry in latest.values():
        if entry.get("chapter") in chapters:
            reasons[entry.get("reason", "?")] += 1
    why = reasons.most_common(1)[0][0] if reasons else "not recorded (the pages came from an earlier build's cache)"
    return (f"slime quotes: {sum(bad.values())} of {total} fell back to the permalink in {len(bad)} chapters "
            f"(why: {why}); to quote them, set SLIME_SRC to a slime clone or build with network access")


JB_ARGS = ("build", "-W", "-n", "--keep-going")


def render_command(root: Path, edition: str) -> list[str]:
    """The command that renders one edition from the cache, in its own process: ``jupyter-book
    build -W -n --keep-going`` for English, ``build_zh`` for Chinese. Both go through this module,
    so that the package's import skips jsonschema's 3 s ``rfc3987_syntax`` grammar first."""
    return [sys.executable, "-m", "lab_snippets.book.bookbuild", "--render", edition, str(root)]


def render(root: Path, edition: str) -> int:
    """Render one edition in this process (``--render``): exit status."""
    if edition == "zh_CN":
        return build_zh(root, log=lambda text: print(text, file=sys.stderr, flush=True))
    from jupyter_book.cli.main import main as jupyter_book

    try:
        jupyter_book([*JB_ARGS, str(root)], standalone_mode=False)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 1
    return 0


def render_editions(root: Path, editions: tuple[str, ...], side_by_side: bool,
                    timeout: float = 3600) -> dict[str, tuple[int, float]]:
    """Render the editions, each in its own process: ``{edition: (exit status, seconds)}``.

    Side by side (two Sphinx processes at once) once every chapter is in the cache: both only read
    it, and each writes to its own folders (``_build/html``; ``_build/zh_CN``). Otherwise one after
    the other, English first, since a chapter missing from the cache is executed and stored by the
    English build. Each edition gets ``timeout`` seconds; one over it is killed and fails."""
    procs: dict[str, tuple[subprocess.Popen, float]] = {}
    results: dict[str, tuple[int, float]] = {}

    def wait_all() -> None:  # each edition's time is taken when its own process ends
        while procs:
            time.sleep(0.05)
            for edition, (proc, started) in list(procs.items()):
                code = proc.poll()
                if code is None and time.monotonic() - started > timeout:
                    proc.kill()
                    proc.wait(timeout=30)
                    code = 124
                if code is not None:
                    results[edition] = (code, time.monotonic() - started)
                    del procs[edition]

    for edition in editions:
        sys.stdout.flush()
        procs[edition] = (subprocess.Popen(render_command(root, edition), cwd=root), time.monotonic())
        if not side_by_side:
            wait_all()
            if results[edition][0] != 0:
                break
    wait_all()
    return results


ZH_TITLE = "Python 并发：从 slime 读起"


def zh_output(root: Path) -> Path:
    """Where the Chinese edition is built (its own doctrees and jupyter_execute beside it); it is then
    copied to ``_build/html/zh_CN`` so that both editions are published together."""
    return Path(root) / "_build" / "zh_CN" / "html"


def published_zh(root: Path) -> Path:
    return Path(root) / "_build" / "html" / "zh_CN"


# The one toc text that is no page's message (the link text of each part's overview page).
ZH_TOC_TITLES = {"Part overview": "本部分概览"}


def zh_toc(root: Path) -> Path:
    """``_toc.yml`` with its captions and titles in Chinese, for the Chinese edition.

    sphinx-external-toc adds the toctrees (and their captions) after Sphinx has translated the
    page, so the sidebar's part captions would stay English; they are translated here instead,
    from the catalogues (the root page's catalogue holds each caption as a message)."""
    from lab_snippets.book.i18n import translation_memory

    memory = {**translation_memory(root), **ZH_TOC_TITLES}

    def swap(m):
        return f'{m.group(1)}"{memory.get(m.group(2), m.group(2))}"'

    text = re.sub(r'^(\s*(?:-\s*)?(?:caption|title):\s*)"([^"]*)"', swap,
                  (Path(root) / "_toc.yml").read_text(encoding="utf-8"), flags=re.M)
    out = Path(root) / "_build" / "zh_CN" / "_toc.yml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


def build_zh(root: Path = ROOT, log=print) -> int:
    """Build the Chinese edition from the catalogues in ``locale/`` and the shared jupyter cache:
    every chapter page comes from the executions the English build stored (the cache key covers
    code, which both editions share), so nothing runs again. Exit status (0: built and published)."""
    from jupyter_book.sphinx import build_sphinx

    from lab_snippets.book import zhsearch
    from lab_snippets.book.i18n import GETTEXT_SETTINGS, LANG, sphinx_overrides

    root = Path(root)
    out = zh_output(root)
    overrides = {
        **sphinx_overrides(root), **GETTEXT_SETTINGS,
        "external_toc_path": zh_toc(root).as_posix(),
        "language": LANG,
        "locale_dirs": [str(root / "locale")],
        "nb_execution_cache_path": str(cache_path(root)),  # the English build's cache, not one of its own
        "nitpicky": True,
        "html_title": ZH_TITLE,
        "html_theme_options": {"search_bar_text": "搜索本书……"},
        "html_search_options": zhsearch.search_options(root),  # the course's terms, kept whole by jieba
    }
    status = build_sphinx(root, out, noconfig=True, path_config=str(root / "_config.yml"),
                          confoverrides=overrides, builder="html", warningiserror=True, keep_going=True,
                          quiet=True)
    if status != 0:
        log(f"the Chinese edition was not built (sphinx status {status!r})")
        return 1
    from lab_snippets.book import zhnotebooks

    zhnotebooks.write_downloads(root, out)  # the chapters' .py and .ipynb downloads in Chinese
    target = published_zh(root)
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(out, target)
    return 0


def build(root: Path = ROOT, *, jobs: int = 2, timeout: int = 60, clean: bool = False,
          log=print, editions: tuple[str, ...] = ("en", "zh_CN")) -> int:
    """Build the book in ``root`` (pre-executing ``jobs`` at a time unless ``jobs`` is 1): exit status."""
    root = Path(root)
    if clean:
        shutil.rmtree(root / "_build", ignore_errors=True)
    (root / "_build").mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if up_to_date(root, editions):
        log(f"nothing changed since the last build: the pages are up to date (checked in "
            f"{time.monotonic() - started:.1f} s; {stamp_path(root).relative_to(root)} holds the inputs' fingerprint)")
        log(quote_summary(root))
        return 0
    stamp_path(root).unlink(missing_ok=True)
    os.environ["SLIME_READER_FALLBACK"] = "1"  # the kernels (children) inherit both
    os.environ["SLIME_QUOTE_LOG"] = str(quote_log(root))
    probed = probe_cache(root)
    if prepare_quotes(log) != "none":
        dropped = drop_stale_fallbacks(root, probed)
        if dropped:
            log(f"slime quotes: {len(dropped)} chapters cached without their quote run again")
    if jobs > 1:
        pre = preexecute(root, jobs=jobs, timeout=timeout, probed=probed)
        log(f"pre-executed {len(pre.executed)} chapters {jobs} at a time in {pre.seconds:.1f} s "
            f"({len(pre.cached)} already cached, {len(pre.failed)} failed)")
        if not pre.ok:
            for name, tb in sorted(pre.failed.items()):
                log(f"\n{name} failed:\n{tb.rstrip()}")
            log(f"\nthe book was not built: {len(pre.failed)} chapter(s) failed "
                f"({', '.join(sorted(pre.failed))})")
            return 1
    results = render_editions(root, tuple(e for e in ("en", "zh_CN") if e in editions),
                              side_by_side=jobs > 1)
    names = {"en": "English edition", "zh_CN": "Chinese edition"}
    for edition, (code, seconds) in results.items():
        if code == 0:
            log(f"{names[edition]} rendered in {seconds:.1f} s"
                + (f", from the same cache, at {published_zh(root).relative_to(root)}" if edition == "zh_CN" else ""))
        else:
            log(f"{names[edition]} failed (exit status {code}, after {seconds:.1f} s)")
    if "en" in results and results["en"][0] == 0:
        log(quote_summary(root))
    status = next((code for code, _ in results.values() if code != 0), 0)
    if status == 0:
        record_build(root, editions)
    return status


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab_snippets.book.bookbuild", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2, help="chapters executed at a time (default 2)")
    ap.add_argument("--serial", action="store_true", help="no pre-execution: the book runs each chapter")
    ap.add_argument("--clean", action="store_true", help="remove _build (and its cache) first")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per cell (default 60, as _config.yml)")
    ap.add_argument("--english-only", action="store_true", help="skip the Chinese edition")
    ap.add_argument("--render", choices=("en", "zh_CN"), help=argparse.SUPPRESS)  # one edition (internal)
    ap.add_argument("root", nargs="?", type=Path, default=ROOT, help="the book's folder (default: this repo)")
    args = ap.parse_args(argv)
    if args.render:
        return render(args.root, args.render)
    return build(args.root, jobs=1 if args.serial else args.jobs, timeout=args.timeout, clean=args.clean,
                 log=lambda text: print(text, flush=True),
                 editions=("en",) if args.english_only else ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main())
