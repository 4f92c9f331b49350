"""lab_snippets.book.bookbuild: the chapters pre-executed into the book's jupyter cache, the quotes'
summary."""

import sys

import jupytext
import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

from lab_snippets.book import bookbuild
from lab_snippets.sites import markup

CHAPTER = "# %%\nprint({name!r})\n"
OFFLINE = "SLIME_OFFLINE=1, so no download"


def quote_output(*statuses, reason=OFFLINE, html="<div>a box</div>"):
    """A call-site output as show_call_site leaves it: its HTML, and one record per box on its metadata."""
    records = [markup.record(f"s{i}", "01", status, [] if status == "ok" else [reason])
               for i, status in enumerate(statuses)]
    return nbformat.v4.new_output("display_data", data={"text/html": html},
                                  metadata={markup.META_KEY: records})


def _cached(root, name, *outputs, code=CHAPTER):
    path = root / "notebooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != code.format(name=name):  # keep its mtime when unchanged
        path.write_text(code.format(name=name))
    nb = jupytext.read(path, fmt="py:percent")
    nb.cells[-1].outputs = list(outputs)
    cache = get_cache(str(bookbuild.cache_path(root)))
    record = cache.add_nb_to_project(str(path), read_data=bookbuild.JUPYTEXT_READER)
    cache.cache_notebook_bundle(CacheBundleIn(nb, record.uri), check_validity=False, overwrite=True)
    return path


def test_chapters_cached_with_a_fallback_run_again(tmp_path):
    _cached(tmp_path, "01_async_def.py", quote_output("fallback"))
    _cached(tmp_path, "02_await.py", quote_output("ok"))
    _cached(tmp_path, "03_tasks_gather.py", quote_output("ok", "error"))  # an error box is a fallback too
    assert sorted(bookbuild.drop_stale_fallbacks(tmp_path)) == ["01_async_def.py", "03_tasks_gather.py"]
    cache = get_cache(str(bookbuild.cache_path(tmp_path)))
    assert len(cache.list_cache_records()) == 1
    assert bookbuild.drop_stale_fallbacks(tmp_path / "nothing-here") == []


def test_the_fallback_check_reads_the_record_not_the_html(tmp_path):
    _cached(tmp_path, "01_async_def.py", quote_output("fallback", html='<div class="slime-quote">'))
    _cached(tmp_path, "02_await.py", quote_output("ok", html='<div class="slime-quote slime-fallback">'))
    assert bookbuild.drop_stale_fallbacks(tmp_path) == ["01_async_def.py"]


def test_without_a_source_only_executions_without_records_run_again(tmp_path):
    _cached(tmp_path, "01_async_def.py", quote_output("fallback"))
    old = nbformat.v4.new_output("display_data", data={"text/html": '<div class="slime-quote">'})
    _cached(tmp_path, "02_await.py", old, code="# %%\nshow_call_site({name!r})\n")  # an older lab_snippets
    plain = nbformat.v4.new_output("display_data", data={"text/html": "<p>none</p>"})
    _cached(tmp_path, "03_tasks_gather.py", plain)
    assert bookbuild.drop_stale_fallbacks(tmp_path, fallbacks=False) == ["02_await.py"]


def test_quote_summary_counts_records_and_names_the_reason(tmp_path):
    _cached(tmp_path, "01_async_def.py", quote_output("ok"))
    _cached(tmp_path, "14_back_to_slime.py", quote_output("fallback", "fallback"),
            quote_output("mismatch", reason="moved"))
    assert bookbuild.quote_counts(tmp_path) == {
        "01_async_def": {"ok": 1, "fallback": 0, "mismatch": 0},
        "14_back_to_slime": {"ok": 0, "fallback": 2, "mismatch": 1}}
    line = bookbuild.quote_summary(tmp_path)
    assert "\n" not in line
    assert line.startswith("slime quotes: 3 of 4 fell back to the permalink in 1 chapters")
    assert f"why: {OFFLINE}" in line and "SLIME_SRC" in line
    _cached(tmp_path, "14_back_to_slime.py", quote_output("ok"))
    assert bookbuild.quote_summary(tmp_path) == "slime quotes: all 2 shown from slime's source"


