"""Three rules of the Chinese edition that ``i18n check`` enforces on every translation (issue 42).

    python -m lab_snippets.book.zhstyle --terms        # list what breaks a rule, per catalogue
    python -m lab_snippets.book.zhstyle --fix-terms    # rewrite what can be rewritten (rules 1 and 3)

1. **A glossary link reads Chinese.** ``{term}`event loop` `` renders the English headword, so a
   Chinese sentence linking it showed "event loop（事件循环）". In a translation the role carries an
   explicit Chinese title: ``{term}`事件循环 <event loop>` ``. ``--fix`` rewrites the old form
   ``{term}`event loop`（事件循环）`` into it.
2. **One word per concept.** ``locale/zh_CN/TERMS.md`` lists, under "Wrong variants", renderings that
   must not appear (a calque, a drifted synonym) and what to write instead. A wrong variant needs a
   translator (the right word depends on the sentence), so ``--fix`` leaves it alone.
3. **Spaces around inline code, none around a link.** A code span (or a code-like role) touching a
   Han character gets one space on that side, as chapters 09–29 were written; next to Chinese
   punctuation it gets none. A role that renders as link text (``{term}``, ``{doc}``, ``{ref}``) is
   Chinese text in a Chinese sentence: a space between it and a Han character shows as a gap in the
   page ("移到 执行器 中", zh reader, round 5), so it gets none, unless the text it shows begins
   (ends) with a Latin letter or digit there: Han and Latin text are spaced (``{term}`Future <future>` ``).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from lab_snippets import REPO_ROOT

ROOT = REPO_ROOT
_HAN = r"[\u3400-\u9fff]"
_CODE = re.compile(r"(\{[a-z:]+\})?(`+)(.+?)\2", re.S)
# {term}`headword`（中文） or {term}`Title <headword>`（中文）
_OLD_TERM = re.compile(r"\{term\}`(?:[^`<]*?<)?([^`<>]+?)>?`（([^）]+)）")
_UNTITLED_TERM = re.compile(r"\{term\}`([^`<]+)`")
# roles that render their title as ordinary link text, not as code
TEXT_ROLES = ("{term}", "{doc}", "{ref}")


def chinese_term_roles(text: str) -> str:
    """``text`` with each ``{term}`x`（中文）`` made ``{term}`中文 <x>` ``."""
    def rewrite(m: re.Match) -> str:
        title = m.group(0).split("`", 2)[1].split("<", 1)[0]
        if re.search(_HAN, title):   # already a Chinese title: the parenthesis after it is prose
            return m.group(0)
        return f"{{term}}`{m.group(2)} <{m.group(1).strip()}>`"

    return _OLD_TERM.sub(rewrite, text)


def english_headwords(text: str) -> list[str]:
    """Glossary links of a translation that render an English headword (no Chinese title)."""
    return [m.group(1) for m in _UNTITLED_TERM.finditer(text) if not re.search(_HAN, m.group(1))]


def _is_han(char: str) -> bool:
    return bool(char) and re.fullmatch(_HAN, char) is not None


def _shown(match: re.Match) -> str | None:
    """The text a link-text role shows (its title), "" for an untitled page or section link (it shows
    that page's Chinese title), None for code."""
    if match.group(1) not in TEXT_ROLES:
        return None
    body = match.group(3)
    if "<" in body:
        return body.split("<", 1)[0].strip()
    return body.strip() if match.group(1) == "{term}" else ""


def _wants_space(match: re.Match, side: int) -> bool:
    """Whether the span wants a space against a Han neighbour on ``side`` (0 before, 1 after): code
    always; a link only where its shown text begins (ends) with a Latin letter or digit, as Chinese
    typesetting spaces Han from Latin (``{term}`pickle 序列化 <pickling>` ``)."""
    shown = _shown(match)
    if shown is None:
        return True
    edge = shown[:1] if side == 0 else shown[-1:]
    return bool(edge) and edge.isascii() and edge.isalnum()


def _sides(text: str):
    """For each span and side: (span text, wants a space, neighbour index, spaced neighbour index)."""
    for m in _CODE.finditer(text):
        start, end = m.start(), m.end()
        yield m, 0, start - 1, start - 2
        yield m, 1, end, end + 1


def _char(text: str, i: int) -> str:
    return text[i] if 0 <= i < len(text) else ""


def spaced_links(text: str) -> list[str]:
    """The links of ``text`` separated by a space from a Han character they should touch."""
    found = []
    for m, side, near, far in _sides(text):
        if not _wants_space(m, side) and _char(text, near) == " " and _is_han(_char(text, far)):
            if m.group(0) not in found:
                found.append(m.group(0))
    return found


def glued_code(text: str) -> list[str]:
    """The code spans (and links showing Latin at that edge) of ``text`` that touch a Han character
    with no space between."""
    glued = []
    for m, side, near, _ in _sides(text):
        if _wants_space(m, side) and _is_han(_char(text, near)) and m.group(0) not in glued:
            glued.append(m.group(0))
    return glued


def space_code(text: str) -> str:
    """``text`` with one space between each code span and a Han character it touches, and none
    between a link and a Han character (unless the link shows Latin at that edge)."""
    out, last = [], 0
    for m in _CODE.finditer(text):
        head = text[last:m.start()]
        stripped = head.rstrip(" ")
        if _is_han(stripped[-1:]):
            head = stripped + (" " if _wants_space(m, 0) else "")
        out.append(head + m.group(0))
        last = m.end()
        rest = text[last:]
        tail = rest.lstrip(" ")
        if _is_han(tail[:1]):
            out.append(" " if _wants_space(m, 1) else "")
            last += len(rest) - len(tail)
    out.append(text[last:])
    return "".join(out)


@cache
def wrong_variants(root: Path = ROOT) -> dict[str, str]:
    """``{wrong: write instead}`` from the "Wrong variants" table of ``locale/zh_CN/TERMS.md``."""
    path = root / "locale" / "zh_CN" / "TERMS.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    section = text.split("## Wrong variants", 1)[1] if "## Wrong variants" in text else ""
    found = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] and not set(cells[0]) <= set("-: ") and cells[0] != "wrong":
            found[cells[0].strip("「」")] = cells[1]
    return found


