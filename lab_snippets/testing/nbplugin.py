"""pytest plugin: run chapter notebooks (jupytext py:percent files) through nbval, under the leak audit.

The repository's root ``conftest.py`` loads it; elsewhere use ``pytest -p lab_snippets.testing.nbplugin``.

nbval collects only ``.ipynb`` files. Here every ``notebooks/NN_slug.py`` is read with
jupytext and handed to nbval's own collector, so

    pytest --nbval-lax notebooks/01_async_def.py

runs one chapter, and plain ``pytest`` runs all of them. Each notebook gets its own
temporary directory (``TMPDIR``) and an audit marker in its kernel's environment; a
first cell records what exists and a last cell fails if the notebook left a thread,
process, task, socket, file descriptor or temporary file behind (``lab_snippets.testing.audit``).

With ``--book-cache DIR`` (``.ci/test`` gives the book's ``_build/.jupyter_cache``), a chapter whose
every cell passed is stored there with the outputs nbval collected, as the book build's own
pre-execution would store it (``lab_snippets.book.preexec``): the build then renders those pages
from the cache and executes nothing a second time (``book_cache_entry``).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import tempfile
import time
import uuid
import warnings
from collections import defaultdict
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags

NOTEBOOK_NAME = re.compile(r"^\d\d_[a-z0-9_]+\.py$")
AUDIT_START = "import lab_snippets.testing.audit as _lab_audit\n_lab_audit.start();"
AUDIT_FINISH = "_lab_audit.finish()"


def is_chapter_notebook(path: Path) -> bool:
    return path.parent.name == "notebooks" and NOTEBOOK_NAME.match(path.name) is not None


def read_chapter(path: Path) -> nbformat.NotebookNode:
    """A chapter as a notebook, with the audit cells around it."""
    nb = jupytext.read(path, fmt="py:percent")
    nb.cells.insert(0, nbformat.v4.new_code_cell(AUDIT_START, metadata={"tags": ["leak-audit"]}))
    nb.cells.append(nbformat.v4.new_code_cell(AUDIT_FINISH, metadata={"tags": ["leak-audit"]}))
    return nb


class ChapterNotebook(IPyNbFile):
    """nbval's notebook collector, reading a jupytext ``.py`` file instead of an ``.ipynb``."""

    def setup(self):
        self._tmpdir = tempfile.mkdtemp(prefix=f"nb-{self.path.stem}-")
        self._started = time.monotonic()
        self._complete = True  # until a cell fails or is skipped (pytest_runtest_makereport)
        book_env = BOOK_KERNEL_ENV if self.config.getoption("book_cache", None) else {}
        self._saved_env = {k: os.environ.get(k)
                           for k in ("TMPDIR", "LAB_AUDIT_ID", "MPLBACKEND", *book_env)}
        os.environ["TMPDIR"] = self._tmpdir
        os.environ["LAB_AUDIT_ID"] = uuid.uuid4().hex
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        os.environ.update(book_env)
        try:
            super().setup()
        finally:
            for key, value in self._saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def teardown(self):
        try:
            super().teardown()
        finally:
            shutil.rmtree(getattr(self, "_tmpdir", ""), ignore_errors=True)
        folder = self.config.getoption("book_cache", None)
        if folder and getattr(self, "_complete", False):
            outputs = [cell.test_outputs for cell in self._cells if cell.name.startswith("Cell ")]
            if all(out is not None for out in outputs):
                store_in_book_cache(Path(folder), self.path, outputs,
                                    time.monotonic() - self._started)

    def collect(self):
        self.nb = read_chapter(self.path)
        self._cells = []
        cell_num = 0
        for cell in self.nb.cells:
            if cell.cell_type != "code":
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                options = defaultdict(bool, find_metadata_tags(cell.metadata))
                options.update(dict(find_comment_markers(cell.source)))
            options.setdefault("check", self.compare_outputs)
            tags = cell.metadata.get("tags", [])
            name = "leak audit" if "leak-audit" in tags else f"Cell {cell_num}"
            if name == "leak audit":
                name += " (start)" if cell_num == 0 else " (finish)"
            item = IPyNbCell.from_parent(self, name=name, cell_num=cell_num, cell=cell, options=options)
            self._cells.append(item)
            yield item
            cell_num += 1


# The kernel environment of the book's pre-execution (``preexec._run_one``, ``bookbuild.build``),
# given to a chapter's kernel when its run is stored for the book: each figure also drawn in
# Chinese, a slime quote that falls back showing the note for readers.
BOOK_KERNEL_ENV = {"COURSE_FIGURE_EDITIONS": "zh_CN", "SLIME_READER_FALLBACK": "1"}


def book_cache_entry(path: Path, outputs: list[list]) -> nbformat.NotebookNode:
    """The chapter as the book's pre-execution stores it: its code cells (jupytext's reading, the
    cache's key) with ``outputs[i]`` (nbval's, streams coalesced) and execution counts, and the
    kernel's ``language_info``."""
    nb = jupytext.read(path, fmt="py:percent")
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if len(code) != len(outputs):
        raise ValueError(f"{path.name}: {len(code)} code cells, {len(outputs)} outputs")
    for count, (cell, outs) in enumerate(zip(code, outputs, strict=True), start=1):
        cell.execution_count = count
        cell.outputs = [nbformat.from_dict(dict(out)) for out in outs]
        for out in cell.outputs:
            if out.output_type == "execute_result":
                out.execution_count = count
    nb.metadata["language_info"] = {
        "codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
        "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3", "version": platform.python_version()}
    return nb