def test_pages_are_read_again_when_their_notebook_was_executed_again(tmp_path):
    from types import SimpleNamespace

    from lab_snippets.book import pages

    path = _cached(tmp_path, "01_async_def.py", quote_output("ok", html="<p>old</p>"))
    cache_dir = bookbuild.cache_path(tmp_path)
    (first,) = get_cache(str(cache_dir)).list_cache_records()
    used = first.created.timestamp()
    env = SimpleNamespace(
        found_docs={"notebooks/01_async_def", "notebooks/02_await", "intro"},
        nb_metadata={"notebooks/01_async_def": {"exec_data": {"mtime": used}},
                     "notebooks/02_await": {"exec_data": {"mtime": used}}},
        doc2path=lambda doc: str(tmp_path / f"{doc}.py"),
        mystnb_config=SimpleNamespace(execution_cache_path=str(cache_dir)))
    app = SimpleNamespace(env=env, outdir=str(tmp_path / "_build" / "html"))
    assert pages.latest_executions(cache_dir) == {str(path.resolve()): used}
    assert pages._reexecuted_pages(app, env, set(), set(), set()) == []
    # the same code executed again (bookbuild drops a cached fallback and runs the chapter again)
    bookbuild.drop_stale_fallbacks(tmp_path)  # nothing to drop: no fallback in it
    get_cache(str(cache_dir)).remove_cache(first.pk)
    _cached(tmp_path, "01_async_def.py", quote_output("ok"))
    assert pages.latest_executions(cache_dir)[str(path.resolve())] > used
    assert pages._reexecuted_pages(app, env, set(), set(), set()) == ["notebooks/01_async_def"]
    # a page Sphinx reads anyway is not listed twice; without a cache nothing is outdated
    assert pages._reexecuted_pages(app, env, set(), {"notebooks/01_async_def"}, set()) == []
    env.mystnb_config.execution_cache_path = str(tmp_path / "none")
    assert pages._reexecuted_pages(app, env, set(), set(), set()) == []


def _recorder(tmp_path, behaviour):
    """A stand-in for render_command: each edition appends its start and end to a log."""
    log = tmp_path / "renders.log"

    def command(root, edition):
        code = (f"import sys, time; open({str(log)!r}, 'a').write('start {edition}\\n'); "
                f"{behaviour.get(edition, 'time.sleep(0.5)')}; "
                f"open({str(log)!r}, 'a').write('end {edition}\\n')")
        return [sys.executable, "-c", code]

    return log, command


def test_editions_render_side_by_side_only_after_preexecution(tmp_path, monkeypatch):
    log, command = _recorder(tmp_path, {})
    monkeypatch.setattr(bookbuild, "render_command", command)
    results = bookbuild.render_editions(tmp_path, ("en", "zh_CN"), side_by_side=True)
    assert {e: code for e, (code, _) in results.items()} == {"en": 0, "zh_CN": 0}
    events = log.read_text().split("\n")[:4]
    assert events[:2] in (["start en", "start zh_CN"], ["start zh_CN", "start en"]), \
        f"side by side, both editions must start before either ends: {events}"
    log.unlink()
    bookbuild.render_editions(tmp_path, ("en", "zh_CN"), side_by_side=False)
    assert log.read_text().split() == ["start", "en", "end", "en", "start", "zh_CN", "end", "zh_CN"], \
        "one after the other, English must finish before Chinese starts"


