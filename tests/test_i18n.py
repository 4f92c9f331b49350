"""The Chinese edition's catalogues: complete, current with the English, markup intact (issue 19).

The checks of the tooling run on small catalogues written here; the checks of the real catalogues
fail while any page of the zh edition has a fuzzy or untranslated message, or when the English
has changed since the catalogues were last updated (`python -m lab_snippets.book.i18n update`).
"""

from __future__ import annotations

import pytest
from babel.messages.catalog import Catalog

from lab_snippets.book import editions, i18n


def _catalog(tmp_path, messages):
    catalog = Catalog(locale=i18n.LANG)
    for english, chinese, fuzzy in messages:
        catalog.add(english, chinese, flags=("fuzzy",) if fuzzy else ())
    path = tmp_path / "page.po"
    i18n.write_po(catalog, path)
    return path


# ----------------------------------------------------------------------------- the tooling


@pytest.mark.parametrize("text", ["`asyncio.gather`", "`a` · `b`", "01 · 4 of 4"[:2],
                                  "slime/utils/http_utils.py",
                                  "[`x`](https://example.org/a)", "*await：等待结果，不等于自动并发*",
                                  "{doc}`../notebooks/01_async_def`", "{ref}`05b <site-05b>`"])
def test_nothing_to_translate(text):
    assert i18n.nothing_to_translate(text)


@pytest.mark.parametrize("text", ["Summary", "`gather` keeps the order", "**Predict.** Does it run?",
                                  # a link's title, not code (19 links of chapter_map shown in English)
                                  "{ref}`All locations <inventory-asyncio-syntax>`"])
def test_prose_is_to_be_translated(text):
    assert not i18n.nothing_to_translate(text)


def test_markup_problems_name_what_was_lost():
    source = "Call `asyncio.gather` (see [the docs](https://x.org/a)) and **wait**, {term}`event loop`."
    good = "调用 `asyncio.gather`（见[文档](https://x.org/a)），然后**等待**，{term}`event loop`。"
    assert i18n.markup_problems(source, good) == []
    lost_code = good.replace("`asyncio.gather`", "asyncio.gather")
    assert any("code spans differ" in p for p in i18n.markup_problems(source, lost_code))
    moved_link = good.replace("https://x.org/a", "https://x.org/b")
    assert any("link targets differ" in p for p in i18n.markup_problems(source, moved_link))
    lost_role = good.replace("{term}`event loop`", "`event loop`")
    assert any("roles differ" in p for p in i18n.markup_problems(source, lost_role))
    lost_bold = good.replace("**等待**", "等待")
    assert any("'**'" in p for p in i18n.markup_problems(source, lost_bold))
    assert any("left in English" in p for p in i18n.markup_problems("Summary", "Summary"))
    assert i18n.markup_problems("Summary", "Summary", english_ok=True) == []


def test_export_then_apply_fills_by_stable_numbers(tmp_path):
    path = _catalog(tmp_path, [("Summary", "", False), ("`x`", "`x`", False), ("In slime", "", False)])
    todo = i18n.export(path)
    assert "=== 1\nSummary" in todo and "=== 3\nIn slime" in todo and "=== 2" not in todo
    assert i18n.apply(path, "=== 3\n在 slime 中\n") == []
    assert i18n.apply(path, "=== 1\n小结\n") == []
    strings = {m.id: m.string for m in i18n.read_po(path) if m.id}
    assert strings == {"Summary": "小结", "`x`": "`x`", "In slime": "在 slime 中"}


def test_apply_reports_lost_markup_and_unknown_numbers(tmp_path):
    path = _catalog(tmp_path, [("Use `gather`.", "", False)])
    problems = i18n.apply(path, "=== 1\n使用 gather。\n\n=== 9\n多余\n")
    assert any(p.startswith("=== 1: code spans differ") for p in problems)
    assert any(p.startswith("=== 9: no such message") for p in problems)


def test_fuzzy_and_empty_count_as_not_done(tmp_path):
    path = _catalog(tmp_path, [("Summary", "小结", False), ("Old text", "旧译文", True), ("New", "", False)])
    status = i18n.page_status(tmp_path, path)
    assert (status.translated, status.fuzzy, status.untranslated) == (1, 1, 1)
    assert not status.complete


def test_site_texts_are_replaced_only_when_the_translation_is_current():
    from lab_snippets.sites import markup

    body = (f'{markup.title_open("02")}The title</span>'
            f'{markup.explanation_open("02")}Old &amp; English</div>'
            f'{markup.explanation_open("03")}Changed English</div>'
            f'{markup.explanation_open("04")}Use <code>gather</code>.</div>'
            f'{markup.explanation_open("05")}Not on the record</div>')
    records = [markup.record("02", "02", "ok", [], "The title", "Old & English"),
               markup.record("03", "03", "ok", [], "", "Changed English"),
               markup.record("04", "04", "fallback", ["offline"], "", "Use `gather`.")]
    translations = {("04", "explanation"): ("Use `gather`.", "使用 `gather`。"),
                    ("02", "title"): ("The title", "标题"),
                    ("02", "explanation"): ("Old & English", "旧的解释"),
                    ("03", "explanation"): ("English before the change", "过时的译文"),
                    ("05", "explanation"): ("Not on the record", "没有记录")}
    out, replaced = editions.translate_sites(body, translations, records)
    assert replaced == 3
    assert "使用 <code>gather</code>。" in out, "code spans of a translation are shown as code"
    assert ">标题</span>" in out and ">旧的解释</div>" in out
    assert ">Changed English</div>" in out, "a translation of an older English text must not be shown"
    assert ">Not on the record</div>" in out, "only the boxes the page's records name are translated"
    assert editions.translate_sites(body, translations, []) == (body, 0), "no record, no translation"


