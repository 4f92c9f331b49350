"""What a reader of the Chinese edition acts on, in Chinese (issue 26): the theme's tooltips and
labels, the call-site link and fallback note, the language switch on every page.

The themes leave some of their words English in a Chinese build: pydata-sphinx-theme and
sphinx-book-theme write ``title="Toggle primary sidebar"``, ``aria-label="Main"`` or ``Color mode``
into their templates as plain text (no translation call), Sphinx 7.4's zh_CN catalogue lacks
"Link to this heading", and sphinx-book-theme's zh_CN catalogue says 列印成 PDF (Taiwan usage) where
mainland Chinese says 打印为 PDF. Our own catalogue, ``locale/zh_CN/theme.po`` (English → Chinese,
mainland usage), is applied two ways, both only in the Chinese edition:

- the translators of the ``sphinx`` and ``booktheme`` domains look words up in it first (the
  themes' own translations stay as the fallback): this covers what the templates translate;
- each page the builder renders has the attributes (``title``, ``aria-label``, ``data-bs-title``)
  and the short texts whose whole value is one of its English strings replaced: this covers what
  the templates write as plain text;
- MyST-NB's fold labels ("Show code cell source", "Hide code cell output", ...: ``nb_code_prompt_show``
  and ``nb_code_prompt_hide`` with a ``{type}`` that MyST-NB fills in English) are looked up in it
  once the page's doctree is resolved (``fold_labels``), so the article's folds read 显示代码 and the
  like while the English edition keeps MyST-NB's words; a fold labelled by its cell (``Show the
  check``, issue 41) is looked up the same way, and closes with 隐藏 + the same words (``pair_labels``
  gives both editions the matching ``Hide ...``);
- each line a chapter's check printed (``✓ ...``) is shown in Chinese (``zhchecks``), and so is the
  ``print`` call in the cell's displayed code that printed it;
- each timeline figure (a PNG drawn in English when the chapter ran) gets a key in Chinese under it
  (``zhfigures``).

The language switch (``editions.switch_html``) is added to the pages that have no body for
``editions`` to prepend it to: search and the general index.
"""

from __future__ import annotations

import gettext
import hashlib
import html
import re
from pathlib import Path

from lab_snippets import REPO_ROOT

ROOT = REPO_ROOT
DOMAINS = ("sphinx", "booktheme")
_ATTRIBUTE = re.compile(r'\b(title|aria-label|data-bs-title|placeholder)="([^"<>]*)"')
_TEXT = re.compile(r">(\s*)([^<>]*?[A-Za-z][^<>]*?)(\s*)<")


def catalogue_path(root: Path = ROOT) -> Path:
    return Path(root) / "locale" / "zh_CN" / "theme.po"


def catalogue(root: Path = ROOT) -> dict[str, str]:
    """``{English: Chinese}`` of ``locale/zh_CN/theme.po`` (translated, not fuzzy)."""
    from lab_snippets.book.i18n import read_po

    return {m.id: m.string for m in read_po(catalogue_path(root)) if m.id and m.string and not m.fuzzy}


class _Ours(gettext.NullTranslations):
    """A translator that answers from our catalogue and asks the theme's own for everything else."""

    def __init__(self, words: dict[str, str]) -> None:
        super().__init__()
        self.words = words

    def gettext(self, message):
        return self.words[message] if message in self.words else super().gettext(message)

    def ngettext(self, singular, plural, n):
        if n == 1 and singular in self.words:
            return self.words[singular]
        return super().ngettext(singular, plural, n)


def put_first(words: dict[str, str]) -> None:
    """Make our catalogue the first translator of the Sphinx and book-theme domains."""
    from sphinx.locale import translators

    for domain in DOMAINS:
        key = ("general", domain)
        ours = _Ours(words)
        if key in translators:
            ours.add_fallback(translators[key])
        translators[key] = ours


_ARTICLE = re.compile(r"(<article\b.*?</article>)", re.S)
_COPYRIGHT = re.compile(r"© Copyright (\d{4})\.")


def translate_html(text: str, words: dict[str, str]) -> str:
    """``text`` with every attribute value that is exactly one of the catalogue's English strings
    replaced by its Chinese; outside the article (header, sidebars, footer), also every text between
    tags that is one, and the copyright line (the article's own text is the catalogues' business)."""
    escaped = {html.escape(k, quote=True): html.escape(v, quote=True) for k, v in words.items()}
    text = _ATTRIBUTE.sub(lambda m: f'{m.group(1)}="{escaped.get(m.group(2), m.group(2))}"', text)

    def swap(m):
        chinese = escaped.get(m.group(2))
        return f">{m.group(1)}{chinese}{m.group(3)}<" if chinese else m.group(0)

    copyright_ = words.get("© Copyright %s.")
    pieces = _ARTICLE.split(text)
    for i in range(0, len(pieces), 2):  # the even pieces lie outside every <article>
        pieces[i] = _TEXT.sub(swap, pieces[i])
        if copyright_:
            pieces[i] = _COPYRIGHT.sub(lambda m: copyright_ % m.group(1), pieces[i])
    return "".join(pieces)


