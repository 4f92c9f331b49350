"""The two editions of the book (English, and Chinese at ``zh_CN/``): a Sphinx extension.

Every page of each edition gets a link to the same page in the other edition, at the top of
the article. A Chinese chapter page's title is the original series' title, so the line under the
title that quotes it is left out, on the Chinese page and (unexplained there) on the English one.
In the Chinese edition the call-site boxes
of the chapters (rendered by
``lab_snippets.sites`` when the chapter ran, in English, since both editions share one execution)
get their Chinese title and explanation from ``locale/zh_CN/sites/<chapter>.po``; a translation
whose English is not the one the box shows (its record, on the executed notebook's output
metadata, says which) is not used: the English shows until it is translated again.
"""

from __future__ import annotations

import html
import re

from lab_snippets.book.cjk import is_chinese  # noqa: F401 (re-exported: zhui, pages, figalt)

ZH_FOLDER = "zh_CN"


def other_edition_href(pagename: str, chinese: bool) -> str:
    """The relative link from ``pagename`` of one edition to the same page of the other."""
    up = "../" * pagename.count("/")
    if chinese:
        return f"{up}../{pagename}.html"
    return f"{up}{ZH_FOLDER}/{pagename}.html"


def switch_html(pagename: str, chinese: bool) -> str:
    href = html.escape(other_edition_href(pagename, chinese))
    if chinese:
        label, lang, title = "English", "en", "阅读本页的英文版"
    else:
        label, lang, title = "中文版", "zh-CN", "阅读本页的中文版"
    return (f'<div class="edition-switch"><a class="edition-link" href="{href}" hreflang="{lang}" '
            f'lang="{lang}" title="{title}">{label}</a></div>\n')


def translate_sites(body: str, translations: dict, records: list[dict]) -> tuple[str, int]:
    """``body`` with each call site's title and explanation in Chinese where a current translation
    exists; and how many texts were replaced. ``records`` are the page's quote records (from its
    executed notebook): a translation is current when its English is the text the box shows."""
    from lab_snippets.sites import markup

    render = {"title": lambda text: html.escape(text.strip()), "explanation": markup.prose_html}
    replaced = 0
    for rec in records:
        for kind in ("title", "explanation"):
            english, chinese = translations.get((rec.get("site"), kind), (None, None))
            if not chinese or english.strip() != (rec.get(kind) or "").strip():
                continue
            text = render[kind](chinese)
            body, n = markup.element(kind, rec["site"]).subn(
                lambda m, text=text: f"{m.group(1)}{text}{m.group(3)}", body)
            replaced += n
    return translate_quote_words(body), replaced


GITHUB_LINK = ("view these lines on GitHub", "在 GitHub 上查看这几行代码")
# lab_snippets.sites.view.reader_fallback_note, as rendered (escaped) into a chapter's output
_FALLBACK = re.compile(
    r"This copy of the book was built without slime&#x27;s source, so the lines are not quoted here: "
    r"they are (?P<span>.+?) \((?P<symbol>.+?)\) in (?P<repo>\S+) at commit (?P<commit>\w+)\. "
    r"Read them on GitHub through the link below, or run this chapter with a slime clone "
    r"\(SLIME_SRC=path/to/slime\) to see them here\.")
FALLBACK_ZH = ("本书的这一版构建时没有 slime 的源码，所以这里没有引用这几行代码："
               "它们是 {repo} 在提交 {commit} 中的 {span}（{symbol}）。"
               "请通过下面的链接在 GitHub 上阅读，或者用 slime 的克隆运行本章"
               "（SLIME_SRC=path/to/slime），就能在这里看到它们。")


def translate_quote_words(body: str) -> str:
    """The call-site box's own words in Chinese: the link to GitHub and the note shown when the
    book was built without slime's source."""
    body = body.replace(f">{GITHUB_LINK[0]}</a>", f">{GITHUB_LINK[1]}</a>")
    return _FALLBACK.sub(lambda m: FALLBACK_ZH.format(**m.groupdict()), body)


