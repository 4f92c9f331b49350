"""A key in Chinese under each timeline figure of the Chinese edition (issue 26, item 4).

The figures are PNGs that the chapters drew while the English build executed them; the Chinese
edition renders from the same jupyter cache, so their title, lane names and legend stay English
(drawing them in Chinese would mean executing every chapter a second time). Instead, each figure
that `Timeline.plot` drew gets a short paragraph under it, in Chinese: its title, then what its
lanes, its axis and each of its colours mean, with a link to the reading guide's legend; any other
figure gets its title.

A figure's title is read from the code of the cell that drew it (the string given to ``plot``,
``set_title`` or ``suptitle``; an f-string as written, ``f'... {name} ...'``; both sides of a
``a if ... else b``) and looked up in
``locale/zh_CN/figures.po``, which ``python -m lab_snippets.book.zhfigures update`` keeps in step
with the notebooks (new titles untranslated, gone ones removed; ``status`` counts what is left).

Which states a figure uses is read from the picture itself: `Timeline.plot` fills every bar and
legend patch (about 23 by 7 pixels inside its edge) with the state's exact colour (``STATE_COLOURS``),
so a state is drawn when more than ``MIN_SOLID`` pixels of that colour have all four neighbours of it
too (anti-aliased text has stray pixels of any grey, never a solid patch); a figure with none of
them is not a timeline and gets no key.
The words come from the catalogues: the colour and state names from the reading guide's legend
table (``locale/zh_CN/LC_MESSAGES/book/reading_guide.po``), the sentence from ``theme.po``.

Now that ``lab_snippets.figlang`` draws every figure again in Chinese, a title under it says nothing
new: a figure whose title has an entry in ``locale/zh_CN/figure_keys.po`` gets that key instead (what
the picture cannot say: which lane is what, what a mark or a line means) and, under a timeline, a link
to the reading guide; the others keep the title-and-colours key above.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from lab_snippets import REPO_ROOT, figlang
from lab_snippets.timeline import STATE_COLOURS

ROOT = REPO_ROOT
GUIDE = "book/reading_guide"
GUIDE_ANCHOR = "timelines"
#: The reading guide's name for each state's colour (its legend table, in English).
COLOUR_NAMES = {"running": "blue", "waiting": "light green", "blocked": "red", "cancelled": "grey",
                "failed": "orange", "cleanup": "purple"}
#: The key's sentence (English msgid; its Chinese is in theme.po): the colours, then the guide's title.
KEY = ("In this figure each lane on the left (work) is one piece of work (a task, thread or process, "
       "named by its label in the code) and the axis is time in seconds; the colours (state): %s; "
       "a short black tick marks an event. The legend is explained in")
MIN_SOLID = 20  # a legend patch alone has about 100 such pixels
TITLE_CALLS = ("plot", "set_title", "suptitle")  # Timeline.plot(title, ...), Axes.set_title, Figure.suptitle


def _tree(source: str):
    try:
        return compile(source, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError:
        return None


def titles_in(source: str) -> list[str]:
    """The figure titles a cell's code sets, in source order: the first argument of each
    ``.plot`` / ``.set_title`` / ``.suptitle`` call that is a string (an f-string as written)."""
    tree = _tree(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in TITLE_CALLS and node.args):
            continue
        choices = [node.args[0]]
        while isinstance(choices[-1], ast.IfExp):  # `a if cond else b`: the figure draws one of them
            choices[-1:] = [choices[-1].body, choices[-1].orelse]
        for first in choices:
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.strip():
                found.append((first.lineno, first.col_offset, first.value))
            elif isinstance(first, ast.JoinedStr):
                found.append((first.lineno, first.col_offset, ast.unparse(first)))
    return [title for *_, title in sorted(found)]


def lanes_in(source: str) -> list[str]:
    """The lane names a cell's code writes out: each string in the list or tuple given as ``lanes=``
    to any call (``tl.plot(..., lanes=[...])``); a name built at run time is not read."""
    tree = _tree(source)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg == "lanes" and isinstance(keyword.value, (ast.List, ast.Tuple)):
                found += [(item.lineno, item.col_offset, item.value) for item in keyword.value.elts
                          if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return [lane for *_, lane in sorted(found)]


def _in_chapters(read, root: Path) -> list[str]:
    """What ``read`` finds in every chapter's code, once each, in chapter order."""
    from lab_snippets.book.chapters import existing

    found: dict[str, None] = {}
    for chapter in existing():
        found.update(dict.fromkeys(read((Path(root) / "notebooks" / chapter.path.name).read_text(
            encoding="utf-8"))))
    return list(found)