def test_a_failed_or_hung_edition_fails_the_build(tmp_path, monkeypatch):
    log, command = _recorder(tmp_path, {"en": "sys.exit(3)", "zh_CN": "time.sleep(30)"})
    monkeypatch.setattr(bookbuild, "render_command", command)
    results = bookbuild.render_editions(tmp_path, ("en", "zh_CN"), side_by_side=False)
    assert results["en"][0] == 3 and "zh_CN" not in results, "after English fails, Chinese must not start"
    results = bookbuild.render_editions(tmp_path, ("en", "zh_CN"), side_by_side=True, timeout=2)
    assert results["en"][0] == 3
    assert results["zh_CN"][0] == 124 and results["zh_CN"][1] < 20, \
        "a hung edition must be killed at its timeout"


def _built(root, quote="ok"):
    for name in ("notebooks/01_async_def.py", "book/intro.md", "_config.yml", "_toc.yml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    pages = root / "_build" / "html"
    (pages / "zh_CN").mkdir(parents=True)
    (pages / "notebooks").mkdir()
    (pages / "index.html").write_text("en")
    (pages / "zh_CN" / "index.html").write_text("zh")
    (pages / "notebooks" / "01_async_def.html").write_text("<div>a box</div>")
    _cached(root, "01_async_def.py", quote_output(quote))


def test_a_rebuild_with_nothing_changed_is_skipped_and_any_change_rebuilds(tmp_path, monkeypatch):
    import os

    both = ("en", "zh_CN")
    monkeypatch.setenv("SLIME_SRC", "/somewhere/slime")
    _built(tmp_path)
    assert not bookbuild.up_to_date(tmp_path, both), "no stamp: never built here"
    bookbuild.record_build(tmp_path, both)
    assert bookbuild.up_to_date(tmp_path, both)
    assert not bookbuild.up_to_date(tmp_path, ("en",)), "other editions asked for"
    chapter = tmp_path / "notebooks" / "01_async_def.py"
    chapter.write_text("changed")
    assert not bookbuild.up_to_date(tmp_path, both), "an edited chapter must be built again"
    bookbuild.record_build(tmp_path, both)
    (tmp_path / "locale" / "zh_CN").mkdir(parents=True)
    (tmp_path / "locale" / "zh_CN" / "new.po").write_text("")
    assert not bookbuild.up_to_date(tmp_path, both), "a new catalogue must be built"
    bookbuild.record_build(tmp_path, both)
    monkeypatch.setenv("SLIME_SRC", "/elsewhere")
    assert not bookbuild.up_to_date(tmp_path, both), "another slime source must be built"
    bookbuild.record_build(tmp_path, both)
    os.utime(chapter, ns=(1, 1))
    assert not bookbuild.up_to_date(tmp_path, both), "a changed modification time must be built"
    bookbuild.record_build(tmp_path, both)
    (tmp_path / "_build" / "html" / "zh_CN" / "index.html").unlink()
    assert not bookbuild.up_to_date(tmp_path, both), "a missing edition must be built"


def test_pages_with_a_fallback_quote_are_built_again_unless_offline(tmp_path, monkeypatch):
    both = ("en", "zh_CN")
    monkeypatch.delenv("SLIME_OFFLINE", raising=False)
    _built(tmp_path)
    bookbuild.record_build(tmp_path, both)
    assert bookbuild.up_to_date(tmp_path, both)
    _cached(tmp_path, "01_async_def.py", quote_output("fallback"))
    bookbuild.record_build(tmp_path, both)  # the same inputs: only the cached quote's status differs
    assert not bookbuild.up_to_date(tmp_path, both), "the build must try to get slime's files again"
    monkeypatch.setenv("SLIME_OFFLINE", "1")
    bookbuild.record_build(tmp_path, both)
    assert bookbuild.up_to_date(tmp_path, both), "offline, a fallback page is as good as it gets"


def test_the_cache_probe_parses_a_chapter_again_only_when_it_or_its_record_changed(tmp_path, monkeypatch):
    import os

    import jupytext as jupytext_module

    chapter = _cached(tmp_path, "01_async_def.py", quote_output("ok", html="<p>x</p>"))
    (first,) = bookbuild.probe_cache(tmp_path).values()
    assert first is not None
    parsed = []
    real_read = jupytext_module.read
    monkeypatch.setattr(jupytext_module, "read", lambda *a, **k: parsed.append(a[0]) or real_read(*a, **k))
    assert list(bookbuild.probe_cache(tmp_path).values()) == [first] and parsed == [], \
        "an unchanged chapter with an unchanged record must not be parsed again"
    os.utime(chapter, ns=(1, 1))
    assert list(bookbuild.probe_cache(tmp_path).values()) == [first] and len(parsed) == 1, \
        "a chapter whose file changed must be parsed again"
    get_cache(str(bookbuild.cache_path(tmp_path))).remove_cache(first)
    assert list(bookbuild.probe_cache(tmp_path).values()) == [None], "a removed execution must not be found"
    bookbuild.probe_memo(tmp_path).write_text("not json")
    assert list(bookbuild.probe_cache(tmp_path).values()) == [None], "a broken memo is ignored"


def test_the_build_kernels_talk_over_unix_sockets_so_none_warns_of_plain_tcp(capfd):
    """A build kernel over TCP logs 'Kernel is running over TCP without encryption' once per chapter
    (29 lines in .ci/build's output); the pre-execution's kernels use IPC transport and say nothing.
    Counterfactual: the same notebook through plain ``nbclient.execute`` prints the warning."""
    from nbclient import execute

    from lab_snippets.book import preexec

    def run(executor):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(40 + 2)")])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        executor(nb, cwd=str(sys.prefix), timeout=120)
        return nb.cells[0].outputs[0]["text"], capfd.readouterr().err

    text, err = run(preexec.execute_over_ipc)
    assert text == "42\n" and "without encryption" not in err, err
    text, err = run(execute)
    assert text == "42\n" and "without encryption" in err, "the counterfactual no longer warns"


TINY = '''# %%
import os
print("one", flush=True)
print("two")

# %%
from IPython.display import HTML, display
display(HTML("<b>shown</b>"))
os.environ.get("COURSE_FIGURE_EDITIONS")

# %% tags=["raises-exception"]
raise ValueError("expected")

# %%
6 * 7
'''


def _outputs_in_short(nb):
    """Per code cell, as the book shows it (``nb_merge_streams: true`` in _config.yml: consecutive
    prints to one stream are one block): each output's type, stream name and text, error name,
    mime types and plain text."""
    def short(out):
        data = out.get("data", {})
        return [out.output_type, out.get("name"), out.get("text"), out.get("ename"),
                tuple(sorted(data)), data.get("text/plain")]
    cells = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        shown = []
        for out in map(short, cell.outputs):
            if shown and out[0] == "stream" and shown[-1][:2] == out[:2]:
                shown[-1][2] += out[2]
            else:
                shown.append(out)
        cells.append(shown)
    return cells


def test_a_chapter_that_passed_nbval_is_in_the_book_cache_as_the_build_would_execute_it(tmp_path):
    """``.ci/test --book-cache``: a chapter whose every cell passed under nbval is in the book's cache,
    found by the build's own probe (same key), with the outputs a plain nbclient execution in the
    build's kernel environment gives (a differential test); a chapter with a failing cell is not
    stored. Counterfactuals: outputs cut by nbval's message loop or a missing book environment
    (the figures' second edition) differ from nbclient's; storing every chapter keeps the broken one."""
    import os
    import subprocess
    from unittest import mock

    from lab_snippets.book.preexec import execute_over_ipc
    from lab_snippets.testing.nbplugin import BOOK_KERNEL_ENV

    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "01_tiny.py").write_text(TINY, encoding="utf-8")
    (folder / "02_broken.py").write_text("# %%\nprint('before')\n\n# %%\n1 / 0\n", encoding="utf-8")
    cache_dir = tmp_path / "_build" / ".jupyter_cache"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "lab_snippets.testing.nbplugin", "--nbval-lax",
         "--nbval-current-env", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tmp_path),
         "-q", "--book-cache", str(cache_dir), str(folder)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert "1 failed" in run.stdout, run.stdout[-2000:]  # 02's second cell, and nothing else
    cache = get_cache(str(cache_dir))
    assert [r.uri for r in cache.list_cache_records()] == [str(folder / "01_tiny.py")], (
        "only the chapter whose every cell passed is stored")
    record = cache.match_cache_notebook(jupytext.read(folder / "01_tiny.py", fmt="py:percent"))
    stored = cache.get_cache_bundle(record.pk).nb
    env = {**os.environ, **BOOK_KERNEL_ENV}
    with mock.patch.dict(os.environ, env):  # the build's executor (preexec), in its environment
        reference = execute_over_ipc(jupytext.read(folder / "01_tiny.py", fmt="py:percent"),
                                     cwd=str(folder))
    assert _outputs_in_short(stored) == _outputs_in_short(reference)
    assert _outputs_in_short(stored)[1][-1][-1] == "'zh_CN'", "the kernel had the book's environment"
    assert stored.metadata["language_info"]["name"] == "python"


