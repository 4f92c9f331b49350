"""The Chinese glossary is in pinyin order of its Chinese headwords (lab_snippets.book.editions)."""

import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

from lab_snippets.book.editions import GLOSSARY_PINYIN, glossary_sort_key, sort_glossary

ROOT = Path(__file__).resolve().parent.parent


def _english_terms() -> list[str]:
    block = (ROOT / "book" / "glossary.md").read_text().split("```{glossary}")[1].split("```")[0]
    return [line for line in block.splitlines() if line and not line.startswith(" ")]


def _chinese_headwords() -> list[str]:
    """The glossary's headwords in Chinese, in the English source's (alphabetical) order."""
    catalogue = (ROOT / "locale/zh_CN/LC_MESSAGES/book/glossary.po").read_text()
    translations = dict(re.findall(r'^msgid "(.*)"\nmsgstr "(.*)"', catalogue, re.M))
    return [translations[term] for term in _english_terms()]


def _glossary(headwords: list[str]):
    entries = nodes.definition_list()
    for word in headwords:
        entries += nodes.definition_list_item("", nodes.term(word, word), nodes.definition())
    glossary = addnodes.glossary()
    glossary += entries
    document = nodes.section()
    document += glossary
    return document, entries


def test_every_chinese_headword_has_its_pinyin():
    for headword in _chinese_headwords():
        glossary_sort_key(headword)  # a KeyError names the missing headword


def test_the_chinese_glossary_is_in_pinyin_order():
    document, entries = _glossary(_chinese_headwords())
    assert sort_glossary(document) == len(_english_terms())
    order = [item.next_node(nodes.term).astext().split("（")[0] for item in entries.children]
    assert order[:4] == ["背压", "超时", "分帧", "Future"]
    assert order.index("事件") + 1 == order.index("事件循环")
    assert order.index("信号") + 1 == order.index("信号量")
    assert order.index("回调") < order.index("回收") < order.index("进程组") < order.index("可等待对象")
    assert order[-2:] == ["执行器", "阻塞调用"]
    assert order == sorted(order, key=glossary_sort_key)
    assert len(order) == len(GLOSSARY_PINYIN) + 2  # Future and GIL file under their letters
