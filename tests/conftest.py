"""Fixtures shared by the book tests (tests/test_book.py, tests/test_browser.py): one build per run."""

import subprocess
import sys

import pytest

from lab_snippets.book import chapters

HTML = chapters.ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def built_book():
    """Build the book as `.ci/build` does (chapters pre-executed two at a time into the jupyter cache,
    then `jupyter-book build -W -n`: a warning or a failing cell fails the build), once."""
    return subprocess.run([sys.executable, "-m", "lab_snippets.book.bookbuild", str(chapters.ROOT)],
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="session")
def book_html(built_book):
    """The folder of the built HTML; fails (with the build's last lines) when the build failed."""
    tail = "\n".join((built_book.stdout + built_book.stderr).splitlines()[-40:])
    assert built_book.returncode == 0, f"jupyter-book build -W failed:\n{tail}"
    return HTML


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    """A fresh IPython shell per test module, no history, its own IPYTHONDIR (the guard's tests)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    ip = InteractiveShell.instance(config=config)
    yield ip
    InteractiveShell.clear_instance()
    mp.undo()