def pair_labels(doctree) -> int:
    """A fold whose cell names what it reveals (``mystnb={"code_prompt_show": "Show the check"}`` on
    its ``# %%`` line) closes with the same words (``Hide the check``) instead of MyST-NB's generic
    ``Hide code cell ...``; returns how many labels it changed. Both editions."""
    changed = 0
    for node in doctree.findall(lambda n: "prompt_show" in getattr(n, "attributes", {})):
        show, hide = node.get("prompt_show", ""), node.get("prompt_hide", "")
        own = show.startswith("Show ") and not show.startswith("Show code cell")
        if own and hide.startswith("Hide code cell"):
            node["prompt_hide"] = "Hide " + show[len("Show "):]
            changed += 1
    return changed


def fold_labels(doctree, words: dict[str, str]) -> int:
    """Put the catalogue's Chinese on MyST-NB's fold labels in ``doctree`` (its post-transform has
    already filled ``{type}`` in English); returns how many labels it changed. A ``Hide X`` the
    catalogue lacks reads 隐藏 + the rest of ``Show X``'s translation when that begins with 显示."""
    changed = 0
    for node in doctree.findall(lambda n: "prompt_show" in getattr(n, "attributes", {})):
        show, hide = node.get("prompt_show", ""), node.get("prompt_hide", "")
        shown = words.get(show, "")
        if hide not in words and hide.startswith("Hide ") and show[len("Show "):] == hide[len("Hide "):] \
                and shown.startswith("显示"):
            node["prompt_hide"] = "隐藏" + shown[len("显示"):]
            changed += 1
        for key in ("prompt_show", "prompt_hide"):
            if node.get(key) in words:
                node[key] = words[node[key]]
                changed += 1
    return changed


def _doctree_resolved(app, doctree, docname) -> None:
    from lab_snippets.book.editions import is_chinese

    if app.builder.format == "html":
        pair_labels(doctree)
    if is_chinese(app.config.language) and app.builder.format == "html":
        from lab_snippets.book import zhchecks, zhfigures

        words = catalogue()
        fold_labels(doctree, words)
        zhchecks.translate_doctree(doctree)  # each printed ✓ line of a check in Chinese
        zhchecks.translate_sources(doctree)  # and the print in the code that printed it
        zhfigures.add_keys(app, doctree, docname, words)  # a Chinese key under each timeline figure


def add_switch(pagename: str, output: str, chinese: bool) -> str:
    """The language switch at the top of a page that has none (search, the general index)."""
    from lab_snippets.book.editions import switch_html

    marker = '<div class="bd-article-container">'
    if 'class="edition-switch"' in output or marker not in output:
        return output
    return output.replace(marker, marker + "\n" + switch_html(pagename, chinese), 1)


def _builder_inited(app) -> None:
    from lab_snippets.book.editions import is_chinese

    templates = getattr(app.builder, "templates", None)
    if templates is None or app.builder.format != "html":
        return
    chinese = is_chinese(app.config.language)
    words = catalogue() if chinese else {}
    if chinese:
        put_first(words)
        from sphinx.locale import translators

        # Sphinx gave its template engine the translator object itself (before we came first)
        templates.environment.install_gettext_translations(translators[("general", "sphinx")])
    render = templates.render

    def render_page(template: str, context: dict) -> str:
        output = render(template, context)
        pagename = context.get("pagename", "")
        if template in ("search.html", "genindex.html") or pagename in ("search", "genindex"):
            output = add_switch(pagename, output, chinese)
        return translate_html(output, words) if chinese else output

    templates.render = render_page


def _config_inited(app, config) -> None:
    from lab_snippets.book.editions import is_chinese

    # The catalogues are no page's source, so Sphinx would not re-render a page when only they (or
    # this code) changed; an html-rebuild config value that follows their content makes every page
    # out of date then.
    if is_chinese(config.language) and catalogue_path().is_file():
        from lab_snippets.book import zhchecks, zhfigures

        digest = hashlib.sha256(catalogue_path().read_bytes())
        for extra in (zhfigures.titles_path(), zhchecks.catalogue_path()):  # no page's source either
            if extra.is_file():
                digest.update(extra.read_bytes())
        for module in (__file__, zhfigures.__file__, zhchecks.__file__):  # nor is the code that puts
            digest.update(Path(module).read_bytes())  # the words on the pages
        config.zhui_words = digest.hexdigest()


def setup(app):
    app.add_config_value("zhui_words", "", "html")
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("doctree-resolved", _doctree_resolved)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