@cache
def original_titles() -> tuple[str, ...]:
    """The original series' chapter titles (``Chapter.original``), quoted as they are."""
    from lab_snippets.book.chapters import CHAPTERS

    return tuple(c.original for c in CHAPTERS if c.original)


def problems(translation: str, root: Path = ROOT) -> list[str]:
    """What in one translation breaks rules 1–3."""
    found = []
    heads = english_headwords(translation)
    if heads:
        found.append(f"glossary links show English headwords {heads[:3]}: write {{term}}`中文 <{heads[0]}>`")
    prose = _CODE.sub(" ", translation)
    for title in original_titles():  # the original series' titles are quoted, not our prose
        prose = prose.replace(title, " ")
    for wrong, right in wrong_variants(root).items():
        if wrong in prose:
            found.append(f"wrong variant {wrong!r}: {right} (locale/zh_CN/TERMS.md)")
    glued = glued_code(translation)
    if glued:
        found.append(f"code (or a link showing Latin) glued to Chinese {glued[:3]}: put a space between")
    spaced = spaced_links(translation)
    if spaced:
        found.append(f"a space between Chinese and a link {spaced[:3]}: a link is text, write it glued")
    italic = [m.group(0) for m in _ITALIC.finditer(prose) if _CJK.search(m.group(0))]
    if italic:
        found.append(f"Chinese in italics {italic[:3]}: Chinese has no italics; stress with **粗体**, "
                     "name a section or an on-screen label with 「」")
    padded = _PADDED_CHAPTER.findall(prose)
    if padded:
        found.append(f"a chapter number with a leading zero {padded[:3]}: write 第 {int(padded[0][-2:])} 章 "
                     "(the zero is the English file order, not how a Chinese sentence counts)")
    return found


# 第 01 章, 第 01–08 章, 第 03、05 章: Chinese counts chapters without the file name's zero
_PADDED_CHAPTER = re.compile(r"第\s*(?:\d+\s*[–、,，和至-]\s*)*0\d")

# *强调*: an emphasis of one asterisk (not ** bold) around Chinese, which the page sets in italics
_ITALIC = re.compile(r"(?<![*\\])\*(?![*\s])[^*\n]+?(?<![*\s\\])\*(?!\*)")
_CJK = re.compile(r"[\u4e00-\u9fff]")
