"""Alias kept for the documented command ``python -m lab_snippets.chapters toc|check``.

The chapter table lives in :mod:`lab_snippets.book.chapters` (the Sphinx extension for the chapter
pages in :mod:`lab_snippets.book.pages`).
"""

from lab_snippets.book.chapters import *  # noqa: F403
from lab_snippets.book.chapters import CHAPTERS, main  # noqa: F401
