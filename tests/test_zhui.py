"""The Chinese edition's own words for what a reader acts on (lab_snippets.book.zhui, editions)."""

from __future__ import annotations

import re

from lab_snippets.book import editions, zhui


def test_theme_catalogue_is_chinese_and_mainland():
    words = zhui.catalogue()
    expected = {"Link to this heading", "Toggle primary sidebar", "Color mode", "Print to PDF", "Main"}
    assert expected <= set(words)
    for english, chinese in words.items():
        assert re.search(r"[\u4e00-\u9fff]", chinese), f"{english!r} is not translated"
    assert words["Print to PDF"] == "打印为 PDF", "mainland usage: 打印为 PDF, not 列印成 PDF"


def test_translate_html_changes_attributes_and_the_frame_not_the_article():
    words = {"Main": "全书导航", "Link to this heading": "链接到本节标题",
             "© Copyright %s.": "© %s 版权所有。"}
    page = ('<nav aria-label="Main">Main</nav><article class="bd-article"><h2>x'
            '<a title="Link to this heading">#</a></h2><code><span class="n">Main</span></code></article>'
            '<footer>© Copyright 2026.</footer>')
    out = zhui.translate_html(page, words)
    assert '<nav aria-label="全书导航">全书导航</nav>' in out
    assert 'title="链接到本节标题"' in out
    assert '<span class="n">Main</span>' in out, "a word of the article (here code) must stay as it is"
    assert "© 2026 版权所有。" in out


def test_switch_is_added_once_to_a_page_without_one():
    page = '<main><div class="bd-article-container"><div class="bd-search-container"></div></div></main>'
    out = zhui.add_switch("search", page, chinese=True)
    assert out.count('class="edition-switch"') == 1 and 'href="../search.html"' in out
    assert zhui.add_switch("search", out, chinese=True) == out


def test_call_site_link_and_fallback_note_in_chinese(monkeypatch):
    """A call-site box as a book built without slime's source renders it (the reader's fallback
    note and the GitHub link), turned Chinese by the zh edition."""
    from lab_snippets import sites
    from lab_snippets.sites.view import READER_FALLBACK_ENV, CallSiteView

    monkeypatch.setenv(READER_FALLBACK_ENV, "1")
    registry = sites.load_registry(strict=False)
    site = registry.sites[0]
    box = CallSiteView(registry, site, "fallback")._repr_html_()
    assert "built without slime" in box and "view these lines on GitHub" in box
    out = editions.translate_quote_words(box)
    assert "built without" not in out and "view these lines" not in out, out
    assert registry.short_commit in out and site.symbol in out
    assert "在 GitHub 上查看这几行代码" in out and "没有 slime 的源码" in out


def test_fold_labels_are_chinese_from_the_catalogue():
    """MyST-NB's fold labels, as its post-transform leaves them ("{type}" filled in English), read
    Chinese after ``fold_labels``; a label the catalogue lacks stays as it is."""
    from docutils import nodes
    from myst_nb.sphinx_ import HideCodeCellNode

    words = zhui.catalogue()
    doctree = nodes.document(None, None)
    for kind in ("source", "output", "outputs", "content"):
        doctree += HideCodeCellNode(prompt_show=f"Show code cell {kind}",
                                    prompt_hide=f"Hide code cell {kind}")
    doctree += HideCodeCellNode(prompt_show="Show no such fold", prompt_hide="Hide no such fold")
    assert zhui.fold_labels(doctree, words) == 8
    labels = [(n["prompt_show"], n["prompt_hide"]) for n in doctree.findall(HideCodeCellNode)]
    assert labels[0] == ("显示代码", "隐藏代码") and labels[3] == ("显示整个单元格", "隐藏整个单元格")
    assert all(re.search(r"[\u4e00-\u9fff]", s + h) and "code cell" not in s + h for s, h in labels[:4])
    assert labels[4] == ("Show no such fold", "Hide no such fold")


def test_a_cell_label_closes_with_the_same_words_in_both_editions():
    """A fold labelled by its cell ("Show the check") gets "Hide the check" (not MyST-NB's "Hide code
    cell content"), and in Chinese 显示检查 / 隐藏检查 from the one "Show" entry of the catalogue;
    MyST-NB's own labels are left alone by the pairing."""
    from docutils import nodes
    from myst_nb.sphinx_ import HideCodeCellNode

    doctree = nodes.document(None, None)
    doctree += HideCodeCellNode(prompt_show="Show the check", prompt_hide="Hide code cell content")
    doctree += HideCodeCellNode(prompt_show="Show code cell source", prompt_hide="Hide code cell source")
    assert zhui.pair_labels(doctree) == 1
    labels = [(n["prompt_show"], n["prompt_hide"]) for n in doctree.findall(HideCodeCellNode)]
    assert labels == [("Show the check", "Hide the check"),
                      ("Show code cell source", "Hide code cell source")]
    zhui.fold_labels(doctree, zhui.catalogue())
    labels = [(n["prompt_show"], n["prompt_hide"]) for n in doctree.findall(HideCodeCellNode)]
    assert labels[0] == ("显示检查", "隐藏检查"), labels[0]
