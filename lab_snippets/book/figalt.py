"""A sentence of alt text for every figure of the book, in the page's language (issue 41).

MyST-NB gives an executed figure no ``alt`` unless its cell's metadata sets one, and the HTML
builder then writes the image's file path as its alt text: a screen reader reads out a hash, and
search learns nothing. Every figure of the course is drawn by code whose title says what it shows
(the string given to ``Timeline.plot``, ``set_title`` or ``suptitle``, read as ``zhfigures`` reads
it), and whether it is a timeline is read from the picture (``zhfigures.states_drawn``). So the
alt text is built, not written per figure: the title, then, for a timeline, what its lanes, its
axis and its colours mean. The Chinese edition takes the title and the state names from
``locale/zh_CN/figures.po`` (a state as the Chinese figure's legend draws it: 运行, 等待 ...) and the
colour names from the reading guide's catalogue.

A title written as an f-string (``f"interval {interval} s"``) reads as drawn, ``interval 0.2 s``: the
book build's PNGs carry their titles with the values filled in (``figlang.TITLES_KEY``, in the
figure's own language); a PNG without them (drawn before, or outside the build) falls back to the
source's title with an ellipsis for each value.

A figure whose cell sets no title gets a sentence that says what kind of figure it is, never a path.
"""

from __future__ import annotations

import re
from pathlib import Path

from lab_snippets.book import zhfigures

#: The English sentences (the zh ones are built from the same catalogues the zh key uses).
TIMELINE = ("A timeline: one lane per label on the left (a piece of work, or a place work runs in), "
            "time in seconds from left to right; "
            "the colours show {states}.")
UNTITLED = "A figure drawn by the code of the cell above it."
ZH_TIMELINE = ("时间线：每条泳道对应左侧的一个标签（一项工作，或工作运行的位置），"
               "横轴是从左到右的时间（单位见横轴标签）；{states}。")
ZH_UNTITLED = "由上方单元格的代码绘制的图。"


def readable(title: str) -> str:
    """A title as a reader sees it: an f-string as written (``f'interval {interval} s'``, how
    ``zhfigures`` keys it) loses its quotes and shows each value it fills in as an ellipsis."""
    import ast

    if title[:2] in ("f'", 'f"'):
        try:
            node = ast.parse(title, mode="eval").body
        except SyntaxError:
            return title
        if isinstance(node, ast.JoinedStr):
            return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    return re.sub(r"\{[^{}]*\}", "…", title)


def _sentence(title: str, stop: str = ".", drawn: bool = False) -> str:
    """``title`` as one sentence; a title from the source reads as ``readable`` makes it, one as the
    figure drew it (``drawn``) is kept as it is."""
    title = (title if drawn else readable(title)).strip()
    return title if title[-1:] in ".?!。？！" else title + stop


def drawn_titles(png: Path) -> list[str] | None:
    """The titles ``png`` says it drew (values filled in), or None when it does not say."""
    from lab_snippets import figlang

    text = figlang.png_text(png).get(figlang.TITLES_KEY)
    return None if text is None else [t for t in text.split("\n") if t.strip()]


def meanings_in(source: str) -> dict[str, str]:
    """The ``meanings={"state": "word"}`` a cell's code gives ``Timeline.plot`` (its legend's words
    for those states), read from the source: a dict written in the call, or a name the same code
    binds to one (``meanings=PARENT`` after ``PARENT = {...}``: chapters 11 and 19, whose alt text
    named the default colours while the legend said otherwise); {} when it gives none or the code
    does not parse."""
    import ast

    tree = zhfigures._tree(source)
    if tree is None:
        return {}
    bound = {target.id: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
             and isinstance(node.value, ast.Dict)
             for target in node.targets if isinstance(target, ast.Name)}
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.keyword) and node.arg == "meanings"):
            continue
        value = bound.get(node.value.id) if isinstance(node.value, ast.Name) else node.value
        if isinstance(value, ast.Dict):
            for key, word in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(word, ast.Constant):
                    found.setdefault(str(key.value), str(word.value))
    return found


def module_dicts(sources) -> str:
    """The code of every ``NAME = {...}`` at the top level of the page's cells (chapter 29 binds
    its legend beside the drawing function that passes ``meanings=meanings``)."""
    import ast

    out = []
    for source in sources:
        tree = zhfigures._tree(source)
        out += [ast.unparse(node) for node in (tree.body if tree else ())
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)]
    return "".join(line + "\n" for line in out)


def _sources(doctree) -> dict[int, str]:
    """{id(image): the source of the code cell that drew it}."""
    from docutils import nodes

    out: dict[int, str] = {}
    for cell in doctree.findall(nodes.Element):
        if cell.get("nb_element") == "cell_code":
            images = list(cell.findall(nodes.image))
            if images:
                source = zhfigures._source_in(cell)
                out.update((id(image), source) for image in images)
    return out


def _code_sources(doctree) -> list[str]:
    """The source of every code cell of the page: a drawing function is often defined in a folded
    cell that draws nothing itself (round 17b moved the figures into their answers that way), so
    the cells that show images alone miss its legend (chapters 11, 16 and 19's alt text read the
    default colour words under legends that said otherwise)."""
    from docutils import nodes

    return list(dict.fromkeys(zhfigures._source_in(cell) for cell in doctree.findall(nodes.Element)
                              if cell.get("nb_element") == "cell_code"))


