"""Build the book the way readers get it, and check it makes no request outside the machine.

Run with: pytest -m book -p no:xdist   (the README's test command does).
"""

import re

import pytest

from lab_snippets.book import chapters

pytestmark = pytest.mark.book
HTML = chapters.ROOT / "_build" / "html"
# Attributes and CSS that make a browser fetch something by itself (links a reader clicks are fine).
FETCHING = [
    re.compile(r"<script[^>]*\bsrc=[\"']((?:https?:)?//[^\"']+)", re.I),
    re.compile(r"<link[^>]*\bhref=[\"']((?:https?:)?//[^\"']+)", re.I),
    re.compile(r"<(?:img|iframe|source|video|audio|embed)[^>]*\bsrc=[\"']((?:https?:)?//[^\"']+)", re.I),
    re.compile(r"url\(\s*[\"']?((?:https?:)?//[^)\"']+)", re.I),
    re.compile(r"@import\s+[\"']((?:https?:)?//[^\"']+)", re.I),
]

# Sphinx's own warnings ("path: WARNING: ..."); kernels started for execution log "[IPKernelApp] WARNING".
SPHINX_WARNING = re.compile(r"^(?!\[IPKernelApp\]).*\bWARNING\b", re.M)


def test_book_builds_without_warnings(built_book):
    tail = "\n".join((built_book.stdout + built_book.stderr).splitlines()[-40:])
    assert built_book.returncode == 0, f"jupyter-book build -W failed:\n{tail}"
    warnings = SPHINX_WARNING.findall(built_book.stdout + built_book.stderr)
    assert warnings == [], "\n".join(warnings[:20])


def test_every_chapter_page_is_built(built_book):
    for chapter in chapters.existing():
        page = HTML / "notebooks" / f"{chapter.stem}.html"
        assert page.exists(), page
        text = page.read_text(encoding="utf-8")
        assert "slime-quote" in text, f"{page.name}: the slime section (quote or fallback) is missing"
        assert "BEGIN HIDDEN TESTS" not in text, f"{page.name}: hidden tests must not be shown"


def test_html_fetches_nothing_from_outside(built_book):
    offenders = []
    for path in list(HTML.rglob("*.html")) + list(HTML.rglob("*.css")) + list(HTML.rglob("*.js")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in FETCHING:
            for url in pattern.findall(text):
                offenders.append(f"{path.relative_to(HTML)}: {url}")
    assert offenders == [], "the built book would load these from the network:\n" + "\n".join(offenders[:30])


def test_downloaded_notebooks_keep_their_outputs(built_book):
    """The executed .ipynb offered for download has outputs, also when its page came from the cache
    (myst-nb 1.4.0 writes the input notebook then; lab_snippets.chapters merges the outputs back)."""
    import json

    for chapter in chapters.existing():
        path = HTML / "_sources" / "notebooks" / f"{chapter.stem}.ipynb"
        assert path.exists(), path
        cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        assert cells[-1].get("outputs"), f"{path.name}: the last cell (the slime quote) has no output"