def page_records(app, pagename: str) -> list[dict]:
    """The quote records of page ``pagename``: on the outputs of its execution in the jupyter cache
    (myst-nb's own copy in ``jupyter_execute`` of a page taken from the cache has no outputs)."""
    import json

    from lab_snippets.book.pages import _cache_dir, executed_notebook, with_cached_outputs
    from lab_snippets.sites.markup import records_in

    try:
        nb = json.loads(executed_notebook(app.outdir, pagename).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return list(records_in(with_cached_outputs(nb, _cache_dir(app))))


def _page_context(app, pagename, templatename, context, doctree) -> None:
    if "body" not in context:
        return
    chinese = is_chinese(app.config.language)
    body = context["body"]
    records = page_records(app, pagename) if chinese else []
    if records:
        from lab_snippets.book.i18n import site_translations

        if not hasattr(app, "_course_site_translations"):
            app._course_site_translations = site_translations()
        body, _ = translate_sites(body, app._course_site_translations, records)
    context["body"] = switch_html(pagename, chinese) + body


def chapter_of(docname: str):
    """The chapter whose page ``docname`` is, or None."""
    from lab_snippets.book.chapters import chapter_page

    return chapter_page(docname)


def drop_doubled_title(doctree, chapter) -> bool:
    """Remove the line under a chapter's title that gives its Chinese title (the original series'
    title, 01-21): a Chinese page's title *is* that title, and an English reader cannot use an
    unexplained Chinese line (issue 41; the introduction says the Chinese edition keeps the
    original titles). The source keeps it: the chapter table and the Chinese notebooks read it.
    Whether a line was removed."""
    from docutils import nodes

    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None or not isinstance(section[0], nodes.title):
        return False
    following = section[0].next_node(descend=False, siblings=True)
    if (isinstance(following, nodes.paragraph) and len(following) == 1
            and isinstance(following[0], nodes.emphasis) and following.astext().strip() == chapter.original):
        following.parent.remove(following)
        return True
    return False


# The glossary's Chinese headwords (the text before "（" in locale/zh_CN/LC_MESSAGES/book/glossary.po)
# and their pinyin: a Chinese reader looks a term up in pinyin order, not in the order of the English
# headwords the source is sorted by. A headword in Latin letters (Future, GIL) files under its letters
# among the pinyin, as in a Chinese index; tests/test_glossary_zh.py fails on a headword missing here.
GLOSSARY_PINYIN = {
    "可等待对象": "ke deng dai dui xiang",
    "异步上下文管理器": "yi bu shang xia wen guan li qi",
    "异步生成器": "yi bu sheng cheng qi",
    "背压": "bei ya",
    "阻塞调用": "zu se diao yong",
    "回调": "hui diao",
    "取消": "qu xiao",
    "上下文变量": "shang xia wen bian liang",
    "协程函数": "xie cheng han shu",
    "协程对象": "xie cheng dui xiang",
    "守护线程": "shou hu xian cheng",
    "事件": "shi jian",
    "事件循环": "shi jian xun huan",
    "执行器": "zhi xing qi",
    "文件锁": "wen jian suo",
    "分帧": "fen zhen",
    "锁": "suo",
    "许可": "xu ke",
    "pickle 序列化": "pickle xu lie hua",
    "进程组": "jin cheng zu",
    "回收": "hui shou",
    "信号量": "xin hao liang",
    "信号": "xin hao",
    "启动方法": "qi dong fang fa",
    "挂起点": "gua qi dian",
    "任务": "ren wu",
    "超时": "chao shi",
    "僵尸进程": "jiang shi jin cheng",
}


def glossary_sort_key(headword: str) -> tuple[str, ...]:
    """The pinyin syllables (or Latin words, lower-cased) a Chinese glossary headword sorts by."""
    head = headword.split("（")[0].strip()
    if head in GLOSSARY_PINYIN:
        return tuple(GLOSSARY_PINYIN[head].split())
    if head.isascii():
        return tuple(head.lower().split())
    raise KeyError(f"glossary headword {head!r} has no pinyin in editions.GLOSSARY_PINYIN")


def sort_glossary(doctree) -> int:
    """Put the entries of every glossary in ``doctree`` in pinyin order of their (translated)
    headwords; how many entries were sorted. The Chinese edition only: the English source is
    already in alphabetical order, and a glossary with ``:sorted:`` is sorted by Sphinx before
    translation, in the English order."""
    from docutils import nodes
    from sphinx import addnodes

    count = 0
    for glossary in doctree.findall(addnodes.glossary):
        for entries in glossary.findall(nodes.definition_list):
            items = list(entries.children)
            items.sort(key=lambda item: glossary_sort_key(item.next_node(nodes.term).astext()))
            entries.clear()
            entries.extend(items)
            count += len(items)
    return count


def _doctree_read(app, doctree) -> None:
    chapter = chapter_of(app.env.docname)
    if chapter:  # both editions (issue 41)
        drop_doubled_title(doctree, chapter)
    if is_chinese(app.config.language):
        sort_glossary(doctree)


class _TermSet(set):
    """A set that also takes list's ``extend``: Sphinx 7's Chinese splitter extends its collection of
    Latin terms, and its stemmer asks whether a word is in it."""

    def extend(self, terms) -> None:
        self.update(terms)


def chinese_search_language():
    """Sphinx 7.4's Chinese search language, with its Latin terms in a set instead of a list.

    Sphinx 7.4 appends every Latin word of every page to one list and, for each word it stems, tests
    membership in that list: the search index of the Chinese edition took about 70 of the 200
    profiled seconds of its render. Upstream Sphinx now keeps the terms in a set
    (sphinx-doc/sphinx#12995, merged October 2024, after the 7.x series); Jupyter Book 1.x requires
    ``sphinx~=7.0``, so the book stays on 7.4.7 and the same change is made here. The index is
    unchanged: a set answers membership as the list did."""
    from sphinx.search.zh import SearchChinese

    class SearchChineseTermSet(SearchChinese):
        """Also: the user dictionary (``html_search_options["dict"]``, written by
        ``lab_snippets.book.zhsearch``) is read without its comment lines, and its one-character
        words (锁, 流, 帧) are kept in the index, which Sphinx's filter would drop."""

        def init(self, options) -> None:
            from lab_snippets.book import zhsearch

            options = dict(options)
            path = options.pop("dict", None)
            super().init(options)
            self.latin_terms = _TermSet()
            self.single_terms = set()
            if path:
                zhsearch.load_user_dictionary(path)
                self.single_terms = {w for w in zhsearch.read_words(path) if len(w) == 1}

        def word_filter(self, stemmed_word: str) -> bool:
            return stemmed_word in self.single_terms or super().word_filter(stemmed_word)

    return SearchChineseTermSet


def setup(app):
    app.connect("html-page-context", _page_context, priority=450)
    app.connect("doctree-read", _doctree_read)
    app.setup_extension("lab_snippets.book.zhui")  # the theme's words in Chinese; the switch on every page
    app.setup_extension("lab_snippets.book.figalt")  # alt text on every figure, both editions
    app.add_search_language(chinese_search_language())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
