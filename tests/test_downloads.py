"""The downloadable executed notebook keeps its outputs when the page came from the jupyter cache.

myst-nb 1.4.0 writes the input notebook (no outputs) to ``_build/jupyter_execute`` for a page
served from the cache; the download extension merges the outputs back from that cache.
"""

import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

from lab_snippets.book import pages


def _notebook(code: str, output: str | None = None) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(code)
    if output is not None:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
        cell.execution_count = 1
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), cell]
    return nb


def _cache_with_execution(tmp_path, code: str, output: str):
    src = tmp_path / "chapter.ipynb"
    nbformat.write(_notebook(code), src)
    cache = get_cache(str(tmp_path / "cache"))
    record = cache.add_nb_to_project(str(src))
    cache.cache_notebook_bundle(CacheBundleIn(_notebook(code, output), record.uri), check_validity=False)
    return tmp_path / "cache"


def test_outputs_are_merged_back_from_the_cache(tmp_path):
    cache_dir = _cache_with_execution(tmp_path, "print('hi')", "hi\n")
    written = nbformat.from_dict(_notebook("print('hi')"))  # what myst-nb writes for a cached page
    merged = pages.with_cached_outputs(dict(written), cache_dir)
    code = [c for c in merged["cells"] if c["cell_type"] == "code"]
    assert "".join(code[0]["outputs"][0]["text"]) == "hi\n" and code[0]["execution_count"] == 1
    assert merged["cells"][0]["source"] == "# Title", "the markdown cells come from the page's notebook"
    # the page's notebook is what is shown: removed cells still leave the download
    assert pages.page_notebook(merged)["cells"][1]["outputs"]


def test_a_notebook_whose_code_is_not_cached_is_left_as_it_is(tmp_path):
    cache_dir = _cache_with_execution(tmp_path, "print('hi')", "hi\n")
    other = dict(nbformat.from_dict(_notebook("print('changed')")))
    assert pages.with_cached_outputs(other, cache_dir) is other
    assert pages.with_cached_outputs(other, tmp_path / "no-cache-here") is other
    assert not (tmp_path / "no-cache-here").exists(), "looking must not create a cache"