def notebook_lanes(root: Path = ROOT) -> list[str]:
    """Every lane name the chapters write out in a ``lanes=`` list, once each, in chapter order."""
    return _in_chapters(lanes_in, root)


def notebook_titles(root: Path = ROOT) -> list[str]:
    """Every figure title in the chapters, once each, in chapter order."""
    return _in_chapters(titles_in, root)


def titles_path(root: Path = ROOT) -> Path:
    return Path(root) / "locale" / "zh_CN" / "figures.po"


def keys_path(root: Path = ROOT) -> Path:
    return Path(root) / "locale" / "zh_CN" / "figure_keys.po"


def figure_keys(root: Path = ROOT) -> dict[str, str]:
    """``{English title: Chinese key}`` of ``figure_keys.po``: for a figure now drawn in Chinese, what
    the picture cannot say (which lane is what, what a mark means), written in place of its title."""
    from lab_snippets.book.i18n import _messages, read_po

    path = keys_path(root)
    if not path.is_file():
        return {}
    return {m.id: m.string for m in _messages(read_po(path)) if m.string and not m.fuzzy}


#: The words before the link to the reading guide under a timeline whose key is its own.
GUIDE_LINK = "泳道和颜色的通用读法见"

DRAWN = "drawn by a figure (a lane, axis or legend word; numbers as {})"


def drawn_words(root: Path = ROOT) -> set[str]:
    """The entries of ``figures.po`` that come from what the figures drew, not from a title in the code."""
    from lab_snippets.book.i18n import _messages, read_po

    path = titles_path(root)
    return {m.id for m in _messages(read_po(path)) if DRAWN in m.auto_comments} if path.is_file() else set()


def title_words(root: Path = ROOT) -> dict[str, str]:
    """``{English title: Chinese}`` of ``figures.po`` (translated, not fuzzy)."""
    from lab_snippets.book.i18n import _messages, read_po

    path = titles_path(root)
    if not path.is_file():
        return {}
    return {m.id: m.string for m in _messages(read_po(path)) if m.string and not m.fuzzy}


def _figure_chunks(nb) -> list[dict[str, str]]:
    """The text chunks of every Chinese figure (``lab_snippets.figlang``) among ``nb``'s outputs."""
    import base64

    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png and output.get("metadata", {}).get(figlang.EDITION_KEY) == "zh_CN":
                found.append(figlang.png_text(base64.b64decode(png)))
    return found


