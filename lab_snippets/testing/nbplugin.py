"""pytest plugin: run chapter notebooks (jupytext py:percent files) through nbval, under the leak audit.

The repository's root ``conftest.py`` loads it; elsewhere use ``pytest -p lab_snippets.testing.nbplugin``.

nbval collects only ``.ipynb`` files. Here every ``notebooks/NN_slug.py`` is read with
jupytext and handed to nbval's own collector, so

    pytest --nbval-lax notebooks/01_async_def.py

runs one chapter, and plain ``pytest`` runs all of them. Each notebook gets its own
temporary directory (``TMPDIR``) and an audit marker in its kernel's environment; a
first cell records what exists and a last cell fails if the notebook left a thread,
process, task, socket, file descriptor or temporary file behind (``lab_snippets.testing.audit``).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
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
        self._saved_env = {k: os.environ.get(k) for k in ("TMPDIR", "LAB_AUDIT_ID", "MPLBACKEND")}
        os.environ["TMPDIR"] = self._tmpdir
        os.environ["LAB_AUDIT_ID"] = uuid.uuid4().hex
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
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

    def collect(self):
        self.nb = read_chapter(self.path)
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
            yield IPyNbCell.from_parent(self, name=name, cell_num=cell_num, cell=cell, options=options)
            cell_num += 1


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

    node = ChapterNotebook.from_parent(parent, path=path)
    if chapters.runs_alone(path):
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
