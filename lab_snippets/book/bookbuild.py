"""Build the book faster: run the chapters two at a time into the jupyter cache, then build from it.

    python -m lab_snippets.book.bookbuild            # pre-execute (2 at a time), then jupyter-book build -W -n
    python -m lab_snippets.book.bookbuild --serial   # what the book did before: Sphinx runs each chapter in turn
    python -m lab_snippets.book.bookbuild --clean    # remove _build first (a clean build)
    python -m lab_snippets.book.bookbuild --english-only   # skip the Chinese edition

After the English edition, the Chinese one is rendered from the catalogues in ``locale/`` and the
same jupyter cache (nothing executes again) and published at ``_build/html/zh_CN``.

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
import io
import json
import logging
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
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


def preexecute(root: Path = ROOT, jobs: int = 2, timeout: int = 60) -> Preexecution:
    """Execute every chapter not already in the cache, ``jobs`` at a time, into the book's cache.

    myst-nb's own project records are cleared first (they name the reader Sphinx used; the cache's
    executed notebooks are kept), then each chapter is added with the jupytext reader.
    """
    from jupyter_cache import get_cache
    from jupyter_cache.cache.db import NbProjectRecord
    from jupyter_cache.executors.basic import ProcessData

    start = time.monotonic()
    cache = get_cache(str(cache_path(root)))
    for record in cache.list_project_records():
        cache.remove_nb_from_project(record.pk)
    files = chapter_files(root)
    for path in files:
        cache.add_nb_to_project(str(path.resolve()), read_data=JUPYTEXT_READER)
    todo = {r.uri: r for r in cache.list_unexecuted()}
    result = Preexecution(cached=[p.name for p in files if str(p.resolve()) not in todo])
    order = [todo[str(p.resolve())] for p in files if str(p.resolve()) in todo]
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


def drop_stale_fallbacks(root: Path) -> list[str]:
    """Remove cached executions whose quote fell back, so those chapters run again with the source."""
    from jupyter_cache import get_cache

    if not (cache_path(root) / "global.db").exists():
        return []
    import jupytext

    cache = get_cache(str(cache_path(root)))
    dropped = []
    for path in chapter_files(root):
        try:
            record = cache.match_cache_notebook(jupytext.read(path, fmt="py:percent"))
        except KeyError:
            continue
        if "slime-fallback" in json.dumps(cache.get_cache_bundle(record.pk).nb.cells):
            cache.remove_cache(record.pk)
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


def jupyter_book_command(root: Path) -> list[str]:
    jb = Path(sys.executable).with_name("jupyter-book")
    return [str(jb) if jb.exists() else "jupyter-book", "build", "-W", "-n", "--keep-going", str(root)]


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
    }
    status = build_sphinx(root, out, noconfig=True, path_config=str(root / "_config.yml"),
                          confoverrides=overrides, builder="html", warningiserror=True, keep_going=True,
                          quiet=True)
    if status != 0:
        log(f"the Chinese edition was not built (sphinx status {status!r})")
        return 1
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
    os.environ["SLIME_READER_FALLBACK"] = "1"  # the kernels (children) inherit both
    os.environ["SLIME_QUOTE_LOG"] = str(quote_log(root))
    if prepare_quotes(log) != "none":
        dropped = drop_stale_fallbacks(root)
        if dropped:
            log(f"slime quotes: {len(dropped)} chapters cached without their quote run again")
    if jobs > 1:
        pre = preexecute(root, jobs=jobs, timeout=timeout)
        log(f"pre-executed {len(pre.executed)} chapters {jobs} at a time in {pre.seconds:.1f} s "
            f"({len(pre.cached)} already cached, {len(pre.failed)} failed)")
        if not pre.ok:
            for name, tb in sorted(pre.failed.items()):
                log(f"\n{name} failed:\n{tb.rstrip()}")
            log(f"\nthe book was not built: {len(pre.failed)} chapter(s) failed "
                f"({', '.join(sorted(pre.failed))})")
            return 1
    sys.stdout.flush()
    started = time.monotonic()
    rc = subprocess.run(jupyter_book_command(root), cwd=root).returncode
    if rc != 0:
        return rc
    log(f"English edition rendered in {time.monotonic() - started:.1f} s")
    log(quote_summary(root))
    if "zh_CN" in editions:
        started = time.monotonic()
        rc = build_zh(root, log)
        if rc != 0:
            return rc
        log(f"Chinese edition rendered in {time.monotonic() - started:.1f} s, from the same cache, at "
            f"{published_zh(root).relative_to(root)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab_snippets.book.bookbuild", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2, help="chapters executed at a time (default 2)")
    ap.add_argument("--serial", action="store_true", help="no pre-execution: the book runs each chapter")
    ap.add_argument("--clean", action="store_true", help="remove _build (and its cache) first")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per cell (default 60, as _config.yml)")
    ap.add_argument("--english-only", action="store_true", help="skip the Chinese edition")
    ap.add_argument("root", nargs="?", type=Path, default=ROOT, help="the book's folder (default: this repo)")
    args = ap.parse_args(argv)
    return build(args.root, jobs=1 if args.serial else args.jobs, timeout=args.timeout, clean=args.clean,
                 log=lambda text: print(text, flush=True),
                 editions=("en",) if args.english_only else ("en", "zh_CN"))


if __name__ == "__main__":
    sys.exit(main())
