"""Build the book faster: run the chapters two at a time into the jupyter cache, then build from it.

    python -m lab_snippets.book.bookbuild            # pre-execute 2 at a time, then jupyter-book build -W -n
    python -m lab_snippets.book.bookbuild --serial   # as before: Sphinx runs each chapter in turn
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
(``python -m lab_snippets.sites fetch``); when that fetch fails, the kernels it starts are offline
(``SLIME_OFFLINE=1``, the reason in ``SLIME_OFFLINE_WHY``), so none waits for the same dead network
again. Without either, a quote falls back to a calm note for
readers (what the site is, its permalink, how to see it), and the build ends with one line saying
how many quotes fell back and why. A chapter cached with fallbacks is run again once a source is
there, so the published book gets the real lines. Each quote's status (site, status, reason) is read
from the record ``show_call_site`` put on its output's metadata (``lab_snippets.sites.markup``), in
the executions in the jupyter cache; a cached execution without such records (an older
lab_snippets) runs again.

The jobs live in modules of their own: ``preexec`` (the chapters into the jupyter cache), ``stamp``
(the input fingerprint), ``quotes`` (the slime quotes and their summary) and ``zh`` (the Chinese
edition); this module renders the editions, each in its own process, and runs the whole build.
Their public names are importable from here too.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from lab_snippets import REPO_ROOT
from lab_snippets.book.preexec import (
    JUPYTEXT_READER,
    Preexecution,
    cache_path,
    chapter_files,
    preexecute,
    probe_cache,
    probe_memo,
)
from lab_snippets.book.quotes import (
    cached_records,
    drop_stale_fallbacks,
    prepare_quotes,
    quote_counts,
    quote_summary,
)
from lab_snippets.book.stamp import (
    INPUT_DIRS,
    INPUT_FILES,
    SKIP_PARTS,
    input_fingerprint,
    outputs_exist,
    record_build,
    slime_settings,
    stamp_path,
    up_to_date,
)
from lab_snippets.book.zh import ZH_TITLE, ZH_TOC_TITLES, build_zh, published_zh, zh_output, zh_toc

__all__ = [
    "INPUT_DIRS", "INPUT_FILES", "JB_ARGS", "JUPYTEXT_READER", "ROOT", "SKIP_PARTS",
    "ZH_TITLE", "ZH_TOC_TITLES", "Preexecution", "build", "build_zh", "cache_path", "chapter_files",
    "cached_records", "drop_stale_fallbacks", "input_fingerprint", "main", "outputs_exist",
    "preexecute", "prepare_quotes",
    "probe_cache", "probe_memo", "published_zh", "quote_counts", "quote_summary", "record_build",
    "render", "render_command", "render_editions", "slime_settings", "stamp_path", "up_to_date", "zh_output",
    "zh_toc",
]

ROOT = REPO_ROOT


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


def tooling_digest(root: Path) -> str:
    """A hash of the Sphinx extensions' code (``lab_snippets/book``): what turns a cached doctree
    into a page (alt text, figure editions, folds) and that Sphinx itself does not watch."""
    digest = hashlib.sha256()
    for path in sorted((Path(root) / "lab_snippets" / "book").rglob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def forget_pages_of_old_tooling(root: Path) -> bool:
    """Remove the editions' saved doctrees when the tooling changed since they were made, so that
    Sphinx reads every page again (it re-reads only the sources it sees changed: a fix to the alt
    text of figures reached no page of an incremental build, session 18). True when it removed them."""
    build = Path(root) / "_build"
    mark, now = build / ".tooling-digest", tooling_digest(root)
    old = mark.read_text().strip() if mark.is_file() else None
    doctrees = [d for d in (build / ".doctrees", build / "zh_CN" / ".doctrees") if d.is_dir()]
    if old != now:
        for folder in doctrees:
            shutil.rmtree(folder, ignore_errors=True)
    build.mkdir(parents=True, exist_ok=True)
    mark.write_text(now + "\n")
    return old != now and bool(doctrees)


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
            f"{time.monotonic() - started:.1f} s; {stamp_path(root).relative_to(root)} holds the inputs' "
            "fingerprint)")
        log(quote_summary(root))
        return 0
    stamp_path(root).unlink(missing_ok=True)
    settings = slime_settings()  # as given: prepare_quotes may turn the kernels offline
    os.environ["SLIME_READER_FALLBACK"] = "1"  # the kernels (children) inherit it
    probed = probe_cache(root)
    # with a source, a cached fallback runs again; without one, only an execution without quote records
    have_source = prepare_quotes(log, kernel_env=os.environ) != "none"
    dropped = drop_stale_fallbacks(root, probed, fallbacks=have_source)
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
    if forget_pages_of_old_tooling(root):
        log("the book's Sphinx tooling (lab_snippets/book) changed: every page is rendered again")
    results = render_editions(root, tuple(e for e in ("en", "zh_CN") if e in editions),
                              side_by_side=jobs > 1)
    names = {"en": "English edition", "zh_CN": "Chinese edition"}
    for edition, (code, seconds) in results.items():
        if code == 0:
            log(f"{names[edition]} rendered in {seconds:.1f} s"
                + (f", from the same cache, at {published_zh(root).relative_to(root)}"
                   if edition == "zh_CN" else ""))
        else:
            log(f"{names[edition]} failed (exit status {code}, after {seconds:.1f} s)")
    if "en" in results and results["en"][0] == 0:
        log(quote_summary(root))
    status = next((code for code, _ in results.values() if code != 0), 0)
    if status == 0:
        record_build(root, editions, settings)
    return status


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab_snippets.book.bookbuild",
                                 description=__doc__.split("\n\n")[0],
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
