"""Alias kept for the documented command ``python -m lab_snippets.chapters toc|check``.

The chapter table and the Sphinx extension live in :mod:`lab_snippets.book.chapters`.
"""

from lab_snippets.book.chapters import *  # noqa: F403
from lab_snippets.book.chapters import CHAPTERS, main  # noqa: F401