def _has_figures(nb) -> bool:
    return any("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def as_pattern(word: str) -> str:
    """A figure word as its catalogue entry: every number a placeholder (``job 3`` -> ``job {}``,
    ``gather: 0.36 s`` -> ``gather: {} s``), so one entry serves every lane and every measurement."""
    return re.sub(r"\d+(?:\.\d+)?", "{}", word)


def cached_figure_words(root: Path = ROOT) -> dict[int, tuple[set[str], set[str]]]:
    """``{cache record: (words its Chinese figures hold, words they lacked)}`` over the book's
    jupyter cache; a record whose figures were drawn in English only (before ``figlang``, or not by
    the book build) or by another ``figlang.FORMAT`` maps to ``None``."""
    from jupyter_cache import get_cache

    from lab_snippets.book.chapters import cache_path

    if not (cache_path(root) / "global.db").exists():
        return {}
    cache = get_cache(str(cache_path(root)))
    found: dict[int, tuple[set[str], set[str]] | None] = {}
    for record in cache.list_cache_records():
        nb = cache.get_cache_bundle(record.pk).nb
        chunks = _figure_chunks(nb)
        if not chunks:
            found[record.pk] = None if _has_figures(nb) else (set(), set())
            continue
        if any(c.get(figlang.FORMAT_KEY) != figlang.FORMAT for c in chunks):
            found[record.pk] = None  # drawn by an older figlang: draw again
            continue
        words = {w for c in chunks for w in c.get(figlang.WORDS_KEY, "").split("\n") if w}
        missing = {w for c in chunks for w in c.get(figlang.MISSING_KEY, "").split("\n") if w}
        found[record.pk] = (words, missing)
    return found


def newest_records(root: Path = ROOT) -> set[int]:
    """The newest cache record of each notebook path: what the chapter drew when it last ran. The
    older records of a path are earlier versions of the chapter (a renamed lane, a title since
    changed) and must not bring their words back into figures.po."""
    from jupyter_cache import get_cache

    from lab_snippets.book.chapters import cache_path

    if not (cache_path(root) / "global.db").exists():
        return set()
    newest: dict[str, tuple] = {}
    for record in get_cache(str(cache_path(root))).list_cache_records():
        key = Path(record.uri).stem
        if key not in newest or (record.created, record.pk) > newest[key]:
            newest[key] = (record.created, record.pk)
    return {pk for _, pk in newest.values()}


def stale_records(root: Path = ROOT) -> set[int]:
    """Cached executions whose Chinese figures the current ``figures.po`` would draw differently (a
    word they lacked is translated now, or a word they drew is translated differently since the
    record was remembered: ``remember_figure_words``), or that drew no Chinese figure at all:
    ``preexec`` runs those chapters again, so a figure word's translation reaches the page without a
    manual cache reset."""
    stale = set()
    memo = _read_memo(root)
    for (pk, created), seen in _figure_words_by_record(root).items():
        if seen is None or any(figlang.translate(word) is not None for word in seen[1]):
            stale.add(pk)
            continue
        remembered = memo.get(f"{pk}@{created}")
        if remembered is not None and remembered != words_digest(seen[0]):
            stale.add(pk)
    return stale


def words_digest(words: set[str]) -> str:
    """A digest of how ``figures.po`` translates ``words`` now."""
    import hashlib

    text = "\n".join(f"{w}\t{figlang.translate(w) or ''}" for w in sorted(words))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def figure_memo(root: Path = ROOT) -> Path:
    return Path(root) / "_build" / ".figure-words.json"


def _read_memo(root: Path) -> dict[str, str]:
    import json

    try:
        memo = json.loads(figure_memo(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _figure_words_by_record(root: Path) -> dict[tuple[int, str], tuple[set[str], set[str]] | None]:
    """``cached_figure_words`` keyed by (record, its creation time): a record number can be reused."""
    from jupyter_cache import get_cache

    from lab_snippets.book.chapters import cache_path

    if not (cache_path(root) / "global.db").exists():
        return {}
    created = {r.pk: r.created.isoformat() for r in get_cache(str(cache_path(root))).list_cache_records()}
    return {(pk, created.get(pk, "")): seen for pk, seen in cached_figure_words(root).items()}


def remember_figure_words(root: Path = ROOT) -> None:
    """Write, for each cached execution not yet remembered, how ``figures.po`` translates the words
    its Chinese figures drew (run after the chapters executed: they drew with the catalogue as it is
    now), so that a later change to one of those translations makes ``stale_records`` run it again."""
    import json

    memo = _read_memo(root)
    live = {}
    for (pk, created), seen in _figure_words_by_record(root).items():
        if seen is not None:
            key = f"{pk}@{created}"
            live[key] = memo.get(key) or words_digest(seen[0])
    path = figure_memo(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(live, indent=0, sort_keys=True) + "\n", encoding="utf-8")


def cache_covers_every_chapter(root: Path = ROOT) -> bool:
    """Whether the book's jupyter cache holds a Chinese-figure execution of every chapter (a built
    book's does; a worktree that ran two chapters under nbval holds only those two)."""
    from jupyter_cache import get_cache

    from lab_snippets.book.chapters import cache_path, existing

    if not (cache_path(root) / "global.db").exists():
        return False
    cache = get_cache(str(cache_path(root)))
    found = cached_figure_words(root)
    covered = {Path(r.uri).stem for r in cache.list_cache_records() if found.get(r.pk)}
    return all(c.path.stem in covered for c in existing())


def drawn_entries(titles: list[str], old_drawn: list[str], fresh: set[str],
                  complete: bool) -> list[str]:
    """The drawn words ``figures.po`` keeps besides the titles: those the cache's figures hold and,
    unless the cache covers every chapter, every one it held before (a chapter the cache lacks still
    draws its words: dropping them lost their translations, session 15)."""
    keep = set(fresh) if complete else set(fresh) | set(old_drawn)
    return sorted(keep - set(titles) - {as_pattern(t) for t in titles})  # a title is its own entry


def update(root: Path = ROOT, prune: bool = False) -> tuple[int, int]:
    """Bring ``figures.po`` in step with the notebooks' titles and the words the cached executions'
    figures draw (lane names, axis labels, legends), and the lane names the code writes out (a lane
    renamed in a chapter is added without a build); returns (added, removed). A drawn word leaves
    the catalogue only with ``prune`` (``update --prune``, right after a full book build) and a cache
    that covers every chapter: a cache holds what some build ran, which may be older than the
    chapters or cover only some of them (a worktree's nbval runs), so by default words are added,
    never dropped."""
    from babel.messages.catalog import Catalog

    from lab_snippets.book.i18n import _messages, read_po, write_po

    path = titles_path(root)
    old = {m.id: m.string for m in _messages(read_po(path))} if path.is_file() else {}
    titles = notebook_titles(root)
    newest = newest_records(root)
    seen = [v for pk, v in cached_figure_words(root).items() if v and pk in newest]
    drawn = drawn_entries(titles, [w for w in old if w not in titles],
                          {as_pattern(w) for words, _ in seen for w in words}
                          | {as_pattern(w) for w in notebook_lanes(root)},
                          complete=prune and cache_covers_every_chapter(root))
    titles = titles + drawn
    if list(old) == titles:
        return 0, 0  # nothing to change: the file (and its date) stays as it is
    catalog = Catalog(locale="zh_CN", project="slime course: figure titles", fuzzy=False)
    for title in titles:
        catalog.add(title, old.get(title, ""), auto_comments=[DRAWN] if title in drawn else [])
    write_po(catalog, path)
    return len(set(titles) - set(old)), len(set(old) - set(titles))


def states_drawn(png: Path) -> list[str]:
    """The states whose exact colour fills a solid patch of the PNG (see above), in legend order."""
    import matplotlib.image as mpimg
    import numpy as np

    image = mpimg.imread(png)
    if image.ndim != 3:
        return []
    rgb = np.round(image[..., :3] * (255 if image.dtype.kind == "f" else 1)).astype(np.int64)
    packed = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]

    def solid(colour: str) -> int:
        m = packed == int(colour[1:], 16)
        inner = m[1:-1, 1:-1] & m[:-2, 1:-1] & m[2:, 1:-1] & m[1:-1, :-2] & m[1:-1, 2:]
        return int(inner.sum())

    return [state for state, colour in STATE_COLOURS.items() if solid(colour) > MIN_SOLID]


def guide_words(root: Path = ROOT) -> dict[str, str]:
    """``{English: Chinese}`` of the reading guide's catalogue (its legend table and its title)."""
    from lab_snippets.book.i18n import _messages, pages_dir, read_po

    path = pages_dir(root) / "book" / "reading_guide.po"
    return {m.id: m.string for m in _messages(read_po(path)) if m.string and not m.fuzzy}


def key_text(states: list[str], words: dict[str, str], guide: dict[str, str]) -> tuple[str, str] | None:
    """The key's Chinese sentence for a figure that uses ``states`` and the guide's Chinese title,
    or None while a word is missing from the catalogues (the figure then stays without a key)."""
    sentence, title = words.get(KEY), guide.get("How to read an experiment")
    names = [(guide.get(COLOUR_NAMES[s]), guide.get(s)) for s in states]
    if not sentence or not title or not all(c and n for c, n in names):
        return None
    return sentence % "、".join(f"{c} {n}" for c, n in names), title


def _source_in(cell) -> str:
    """The code of ``cell`` (a ``cell_code`` container), found from the cell down."""
    from docutils import nodes

    for part in cell.findall(nodes.Element):
        if part.get("nb_element") == "cell_code_source":
            return next((b.astext() for b in part.findall(nodes.literal_block)), "")
    return ""


def drawing_functions(sources) -> dict[str, list[str]]:
    """``{function name: the titles its body sets}`` over a page's code cells: an answer cell that
    ends with ``draw_slots(...)`` draws the figure a folded cell above defines (round 17: figures
    moved into their answer folds that way lost their Chinese key)."""
    titles = {name: titles_in(code) for name, code in function_sources(sources).items()}
    return {name: found for name, found in titles.items() if found}


def function_sources(sources) -> dict[str, str]:
    """``{function name: its definition's code}`` over a page's code cells (see ``drawing_functions``)."""
    found: dict[str, str] = {}
    for source in sources:
        tree = _tree(source)
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[node.name] = ast.unparse(node)
    return found


def called_names(source: str) -> list[str]:
    """The plain names a cell's code calls (``draw_slots(run, ax)`` -> ``draw_slots``), in order."""
    tree = _tree(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)] if tree else []
    return list(dict.fromkeys(c.func.id for c in sorted(calls, key=lambda c: (c.lineno, c.col_offset))
                              if isinstance(c.func, ast.Name)))


def reachable_names(source: str, defined: dict[str, str], depth: int = 4) -> list[str]:
    """The names a cell's code calls, then the names their definitions on the page call, and so on
    (``depth`` levels): an answer cell that calls ``report(...)``, whose body calls ``draw(...)``,
    draws what ``draw`` sets (chapter 02 after session 25's round 7 lost its legend's words)."""
    seen: list[str] = []
    frontier = called_names(source)
    for _ in range(depth):
        new = [name for name in dict.fromkeys(frontier) if name not in seen]
        seen += new
        frontier = [inner for name in new for inner in called_names(defined.get(name, ""))]
    return seen


def figures(doctree):
    """Each image of ``doctree`` with the English titles its cell's code sets: one title each when
    the cell draws as many figures as it sets titles (two ``plt.subplots`` figures), else all of
    them (one figure of two timelines: ``tl.plot(title, ax=top)``, ``tl.plot(title, ax=bottom)``).

    Cells are found from the top down, not from an image up: MyST-NB's fold of a whole cell
    (``hide-cell``) puts the cell's children in a node whose ``parent`` it never sets."""
    from docutils import nodes

    cells = [c for c in doctree.findall(nodes.Element) if c.get("nb_element") == "cell_code"]
    sources = [_source_in(c) for c in cells]
    drawers, defined = drawing_functions(sources), function_sources(sources)
    in_cells: set[int] = set()
    for cell in cells:
        images = list(cell.findall(nodes.image))
        in_cells.update(id(image) for image in images)
        source = _source_in(cell) if images else ""
        titles = titles_in(source) or [t for name in reachable_names(source, defined)
                                       for t in drawers.get(name, [])]
        for i, image in enumerate(images):
            yield image, [titles[i]] if len(titles) == len(images) > 1 else titles
    for image in doctree.findall(nodes.image):
        if id(image) not in in_cells:
            yield image, []


def image_path(node, srcdir: Path) -> Path | None:
    uri = (node.get("candidates") or {}).get("*") or node.get("uri", "")
    path = Path(uri) if Path(uri).is_absolute() else Path(srcdir) / uri
    return path if path.suffix == ".png" and path.is_file() else None


def add_keys(app, doctree, docname: str, words: dict[str, str], root: Path = ROOT) -> int:
    """Put a Chinese key under every figure of ``doctree`` that has a translated title or is a
    timeline; returns how many it added."""
    from docutils import nodes

    guide, titles, keys = guide_words(root), title_words(root), figure_keys(root)
    added = 0
    for image, english in figures(doctree):
        path = image_path(image, Path(app.srcdir))
        if path is None:
            continue
        states = states_drawn(path)
        own = list(dict.fromkeys(keys[t] for t in english if t in keys))
        if own:  # the figure says its title and colours in Chinese: the key says only the rest
            key = "。".join(k.rstrip("。") for k in own) + "。"  # each subplot's key is its own sentence
            parts = [nodes.Text(f"图：{key}")]
            if states and guide.get("How to read an experiment"):
                link = nodes.reference("", "", nodes.Text(f"《{guide['How to read an experiment']}》"),
                                       internal=True, refuri=f"{app.builder.get_relative_uri(docname, GUIDE)}"
                                                         f"#{GUIDE_ANCHOR}")
                parts += [nodes.Text(GUIDE_LINK), link, nodes.Text("。")]
            image.parent.insert(image.parent.index(image) + 1,
                                nodes.paragraph("", "", *parts, classes=["zh-figure-key"]))
            added += 1
            continue
        chinese = "；".join(titles[t] for t in english if t in titles)
        text = key_text(states, words, guide) if states else None
        parts = [nodes.Text(f"图：{chinese}" + ("" if chinese[-1] in "。？！" else "。"))] if chinese else []
        if text is not None:
            sentence, title = text
            link = nodes.reference("", "", nodes.Text(f"《{title}》"), internal=True,
                                   refuri=f"{app.builder.get_relative_uri(docname, GUIDE)}#{GUIDE_ANCHOR}")
            parts += [nodes.Text(sentence), link, nodes.Text("。")]
        if not parts:
            continue
        key = nodes.paragraph("", "", *parts, classes=["zh-figure-key"])
        image.parent.insert(image.parent.index(image) + 1, key)
        added += 1
    return added


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args in (["update"], ["update", "--prune"]):
        added, removed = update(ROOT, prune="--prune" in args)
        print(f"{titles_path(ROOT)}: {added} new titles to translate, {removed} removed")
        return 0
    if args == ["status"]:
        titles, words = notebook_titles(ROOT), title_words(ROOT)
        missing = [t for t in titles if t not in words]
        print(f"{len(titles) - len(missing)} of {len(titles)} figure titles translated")
        for title in missing:
            print("  untranslated:", title)
        return 1 if missing else 0
    print("usage: python -m lab_snippets.book.zhfigures update [--prune]|status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
