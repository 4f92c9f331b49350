"""lab_snippets.book.bookbuild: the chapters pre-executed into the book's jupyter cache, the quotes' summary."""

import json

import jupytext
import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

from lab_snippets.book import bookbuild

CHAPTER = "# %%\nprint({name!r})\n"


def _cached(root, name, html):
    path = root / "notebooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CHAPTER.format(name=name))
    nb = jupytext.read(path, fmt="py:percent")
    nb.cells[-1].outputs = [nbformat.v4.new_output("display_data", data={"text/html": html})]
    cache = get_cache(str(bookbuild.cache_path(root)))
    record = cache.add_nb_to_project(str(path), read_data=bookbuild.JUPYTEXT_READER)
    cache.cache_notebook_bundle(CacheBundleIn(nb, record.uri), check_validity=False, overwrite=True)
    return path


def test_chapters_cached_with_a_fallback_run_again(tmp_path):
    _cached(tmp_path, "01_a.py", '<div class="slime-quote slime-fallback">')
    _cached(tmp_path, "02_b.py", '<div class="slime-quote">')
    assert bookbuild.drop_stale_fallbacks(tmp_path) == ["01_a.py"]
    cache = get_cache(str(bookbuild.cache_path(tmp_path)))
    assert len(cache.list_cache_records()) == 1
    assert bookbuild.drop_stale_fallbacks(tmp_path / "nothing-here") == []


def test_quote_summary_counts_pages_and_names_the_reason(tmp_path):
    pages = tmp_path / "_build" / "html" / "notebooks"
    pages.mkdir(parents=True)
    (pages / "01_a.html").write_text('<div class="slime-quote" style="x">')
    (pages / "14_b.html").write_text('<div class="slime-quote slime-fallback" style="x">' * 2
                                     + '<div class="slime-quote slime-mismatch">')
    assert bookbuild.quote_counts(tmp_path / "_build" / "html") == {
        "01_a": {"ok": 1, "fallback": 0, "mismatch": 0}, "14_b": {"ok": 0, "fallback": 2, "mismatch": 1}}
    log = bookbuild.quote_log(tmp_path)
    log.write_text("\n".join(json.dumps(e) for e in [
        {"site": "14", "chapter": "14", "status": "fallback", "reason": "SLIME_OFFLINE=1, so no download"},
        {"site": "14b", "chapter": "14", "status": "fallback", "reason": "SLIME_OFFLINE=1, so no download"},
        {"site": "01", "chapter": "01", "status": "fallback", "reason": "old, since fixed"}]) + "\n")
    line = bookbuild.quote_summary(tmp_path)
    assert "\n" not in line
    assert line.startswith("slime quotes: 3 of 4 fell back to the permalink in 1 chapters")
    assert "why: SLIME_OFFLINE=1, so no download" in line and "SLIME_SRC" in line
    (pages / "14_b.html").write_text('<div class="slime-quote">')
    assert bookbuild.quote_summary(tmp_path) == "slime quotes: all 2 shown from slime's source"
