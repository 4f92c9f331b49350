"""The Chinese edition: rendered from the catalogues in ``locale/`` and the English build's jupyter
cache (nothing executes again), published at ``_build/html/zh_CN``."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from lab_snippets import REPO_ROOT
from lab_snippets.book.preexec import cache_path

ROOT = REPO_ROOT

ZH_TITLE = "Python 并发：从 slime 读起"
ZH_AUTHOR = "slime 并发课程编写组"  # _config.yml's author, for the footer's 作者 line


def zh_output(root: Path) -> Path:
    """Where the Chinese edition is built (its own doctrees and jupyter_execute beside it); it is then
    copied to ``_build/html/zh_CN`` so that both editions are published together."""
    return Path(root) / "_build" / "zh_CN" / "html"


def published_zh(root: Path) -> Path:
    return Path(root) / "_build" / "html" / "zh_CN"


# Toc texts that are no page's message (none now: each part's entry is its page's own heading).
ZH_TOC_TITLES: dict[str, str] = {}


def zh_toc(root: Path) -> Path:
    """``_toc.yml`` with its captions and titles in Chinese, for the Chinese edition.

    sphinx-external-toc adds the toctrees (and their captions) after Sphinx has translated the
    page, so the sidebar's part captions would stay English; they are translated here instead,
    from the catalogues (the root page's catalogue holds each caption as a message)."""
    from lab_snippets.book.i18n import translation_memory

    memory = {**translation_memory(root), **ZH_TOC_TITLES}

    def swap(m):
        return f'{m.group(1)}"{memory.get(m.group(2), m.group(2))}"'

    text = re.sub(r'^(\s*(?:-\s*)?(?:caption|title):\s*)"([^"]*)"', swap,
                  (Path(root) / "_toc.yml").read_text(encoding="utf-8"), flags=re.M)
    out = Path(root) / "_build" / "zh_CN" / "_toc.yml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


def build_zh(root: Path = ROOT, log=print) -> int:
    """Build the Chinese edition from the catalogues in ``locale/`` and the shared jupyter cache:
    every chapter page comes from the executions the English build stored (the cache key covers
    code, which both editions share), so nothing runs again. Exit status (0: built and published)."""
    from jupyter_book.sphinx import build_sphinx

    from lab_snippets.book import zhsearch
    from lab_snippets.book.i18n import GETTEXT_SETTINGS, LANG, sphinx_overrides

    root = Path(root)
    out = zh_output(root)
    overrides = {
        **sphinx_overrides(root), **GETTEXT_SETTINGS,
        "external_toc_path": zh_toc(root).as_posix(),
        "language": LANG,
        "locale_dirs": [str(root / "locale")],
        "nb_execution_cache_path": str(cache_path(root)),  # the English build's cache, not one of its own
        "nitpicky": True,
        "html_title": ZH_TITLE,
        "author": ZH_AUTHOR,
        "html_theme_options": {"search_bar_text": "搜索本书……"},
        "html_search_options": zhsearch.search_options(root),  # the course's terms, kept whole by jieba
    }
    status = build_sphinx(root, out, noconfig=True, path_config=str(root / "_config.yml"),
                          confoverrides=overrides, builder="html", warningiserror=True, keep_going=True,
                          quiet=True)
    if status != 0:
        log(f"the Chinese edition was not built (sphinx status {status!r})")
        return 1
    from lab_snippets.book import zhnotebooks

    zhnotebooks.write_downloads(root, out)  # the chapters' .py and .ipynb downloads in Chinese
    target = published_zh(root)
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(out, target)
    return 0