def store_in_book_cache(folder: Path, path: Path, outputs: list[list], seconds: float) -> None:
    """Store a chapter that passed into the jupyter cache ``folder``, under a lock (two xdist
    workers may finish chapters together). The cache is not trimmed here: jupyter-cache 1.0.1's
    trim can delete a record another process is adding (``preexec._run_one``); the book build
    trims it once."""
    import fcntl

    from jupyter_cache import get_cache
    from jupyter_cache.cache.main import CacheBundleIn

    nb = book_cache_entry(path, outputs)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cache = get_cache(str(folder))
        cache.truncate_caches = lambda: None  # this object only
        cache.cache_notebook_bundle(
            CacheBundleIn(nb, str(Path(path).resolve()), data={"execution_seconds": seconds}),
            check_validity=False, overwrite=True)


def pytest_addoption(parser):
    parser.addoption("--book-cache", dest="book_cache", metavar="DIR", default=None,
                     help="store each chapter whose every cell passed, with its outputs, in the "
                          "book's jupyter cache DIR (.ci/test: _build/.jupyter_cache), so that the "
                          "book build does not execute it again")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A chapter with a cell that failed or was skipped is not stored for the book."""
    outcome = yield
    report = outcome.get_result()
    if isinstance(item, IPyNbCell) and (report.failed or report.skipped):
        item.parent._complete = False


def names_one_file(args: list[str]) -> bool:
    """Whether the command line's paths are all in one file (``notebooks/06_semaphore.py``,
    ``tests/test_x.py::test_y``): then there is nothing for a second worker to do."""
    files = {str(arg).split("::")[0] for arg in args}
    return len(files) == 1 and Path(next(iter(files))).is_file()


def names_one_chapter(args: list[str]) -> bool:
    """Whether the command line names one chapter notebook (``notebooks/28_ray_futures_actors.py``)."""
    return names_one_file(args) and is_chapter_notebook(Path(str(args[0]).split("::")[0]).resolve())


def marks_given(invocation_args) -> bool:
    """Whether the command line itself (not ``addopts``) selects by mark: ``-m EXPR``, ``-mEXPR``."""
    return any(str(a) == "-m" or (str(a).startswith("-m") and not str(a).startswith("--"))
               for a in invocation_args)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """One file runs in this process: ``addopts`` asks for two xdist workers (for the whole suite,
    ``--dist loadfile``), but starting two workers for one notebook only adds their start-up.

    One chapter named on the command line runs whatever its marks: ``addopts``' ``-m "not book and
    not serial"`` keeps the Ray chapters (``serial``) out of the suite's parallel phase, and would
    otherwise deselect every cell of ``pytest --nbval-lax notebooks/28_ray_futures_actors.py``.
    A ``-m`` typed on the command line itself is kept."""
    if getattr(config.option, "numprocesses", None) and names_one_file(config.args):
        config.option.numprocesses = 0
        config.option.dist = "no"
        config.option.tx = []
    if names_one_chapter(config.args) and not marks_given(config.invocation_params.args):
        config.option.markexpr = ""


def _wants_notebooks(config) -> bool:
    return bool(config.option.nbval or config.option.nbval_lax)


def chapter_node(parent, path: Path) -> ChapterNotebook:
    """The collector of one chapter; a chapter that needs the cores to itself (a Ray chapter,
    ``chapters.runs_alone``) is marked ``serial``, so that it runs in the serial phase of
    ``.ci/test``, with no second worker beside it (``-m serial`` runs it by hand). A chapter whose
    package is not installed here (``chapters.missing_package``: Ray on 3.15) is skipped with the reason."""
    from lab_snippets.book import chapters
    from lab_snippets.book.preexec import runs_by_itself

    node = ChapterNotebook.from_parent(parent, path=path)
    if runs_by_itself(path):  # a Ray chapter, or one tagged needs-cores
        node.add_marker(pytest.mark.serial)
    missing = chapters.missing_package(path)
    if missing:  # every cell skips, with the reason, and no kernel is started
        node.add_marker(pytest.mark.skip(reason=missing))
    return node


def pytest_collect_file(file_path: Path, parent):
    # A notebook named on the command line is collected by pytest_pycollect_makemodule below.
    if (_wants_notebooks(parent.config) and is_chapter_notebook(file_path)
            and not parent.session.isinitpath(file_path)):
        return chapter_node(parent, file_path)
    return None


def pytest_pycollect_makemodule(module_path: Path, parent):
    # pytest imports any .py file named on the command line as a test module; a chapter is a
    # notebook (top-level await is a SyntaxError in a module), so collect it as one instead.
    if is_chapter_notebook(module_path):
        if not _wants_notebooks(parent.config):
            raise pytest.UsageError(f"{module_path} is a notebook: run it with --nbval-lax")
        return chapter_node(parent, module_path)
    return None
