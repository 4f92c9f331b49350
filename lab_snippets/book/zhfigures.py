"""A key in Chinese under each timeline figure of the Chinese edition (issue 26, item 4).

The figures are PNGs that the chapters drew while the English build executed them; the Chinese
edition renders from the same jupyter cache, so their title, lane names and legend stay English
(drawing them in Chinese would mean executing every chapter a second time). Instead, each figure
that `Timeline.plot` drew gets a short paragraph under it, in Chinese, that names what its lanes,
its axis and each of its colours mean, with a link to the reading guide's legend.

Which states a figure uses is read from the picture itself: `Timeline.plot` fills every bar and
legend patch (about 23 by 7 pixels inside its edge) with the state's exact colour (``STATE_COLOURS``),
so a state is drawn when more than ``MIN_SOLID`` pixels of that colour have all four neighbours of it
too (anti-aliased text has stray pixels of any grey, never a solid patch); a figure with none of
them is not a timeline and gets no key.
The words come from the catalogues: the colour and state names from the reading guide's legend
table (``locale/zh_CN/LC_MESSAGES/book/reading_guide.po``), the sentence from ``theme.po``.
"""

from __future__ import annotations

from pathlib import Path

from lab_snippets import REPO_ROOT
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


def _image_path(node, srcdir: Path) -> Path | None:
    uri = (node.get("candidates") or {}).get("*") or node.get("uri", "")
    path = Path(uri) if Path(uri).is_absolute() else Path(srcdir) / uri
    return path if path.suffix == ".png" and path.is_file() else None


def add_keys(app, doctree, docname: str, words: dict[str, str], root: Path = ROOT) -> int:
    """Put a Chinese key under every timeline figure of ``doctree``; returns how many it added."""
    from docutils import nodes

    guide = guide_words(root)
    added = 0
    for image in list(doctree.findall(nodes.image)):
        path = _image_path(image, Path(app.srcdir))
        states = states_drawn(path) if path else []
        text = key_text(states, words, guide) if states else None
        if text is None:
            continue
        sentence, title = text
        link = nodes.reference("", "", nodes.Text(f"《{title}》"), internal=True,
                               refuri=f"{app.builder.get_relative_uri(docname, GUIDE)}#{GUIDE_ANCHOR}")
        key = nodes.paragraph("", "", nodes.Text(sentence), link, nodes.Text("。"), classes=["zh-figure-key"])
        image.parent.insert(image.parent.index(image) + 1, key)
        added += 1
    return added