def test_a_change_to_the_sphinx_tooling_renders_every_page_again(tmp_path):
    """Sphinx re-reads only the sources it sees changed, so a fix in ``lab_snippets/book`` (the
    alt text of figures, session 18) reached no page of an incremental build. Counterfactuals:
    doctrees kept after a tooling change; doctrees removed on every build (no incremental build)."""
    from lab_snippets.book import bookbuild

    tool = tmp_path / "lab_snippets" / "book" / "figalt.py"
    tool.parent.mkdir(parents=True)
    tool.write_text("ALT = 1\n")
    trees = [tmp_path / "_build" / ".doctrees", tmp_path / "_build" / "zh_CN" / ".doctrees"]

    def make_trees():
        for folder in trees:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "environment.pickle").write_bytes(b"x")

    make_trees()
    assert bookbuild.forget_pages_of_old_tooling(tmp_path) and not any(t.exists() for t in trees)
    make_trees()
    assert not bookbuild.forget_pages_of_old_tooling(tmp_path) and all(t.exists() for t in trees)
    tool.write_text("ALT = 2\n")
    assert bookbuild.forget_pages_of_old_tooling(tmp_path) and not any(t.exists() for t in trees)


SITES = """[meta]
repo = "THUDM/slime"
commit = "624b824a898ab0ec1fcb4d373004c7f3852bf515"

[[site]]
id = "01"
chapter = "01"
title = "a title"
path = "slime/x.py"
start = 1
end = 2
symbol = "f"
anchor = "f("
sha256 = "{sha}"
explanation = \"\"\"{explanation}\"\"\"
"""


def test_a_page_whose_call_site_text_changed_runs_again(tmp_path):
    # the record of an execution holds the English title and explanation the box showed; the Chinese
    # edition translates what sites.toml says now, so an old box would stay English on the zh page
    registry = tmp_path / "lab_snippets" / "sites.toml"
    registry.parent.mkdir(parents=True)
    registry.write_text(SITES.format(sha="0" * 64, explanation="what it does"))
    shown = markup.record("01", "01", "ok", [], "a title", "what it does")
    out = nbformat.v4.new_output("display_data", data={"text/html": "<div>a box</div>"},
                                 metadata={markup.META_KEY: [shown]})
    _cached(tmp_path, "01_async_def.py", out)
    assert bookbuild.drop_stale_fallbacks(tmp_path) == []  # the same text: kept
    registry.write_text(SITES.format(sha="0" * 64, explanation="what it does, said better"))
    assert bookbuild.drop_stale_fallbacks(tmp_path) == ["01_async_def.py"]
