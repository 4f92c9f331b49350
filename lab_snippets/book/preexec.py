"""Pre-execution: the chapters run ``jobs`` at a time into the book's jupyter cache (see ``bookbuild``)."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lab_snippets import REPO_ROOT, figlang
from lab_snippets.book import chapters
from lab_snippets.book.chapters import cache_path  # noqa: F401 (re-exported: quotes, stamp, zh)
from lab_snippets.testing.ipckernel import ipc_kernel_manager

ROOT = REPO_ROOT
# jupyter-cache's reader for text notebooks; it reads py:percent files as myst-nb's custom format
# does (jupytext), so the cache key (code cells and kernelspec) is the same for both.
JUPYTEXT_READER = {"name": "jupytext", "type": "plugin"}
#: A cell tag: this experiment compares one core with two (threads against processes), so its chapter
#: runs with no other kernel beside it, in the build and in `.ci/test`'s serial phase; beside a second
#: chapter on a two-core machine its page showed processes no faster than threads (chapters 12 and 24,
#: readers 17-3 and 17-2). The tag is read from the notebook's text: it changes no grading digest.
NEEDS_CORES = "needs-cores"
_NEEDS_CORES = re.compile(r'^# %%.*\btags=\[[^\]]*"' + NEEDS_CORES + '"', re.M)


def needs_the_cores(path: Path) -> bool:
    """Whether a cell of the chapter at ``path`` is tagged ``needs-cores`` (see ``NEEDS_CORES``)."""
    try:
        return bool(_NEEDS_CORES.search(Path(path).read_text(encoding="utf-8")))
    except OSError:
        return False


def runs_by_itself(path: Path) -> bool:
    """A chapter that shares the machine with no other kernel: a Ray chapter (``chapters.runs_alone``)
    or one whose experiment needs the cores (``needs_the_cores``)."""
    return chapters.runs_alone(Path(path)) or needs_the_cores(path)


def chapter_files(root: Path) -> list[Path]:
    """The chapter notebooks, largest first (a rough proxy for the longest running, so that the last
    chapters to start are short ones and the two workers finish close together). A chapter whose
    package is not installed for this Python (``chapters.missing_package``: Ray on 3.15) is left out:
    it is not executed (``pages`` keeps myst-nb from trying), and its page shows its code and its note."""
    files = [p for p in chapters.files_in(root)  # the chapter table's, not whatever matches a file name
             if not chapters.missing_package(p)]
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
    from jupyter_cache.executors import utils
    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc

    JupyterCacheBase.truncate_caches = lambda self: None  # this worker process only
    utils.executenb = execute_over_ipc  # this worker process only: jupyter-cache takes no client options
    os.environ[figlang.ENV] = "zh_CN"  # each figure also drawn in Chinese for the zh edition (figlang)
    return ExecutionWorkerLocalMProc()(data)


def execute_over_ipc(nb, **kwargs):
    """``nbclient.execute`` with ``ipc_kernel_manager``'s kernels (jupyter-cache's ``executenb``)."""
    from nbclient import execute

    kwargs.setdefault("kernel_manager_class", ipc_kernel_manager())
    return execute(nb, **kwargs)


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


def batches(records: list, jobs: int) -> list[tuple[list, int]]:
    """The records to execute as (batch, workers) pairs, in turn: first every chapter that may share
    the machine, ``jobs`` at a time; then the chapters that need it to themselves
    (``runs_by_itself``: the Ray chapters and those tagged ``needs-cores``), one at a time, with no
    other kernel beside them."""
    alone = [r for r in records if runs_by_itself(Path(r.uri))]
    shared = [r for r in records if r not in alone]
    out = [(shared, max(1, min(jobs, len(shared))))] if shared else []
    return out + ([(alone, 1)] if alone else [])


def preexecute(root: Path = ROOT, jobs: int = 2, timeout: int = 60,
               probed: dict[Path, int | None] | None = None) -> Preexecution:
    """Execute every chapter not already in the cache, ``jobs`` at a time (the chapters that run
    alone after the others, one at a time: ``batches``), into the book's cache.

    myst-nb's own project records are cleared first (they name the reader Sphinx used; the cache's
    executed notebooks are kept), then each chapter the cache lacks (``probed``, else
    ``probe_cache``) is added with the jupytext reader and executed.
    """
    from jupyter_cache import get_cache
    from jupyter_cache.cache.db import NbProjectRecord
    from jupyter_cache.executors.basic import ProcessData

    start = time.monotonic()
    probed = probe_cache(root) if probed is None else probed
    from lab_snippets.book.zhfigures import stale_records

    stale = stale_records(root)  # executions whose Chinese figures would now be drawn differently
    probed = {path: None if pk in stale else pk for path, pk in probed.items()}
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
        outcomes = []
        for batch, width in batches(order, jobs):
            with context.Pool(width) as pool:
                jobs_data = [ProcessData(r.pk, r.uri, cache, timeout, False) for r in batch]
                outcomes += list(pool.imap_unordered(_run_one, jobs_data, chunksize=1))
        cache.truncate_caches()  # once, with no worker writing (see _run_one)
        for code, uri in outcomes:
            name = Path(uri).name
            if code == 0:
                result.executed.append(name)
            else:
                record = cache.get_project_record(uri)
                result.failed[name] = record.traceback or (
                    "jupyter-cache could not run this notebook (no traceback recorded)")
    from lab_snippets.book.zhfigures import remember_figure_words

    remember_figure_words(root)  # how figures.po translated each execution's figure words
    result.seconds = time.monotonic() - start
    return result