def test_the_zh_extension_reads_the_records_of_the_executed_page(tmp_path):
    from types import SimpleNamespace

    import nbformat

    from lab_snippets.sites import markup

    record = markup.record("02", "02", "ok", [], "The title", "")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("")])
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<div></div>"},
                                                  metadata={markup.META_KEY: [record]})]
    (tmp_path / "jupyter_execute" / "notebooks").mkdir(parents=True)
    nbformat.write(nb, tmp_path / "jupyter_execute" / "notebooks" / "02_await.ipynb")
    config = SimpleNamespace(execution_cache_path=str(tmp_path / "no-cache"))
    app = SimpleNamespace(env=SimpleNamespace(mystnb_config=config), outdir=str(tmp_path / "html"))
    assert editions.page_records(app, "notebooks/02_await") == [record]
    assert editions.page_records(app, "notebooks/03_tasks") == []


@pytest.mark.parametrize(("page", "chinese", "href"), [
    ("book/intro", False, "../zh_CN/book/intro.html"),
    ("notebooks/02_await", True, "../../notebooks/02_await.html"),
    ("index", False, "zh_CN/index.html"),
])
def test_edition_links_point_to_the_same_page(page, chinese, href):
    assert editions.other_edition_href(page, chinese) == href


# ----------------------------------------------------------------------------- the real catalogues


def test_every_catalogue_is_complete_and_keeps_its_markup():
    statuses = i18n.all_status()
    assert len(statuses) > 60, "catalogues are missing (run `python -m lab_snippets.book.i18n update`)"
    incomplete = [f"{s.page}: {s.fuzzy} fuzzy, {s.untranslated} untranslated"
                  for s in statuses if not s.complete]
    assert incomplete == [], ("pages of the zh edition still show English (translate them: "
                              "`python -m lab_snippets.book.i18n export <po>`):\n" + "\n".join(incomplete))
    problems = [f"{s.page}: {p}" for s in statuses for p in s.problems]
    assert problems == [], "translations that lost markup:\n" + "\n".join(problems[:30])


def test_translation_status_page_is_in_step():
    expected = i18n.render_report(i18n.all_status())
    assert i18n.report_path().read_text(encoding="utf-8") == expected, (
        "book/reference/translation_status.md is stale: run `python -m lab_snippets.book.i18n report`")


@pytest.mark.slow
def test_catalogues_hold_every_message_of_the_current_english(tmp_path):
    problems = i18n.in_step_problems(pot=i18n.extract(out=tmp_path / "gettext"))
    assert problems == [], ("the English changed since the catalogues were updated; run "
                            "`python -m lab_snippets.book.i18n update`, then translate:\n"
                            + "\n".join(problems))


def test_bold_that_does_not_close_is_a_problem():
    # CommonMark: a closing "**" right after punctuation must be followed by a space or punctuation
    assert any("rendered spans differ" in p
               for p in i18n.markup_problems("**Predict.** Next", "**预测。**接下来"))
    assert i18n.markup_problems("**Predict.** Next", "**预测。** 接下来") == []
    assert i18n.markup_problems("**Predict.** Next", "**预测**。接下来") == []


def test_a_chapter_title_reads_the_same_in_every_catalogue():
    from lab_snippets.book.chapters import CHAPTERS

    titles = {f"{c.number} · {c.title}" for c in CHAPTERS}
    seen: dict[str, set[str]] = {}
    for path in i18n._all_catalogues(i18n.ROOT):
        for message in i18n._messages(i18n.read_po(path)):
            if message.id in titles and message.string and not message.fuzzy:
                seen.setdefault(message.id, set()).add(message.string)
    differing = {title: sorted(found) for title, found in seen.items() if len(found) > 1}
    assert differing == {}, f"chapter titles translated differently on different pages: {differing}"


def test_chinese_search_indexes_the_same_words_with_its_terms_in_a_set():
    from sphinx.search.zh import SearchChinese

    text = ("取消与超时 asyncio.wait_for raises TimeoutError; the GIL and the API of "
            "run_in_executor 线程池 IO CPU ok")
    ours, theirs = editions.chinese_search_language()({}), SearchChinese({})
    SearchChinese.latin_terms = []  # Sphinx 7.4 keeps them on the class: start it empty
    assert isinstance(ours.latin_terms, set), "the Latin terms must be kept in a set"
    words = ours.split(text)
    assert words == theirs.split(text), "splitting must not change"
    assert [ours.stem(w) for w in words] == [theirs.stem(w) for w in words], \
        "stemming must give the same words as Sphinx's own Chinese search"
    assert {"API", "GIL", "CPU"} <= set(ours.latin_terms)


