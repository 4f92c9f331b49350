"""Every figure drawn in both languages from one execution, when the book is built (issue 42).

A chapter runs once; what it draws is a matplotlib ``Figure``, whose words (title, axis labels,
lane names, legend entries, annotations) can be swapped and the figure saved again. When the book
build sets ``COURSE_FIGURE_EDITIONS=zh_CN`` in the kernel's environment, ``install`` (called by
``timeline.figure_style``, at the top of every chapter) makes IPython display each figure twice:
the English PNG as usual, then a Chinese PNG with its words from ``locale/zh_CN/figures.po`` and a
CJK font. Each PNG carries its edition in a text chunk (``EDITION_KEY``), and the Chinese one the
words the catalogue lacked (``MISSING_KEY``); the book's Sphinx extension keeps on each page the
PNG of that page's edition (``lab_snippets.book.zhfigures``). Without the variable (JupyterLab,
nbval, grading) nothing changes: one English figure.

Catalogue entries may hold placeholders as the chapter's f-string wrote them: ``job {i}`` matches
``job 3`` and ``作业 {i}`` becomes ``作业 3``. Words that need no translation are left alone: numbers
and units, and code identifiers (a word with ``_``, ``.`` or ``()``, or one in backticks).
"""

from __future__ import annotations

import io
import os
import re
from contextlib import contextmanager
from functools import cache
from pathlib import Path

ENV = "COURSE_FIGURE_EDITIONS"
EDITION_KEY = "course-edition"
MISSING_KEY = "course-missing-words"
WORDS_KEY = "course-words"
TITLES_KEY = "course-titles"  # the titles as drawn, values filled in: the alt text (book.figalt)
FORMAT_KEY = "course-figlang"
FORMAT = "4"  # raise when the drawing or its chunks change: the book build then draws cached figures again
CJK_FONTS = ["Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Zen Hei"]
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_LETTERS = re.compile(r"[A-Za-z]{2,}")
_CODE_WORD = re.compile(r"^`.*`$|^[\w.]*(_|\.\w|\(\))[\w.()]*$")


def catalogue_path() -> Path:
    from lab_snippets import REPO_ROOT

    return REPO_ROOT / "locale" / "zh_CN" / "figures.po"


@cache
def words() -> dict[str, str]:
    """``{English: Chinese}`` of ``figures.po`` (translated, not fuzzy), read with Babel."""
    from babel.messages.pofile import read_po

    path = catalogue_path()
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        catalog = read_po(f)
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy and isinstance(m.id, str)}


#: The y-axis label ``Timeline.plot`` gives every timeline (its lanes' generic name).
LANES_LABEL = "work"


def axes_path() -> Path:
    from lab_snippets import REPO_ROOT

    return REPO_ROOT / "locale" / "zh_CN" / "figure_axes.po"


@cache
def lane_kinds() -> list[tuple[re.Pattern, str]]:
    """``(a timeline's title as drawn, the Chinese word for what its lanes are)`` from
    ``figure_axes.po``, keyed by the title as the chapter writes it (an f-string as written, like
    ``figure_keys.po``): 线程, 进程, 任务 ... A Chinese timeline whose title is not there draws no
    y-axis label: its lane names say what they are (槽位 0, 作业 0, 子进程 0)."""
    import ast

    from babel.messages.pofile import read_po

    path = axes_path()
    if not path.is_file():
        return []
    with path.open("rb") as f:
        catalog = read_po(f)
    found = []
    for m in catalog:
        if not (m.id and m.string and not m.fuzzy and isinstance(m.id, str)):
            continue
        node = ast.parse(m.id, mode="eval").body if m.id[:2] in ("f'", 'f"') else None
        if isinstance(node, ast.JoinedStr):
            pattern = "".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+?"
                              for v in node.values)
        else:
            pattern = re.escape(m.id)
        found.append((re.compile(pattern + "$"), m.string))
    return found


def lane_kind(title: str) -> str:
    """The Chinese y-axis label of the timeline titled ``title`` (as drawn); '' for none."""
    return next((word for pattern, word in lane_kinds() if pattern.match(title)), "")


@cache
def _patterns() -> list[tuple[re.Pattern, str]]:
    found = []
    for english, chinese in words().items():
        if _PLACEHOLDER.search(english):
            parts = _PLACEHOLDER.split(english)
            found.append((re.compile("^" + "(.+?)".join(map(re.escape, parts)) + "$"), chinese))
    return found


def needs_words(text: str) -> bool:
    """Whether ``text`` holds words a reader would want in Chinese (not a number, unit or identifier)."""
    text = text.strip()
    return bool(_LETTERS.search(text)) and not _CODE_WORD.match(text)


def _fill(template: str, values: tuple[str, ...]) -> str:
    rest = iter(values)
    return _PLACEHOLDER.sub(lambda _: next(rest, ""), template)


def translate(text: str) -> str | None:
    """The Chinese of ``text``, or None when the catalogue lacks it."""
    table = words()
    if text in table:
        return table[text]
    for pattern, chinese in _patterns():
        m = pattern.match(text)
        if m:
            return _fill(chinese, m.groups())
    return None


@cache
def cjk_fonts() -> list[str]:
    """The fonts of ``CJK_FONTS`` that matplotlib finds here (the setup installs Debian's fonts-noto-cjk)."""
    from matplotlib import font_manager

    present = {f.name for f in font_manager.fontManager.ttflist}
    return [name for name in CJK_FONTS if name in present]


def _texts(fig):
    """Every Text artist of ``fig`` with words on it (titles, labels, legends, annotations)."""
    from matplotlib.text import Text

    return [t for t in fig.findobj(Text) if needs_words(t.get_text())]


