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
   page ("移到 执行器 中", zh reader, round 5), so it gets none.
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
    return _OLD_TERM.sub(lambda m: f"{{term}}`{m.group(2)} <{m.group(1).strip()}>`", text)


def english_headwords(text: str) -> list[str]:
    """Glossary links of a translation that render an English headword (no Chinese title)."""
    return [m.group(1) for m in _UNTITLED_TERM.finditer(text) if not re.search(_HAN, m.group(1))]


def _spans(text: str, links: bool = False):
    """(start, end) of the code spans (``links=False``) or the link-text roles (``links=True``)."""
    return [(m.start(), m.end()) for m in _CODE.finditer(text) if (m.group(1) in TEXT_ROLES) == links]


def _is_han(char: str) -> bool:
    return bool(char) and re.fullmatch(_HAN, char) is not None


def spaced_links(text: str) -> list[str]:
    """The link-text roles of ``text`` separated from a neighbouring Han character by a space."""
    found = []
    for start, end in _spans(text, links=True):
        before = text[start - 2:start] if start >= 2 else ""
        after = text[end:end + 2]
        if (len(before) == 2 and before[1] == " " and _is_han(before[0])) or (
                len(after) == 2 and after[0] == " " and _is_han(after[1])):
            found.append(text[start:end])
    return found


def unspace_links(text: str) -> str:
    """``text`` with the spaces between a link-text role and a neighbouring Han character removed."""
    out, last = [], 0
    for start, end in _spans(text, links=True):
        head = text[last:start]
        if head.endswith(" ") and _is_han(head.rstrip(" ")[-1:]):
            head = head.rstrip(" ")
        out.append(head + text[start:end])
        last = end
        rest = text[end:]
        stripped = rest.lstrip(" ")
        if stripped != rest and _is_han(stripped[:1]):
            last = end + len(rest) - len(stripped)
    out.append(text[last:])
    return "".join(out)


def glued_code(text: str) -> list[str]:
    """The code spans and code-like roles of ``text`` that touch a Han character with no space between."""
    glued = []
    for start, end in _spans(text):
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        if re.fullmatch(_HAN, before or " ") or re.fullmatch(_HAN, after or " "):
            glued.append(text[start:end])
    return glued


def space_code(text: str) -> str:
    """``text`` with one space between each code span (or code-like role) and a Han character it
    touches, and none between a link-text role and a Han character."""
    text = unspace_links(text)
    out, last = [], 0
    for start, end in _spans(text):
        out.append(text[last:start])
        if start and re.fullmatch(_HAN, text[start - 1]):
            out.append(" ")
        out.append(text[start:end])
        if end < len(text) and re.fullmatch(_HAN, text[end]):
            out.append(" ")
        last = end
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
        found.append(f"inline code glued to Chinese {glued[:3]}: put a space on each side")
    spaced = spaced_links(translation)
    if spaced:
        found.append(f"a space between Chinese and a link {spaced[:3]}: a link is text, write it glued")
    return found