def english_alt(titles: list[str], states: list[str], drawn: list[str] | None = None,
                legend: dict[str, str] | None = None) -> str:
    """The English alt text of a figure with these titles (from its cell's source; ``drawn``: as the
    figure drew them, used instead when known) and drawn states, each named as its legend names it
    (``legend``: a chart that gives grey the meaning "created, not started" must not be read out
    as "cancelled")."""
    parts = ([_sentence(t, drawn=True) for t in drawn] if drawn is not None
             else [_sentence(t) for t in titles if t.strip()])
    legend = legend or {}
    if states:
        parts.append(TIMELINE.format(states=", ".join(f"{legend.get(s, s)} ({zhfigures.COLOUR_NAMES[s]})"
                                                      for s in states)))
    return " ".join(parts) or UNTITLED


def chinese_alt(titles: list[str], states: list[str], title_words: dict[str, str],
                guide: dict[str, str], drawn: list[str] | None = None,
                legend: dict[str, str] | None = None) -> str:
    """The Chinese alt text: translated titles (an untranslated one is left out: the catalogue's
    check reports it; ``drawn``: the Chinese figure's titles as drawn, those in Chinese used
    instead when known), then the timeline sentence with the guide's Chinese state names."""
    if drawn is not None:
        parts = [_sentence(t, "。", drawn=True) for t in drawn if re.search(r"[\u4e00-\u9fff]", t)]
    else:
        parts = [_sentence(title_words[t], "。") for t in titles if title_words.get(t)]
    legend = {s: w for s, w in (legend or {}).items() if re.search(r"[\u4e00-\u9fff]", w)}
    names = [legend.get(s) or state_name(s, title_words, guide) for s in states]
    if states and all(names):
        colours = [guide.get(zhfigures.COLOUR_NAMES[s]) for s in states]
        # a name that starts with a Latin word (drain 等待) is set off by a space, as in the prose
        meaning = ("，".join(f"{c}表示{' ' * _latin(n)}{n}" for c, n in zip(colours, names, strict=True))
                   if all(colours)
                   else "颜色表示" + "、".join(names))
        parts.append(ZH_TIMELINE.format(states=meaning))
    return "".join(parts) or ZH_UNTITLED


def _latin(text: str) -> bool:
    """Whether ``text`` starts with a Latin letter or digit (Chinese then needs a space before it)."""
    return bool(re.match(r"[A-Za-z0-9]", text))


def state_name(state: str, title_words: dict[str, str], guide: dict[str, str]) -> str:
    """A state's Chinese name: the word the Chinese legend draws (``figures.po``), else the Chinese of
    the reading guide's legend cell (``waiting（等待）`` -> ``等待``); '' when neither has one."""
    name = title_words.get(state) or guide.get(state, "")
    gloss = re.fullmatch(r"[A-Za-z]+\s*（([^）]+)）", name)
    return gloss.group(1) if gloss else name


def add_alt(app, doctree, docname: str) -> int:
    """Set ``alt`` on every figure of ``doctree`` that has none (or whose alt is its path); returns
    how many it set."""
    from lab_snippets.book.cjk import is_chinese

    chinese = is_chinese(app.config.language)
    if chinese:
        title_words, guide = zhfigures.title_words(), zhfigures.guide_words()
    done = 0
    sources = _sources(doctree)
    page = _code_sources(doctree)
    defined = zhfigures.function_sources(page)  # where a figure's drawing is defined
    bindings = module_dicts(page)  # a drawing function's `meanings=NAME` may name one of these
    for image, titles in zhfigures.figures(doctree):
        alt = image.get("alt", "")
        if alt and alt != image.get("uri") and not alt.endswith(".png"):
            continue
        path = zhfigures.image_path(image, Path(app.srcdir))
        states = zhfigures.states_drawn(path) if path is not None else []
        drawn = drawn_titles(path) if path is not None else None
        source = sources.get(id(image), "")
        legend = meanings_in(source) or {  # or the legend of the drawing function the cell calls
            state: word for name in zhfigures.reachable_names(source, defined)
            for state, word in meanings_in(bindings + defined.get(name, "")).items()}
        if chinese:
            legend = {s: title_words[w] for s, w in legend.items() if title_words.get(w)}
        image["alt"] = (chinese_alt(titles, states, title_words, guide, drawn, legend) if chinese
                        else english_alt(titles, states, drawn, legend))
        done += 1
    return done


def keep_edition(app, doctree, docname: str) -> int:
    """Remove from ``doctree`` the figures drawn for the other edition (``lab_snippets.figlang``: the
    build displays each figure twice, English and Chinese). A word a Chinese figure lacked stays
    English in it and fails ``tests/test_book.py``, as an untranslated message fails the i18n tests;
    the build goes on. Returns how many it removed."""
    from docutils import nodes

    from lab_snippets import figlang
    from lab_snippets.book.cjk import is_chinese

    edition = "zh_CN" if is_chinese(app.config.language) else "en"
    removed = 0
    for image in list(doctree.findall(nodes.image)):
        path = zhfigures.image_path(image, Path(app.srcdir))
        drawn_for, _ = figlang.edition_of(path) if path is not None else (None, [])
        if drawn_for is None:
            continue
        if drawn_for != edition:
            node = image
            while node.parent is not None and len(node.parent.children) == 1 \
                    and node.parent.get("nb_element") != "cell_code_output":
                node = node.parent
            node.parent.remove(node)
            removed += 1
    return removed


def _keep_edition(app, doctree, docname) -> None:
    if app.builder.format == "html":
        keep_edition(app, doctree, docname)


def _doctree_resolved(app, doctree, docname) -> None:
    if app.builder.format == "html":
        add_alt(app, doctree, docname)


def setup(app):
    app.connect("doctree-resolved", _keep_edition, priority=400)  # before the zh keys and the alt text
    app.connect("doctree-resolved", _doctree_resolved)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