# ----------------------------------------------------------------------------- zh search (issue 26)


def test_search_dictionary_is_in_step_with_terms_and_titles():
    from lab_snippets.book import zhsearch

    path = zhsearch.dictionary_path(i18n.ROOT)
    assert path.read_text(encoding="utf-8") == zhsearch.render(i18n.ROOT), (
        f"{path.name} is out of step with TERMS.md or the chapter titles: "
        "run `python -m lab_snippets.book.i18n update`")
    assert {"线程池", "进程组", "守护线程", "僵尸进程", "卡死", "进程生命周期"} <= zhsearch.read_words(path)


def test_every_term_names_a_page_that_exists_and_uses_it():
    """TERMS.md's third column: each word's teaching page exists, and its catalogue uses the word
    (a page that never writes 上下文变量 cannot be found by it)."""
    from lab_snippets.book import zhsearch

    problems = []
    for term in zhsearch.terms(i18n.ROOT):
        for word, page in zip(term.words, term.pages, strict=True):
            po = i18n.pages_dir(i18n.ROOT) / f"{page}.po"
            if not po.exists():
                problems.append(f"{word}: no page {page}")
            elif not any(word in m.string for m in i18n._messages(i18n.read_po(po))):
                problems.append(f"{word}: {page} never uses it")
    assert problems == []


def test_chinese_search_keeps_the_course_terms_whole():
    """With the user dictionary, the compounds are words of the index; without it jieba cuts them
    (线程池 → 线程 + 池, and Sphinx drops the lone 池). One-character terms (锁) are kept."""
    from lab_snippets.book import zhsearch

    language = editions.chinese_search_language()(zhsearch.search_options(i18n.ROOT))
    text = "关闭线程池时，守护线程不会被等待；整个进程组收到信号，僵尸进程被回收，程序不再卡死。锁是互斥的。"
    kept = {w for w in language.split(text) if language.word_filter(language.stem(w))}
    assert {"线程池", "守护线程", "进程组", "僵尸进程", "卡死", "锁"} <= kept, sorted(kept)
    assert not language.word_filter("池"), "a lone character that is no term stays out of the index"


def test_one_name_for_the_chinese_book():
    """The page title the build gives the zh edition (sidebar, browser tab) is the translation of the
    book's English name (the introduction's H1, the home link): one name, not two."""
    from lab_snippets.book import bookbuild

    english = "Python concurrency, read through slime"
    assert english in (i18n.ROOT / "_config.yml").read_text(encoding="utf-8")
    names = {m.string for path in i18n._all_catalogues(i18n.ROOT) for m in i18n._messages(i18n.read_po(path))
             if m.id == english}
    assert names == {bookbuild.ZH_TITLE}, f"the book is called {sorted(names)} and {bookbuild.ZH_TITLE!r}"


def test_zh_chapter_titles_are_the_original_series_titles():
    """A zh chapter's title (its H1, the sidebar, every table that names it) is ``NN · `` and the
    original series' title (chapters 22-27: the course's own Chinese title, as Part V says)."""
    from lab_snippets.book.chapters import CHAPTERS

    wrong = []
    for path in i18n._all_catalogues(i18n.ROOT):
        for message in i18n._messages(i18n.read_po(path)):
            for c in CHAPTERS:
                if message.id == f"{c.number} · {c.title}" and message.string != f"{c.number} · {c.original}":
                    wrong.append(f"{path.stem}: {message.string!r} (original: {c.original!r})")
    assert wrong == []


def test_the_zh_extension_takes_the_records_from_the_cache_when_the_page_came_from_it(tmp_path):
    """myst-nb's jupyter_execute copy of a page taken from the cache has no outputs."""
    from types import SimpleNamespace

    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    from lab_snippets.sites import markup

    record = markup.record("02", "02", "ok", [], "The title", "")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("show_call_site('02')")])
    written = tmp_path / "jupyter_execute" / "notebooks" / "02_await.ipynb"
    written.parent.mkdir(parents=True)
    nbformat.write(nb, written)  # as myst-nb leaves it: no outputs
    source = tmp_path / "02_await.ipynb"
    nbformat.write(nb, source)
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<div></div>"},
                                                  metadata={markup.META_KEY: [record]})]
    cache = get_cache(str(tmp_path / "cache"))
    uri = cache.add_nb_to_project(str(source)).uri
    cache.cache_notebook_bundle(CacheBundleIn(nb, uri), check_validity=False, overwrite=True)
    config = SimpleNamespace(execution_cache_path=str(tmp_path / "cache"))
    app = SimpleNamespace(env=SimpleNamespace(mystnb_config=config), outdir=str(tmp_path / "html"))
    assert editions.page_records(app, "notebooks/02_await") == [record]
