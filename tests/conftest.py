"""Fixtures shared by the book tests (tests/test_book.py, tests/test_browser.py): one build per run."""

import subprocess
import sys
from pathlib import Path

import pytest

from lab_snippets.book import chapters

HTML = chapters.ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def built_book():
    """Build the book as readers get it (`-W -n`: a warning or a failing cell fails the build), once."""
    jb = Path(sys.executable).with_name("jupyter-book")
    return subprocess.run([str(jb), "build", "-W", "-n", "--keep-going", str(chapters.ROOT)],
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="session")
def book_html(built_book):
    """The folder of the built HTML; fails (with the build's last lines) when the build failed."""
    tail = "\n".join((built_book.stdout + built_book.stderr).splitlines()[-40:])
    assert built_book.returncode == 0, f"jupyter-book build -W failed:\n{tail}"
    return HTML