def english_words(fig) -> list[str]:
    """The words of ``fig`` a Chinese reader needs translated: its texts and its worded tick labels."""
    fig.canvas.draw()
    found = {t.get_text() for t in _texts(fig)}
    for axis in _worded_axes(fig):
        found.update(t.get_text() for t in axis.get_ticklabels() if needs_words(t.get_text()))
    return sorted(found)


def _worded_axes(fig) -> list:
    """The axes (x or y) of ``fig`` whose tick labels hold words (lane names), after a draw."""
    return [axis for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
            if any(needs_words(t.get_text()) for t in axis.get_ticklabels())]


@contextmanager
def in_chinese(fig):
    """Within the block, ``fig``'s words are Chinese (fixed tick labels included) and it draws with
    a CJK font; afterwards it is exactly as before. Yields the words the catalogue lacked."""
    import matplotlib
    missing: list[str] = []
    undo = []
    ticks: set[str] = set()
    fig.canvas.draw()  # lay out first, so tick labels hold their final text
    for ax in fig.axes:  # a timeline's generic "work": what its lanes are, or nothing
        if ax.get_ylabel() == LANES_LABEL:  # only Timeline.plot writes it
            old = ax.get_ylabel()
            ax.set_ylabel(lane_kind(ax.get_title()))
            undo.append(lambda a=ax, o=old: a.set_ylabel(o))
    for axis in _worded_axes(fig):
        labels = [t.get_text() for t in axis.get_ticklabels()]
        found = [translate(s) for s in labels]
        missing += [s for s, n in zip(labels, found, strict=True) if n is None and needs_words(s)]
        new = [n if n is not None else s for s, n in zip(labels, found, strict=True)]
        ticks.update(new)
        locator, formatter = axis.get_major_locator(), axis.get_major_formatter()
        axis.set_ticks(axis.get_ticklocs(), new)
        undo += [lambda a=axis, lo=locator: a.set_major_locator(lo),
                 lambda a=axis, fo=formatter: a.set_major_formatter(fo)]
    for text in _texts(fig):
        old = text.get_text()
        if old in ticks:  # a tick label set above (already Chinese, or a word left as it is)
            continue
        new = translate(old)
        if new is None:
            missing.append(old)
            continue
        text.set_text(new)
        undo.append(lambda t=text, o=old: t.set_text(o))
    from matplotlib.text import Text

    # matplotlib falls back glyph by glyph along a Text's family list (not along the generic
    # "sans-serif" list), so each text gets the CJK fonts appended to its own families
    cjk = cjk_fonts()
    for text in fig.findobj(Text):
        old = text.get_fontfamily()
        text.set_fontfamily([*old, *cjk])
        undo.append(lambda t=text, o=old: t.set_fontfamily(o))
    try:
        with matplotlib.rc_context({"font.family": [*matplotlib.rcParams["font.family"], *cjk]}):
            yield sorted(set(missing))
    finally:
        for step in reversed(undo):
            step()


def titles_drawn(fig) -> list[str]:
    """``fig``'s titles as it draws them, each on one line: its suptitle, then each axes' titles
    (an f-string title with its values, ``interval 0.2 s``, where the source says ``{interval}``)."""
    texts = [fig._suptitle] if getattr(fig, "_suptitle", None) is not None else []
    texts += [title for ax in fig.axes for title in (ax.title, ax._left_title, ax._right_title)]
    return [" ".join(t.get_text().split()) for t in texts if t.get_text().strip()]


def png(fig, edition: str, missing: list[str] | None = None, words_drawn: list[str] | None = None) -> bytes:
    """``fig`` as PNG bytes, tagged with its edition, its titles as drawn (and the words it has and
    those it lacked)."""
    meta = {EDITION_KEY: edition, FORMAT_KEY: FORMAT}
    titles = titles_drawn(fig)
    if titles:
        meta[TITLES_KEY] = "\n".join(titles)
    if missing:
        meta[MISSING_KEY] = "\n".join(missing)
    if words_drawn:
        meta[WORDS_KEY] = "\n".join(words_drawn)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", metadata=meta)
    return buf.getvalue()


def _display_both(fig) -> bool:
    from IPython.display import publish_display_data

    english = png(fig, "en")
    drawn = english_words(fig)
    with in_chinese(fig) as missing:
        chinese = png(fig, "zh_CN", missing, drawn)
    for data, edition in ((english, "en"), (chinese, "zh_CN")):
        publish_display_data({"image/png": data, "text/plain": f"<Figure ({edition})>"},
                             metadata={EDITION_KEY: edition})
    return True


def install() -> bool:
    """Display every figure in both editions from now on, when the build asks for it; returns whether
    it did (False outside IPython or without ``COURSE_FIGURE_EDITIONS``)."""
    if os.environ.get(ENV) != "zh_CN":
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    from matplotlib.figure import Figure

    shell.display_formatter.ipython_display_formatter.for_type(Figure, _display_both)
    return True


def png_text(png_bytes_or_path) -> dict[str, str]:
    """The text chunks of a PNG (bytes or a path)."""
    from PIL import Image

    source = png_bytes_or_path
    if isinstance(source, bytes | bytearray):
        source = io.BytesIO(source)
    with Image.open(source) as image:
        return dict(getattr(image, "text", {}) or {})


def edition_of(png_bytes_or_path) -> tuple[str | None, list[str]]:
    """(edition, missing words) read from a PNG written by ``png`` ((None, []) for any other PNG)."""
    info = png_text(png_bytes_or_path)
    return info.get(EDITION_KEY), [w for w in info.get(MISSING_KEY, "").split("\n") if w]
