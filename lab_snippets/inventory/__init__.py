"""Source inventory: every static use of a concurrency mechanism in a Python tree.

The scanner reads a tree of ``.py`` files (a directory, or a git repository at a
commit, read through git without a checkout), parses each file with the standard
library :mod:`ast`, resolves imports and aliases per scope, and records every
occurrence of a concurrency mechanism: its category, full dotted API name, kind
(``call`` or a non-call kind), path, line and enclosing qualified symbol.

A static occurrence is not a run count: a line inside a loop counts once, a line
that never runs counts too.

Command line::

    python -m lab_snippets.inventory scan [PATH] [--commit C] --json OUT
    python -m lab_snippets.inventory render JSON --out book/reference
    python -m lab_snippets.inventory regenerate

``PATH`` defaults to the ``SLIME_SRC`` environment variable. ``regenerate`` scans
``SLIME_SRC`` at the pinned commit and renders the book pages.

Modules: ``rules`` (categories, the API-to-chapter map), ``scanner`` (one file), ``sources``
(directories, git at a commit, the JSON), ``render`` (the book pages), ``cli``.
"""

from __future__ import annotations

from lab_snippets.inventory.cli import main, pinned_commit, slime_src, write_pages
from lab_snippets.inventory.render import default_notebooks_dir, render_pages
from lab_snippets.inventory.rules import (
    CATEGORIES,
    CHAPTER_BY_NUM,
    CHAPTER_RULES,
    JSON_NAME,
    PAGE_NAMES,
    REGENERATE_HINT,
    SLIME_REPO_URL,
    chapters_for,
)
from lab_snippets.inventory.scanner import scan_source
from lab_snippets.inventory.sources import InventoryError, dump_json, load_json, scan_tree, source_files

__all__ = [
    "CATEGORIES", "CHAPTER_BY_NUM", "CHAPTER_RULES", "JSON_NAME", "PAGE_NAMES", "REGENERATE_HINT",
    "SLIME_REPO_URL", "InventoryError", "chapters_for", "default_notebooks_dir", "dump_json",
    "load_json", "main", "pinned_commit", "render_pages", "scan_source", "scan_tree", "slime_src",
    "source_files", "write_pages",
]
