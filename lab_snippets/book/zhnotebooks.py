"""The chapters as Chinese notebooks: markdown from the zh catalogues, code unchanged (issue 26).

    python -m lab_snippets.book.zhnotebooks build/zh_notebooks   # every chapter as py:percent, in Chinese

The Chinese edition's build writes the same into its pages' downloads (``_sources/notebooks/``):
the ``.py`` made from the chapter's source (hidden cells left out, as on the English page) and
the ``.ipynb`` made from the executed notebook the English page offers (same code, same outputs).
Nothing is committed: both are made from the sources and the catalogues at each build.

Each markdown block (paragraph, heading, list item, quote) is looked up in the chapter's catalogue
by its text as Sphinx's gettext builder extracts it (lines joined by a space) and replaced by its
translation, keeping the block's marker (``#``, ``1.``, ``-``, ``>``), and each cell of a table
row likewise; a block with no current translation (code in a fence) stays as it is. The line under the title
that quotes the original series' title is left out, as on the Chinese page.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from lab_snippets import REPO_ROOT

ROOT = REPO_ROOT


def catalogue_table(root: Path, stem: str) -> dict[str, str]:
    """``{English: Chinese}`` of a chapter's catalogue (translated, not fuzzy)."""
    from lab_snippets.book.i18n import _messages, pages_dir, read_po

    path = pages_dir(root) / "notebooks" / f"{stem}.po"
    if not path.exists():
        return {}
    return {m.id: m.string for m in _messages(read_po(path)) if m.string and not m.fuzzy}


def _joined(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def translate_markdown(source: str, table: dict[str, str], drop: str | None = None) -> str:
    """``source`` (one markdown cell) with every block whose text the table knows in Chinese;
    a paragraph whose text is ``drop`` is left out."""
    from markdown_it import MarkdownIt

    lines = source.split("\n")
    replace: dict[int, tuple[int, str | None]] = {}
    for token in MarkdownIt("commonmark").parse(source):
        if token.type != "inline" or not token.map:
            continue
        start, end = token.map
        key = _joined(token.content)
        if drop is not None and key == drop:
            replace[start] = (end, None)
            continue
        chinese = table.get(key)
        first = token.content.split("\n", 1)[0].strip()
        if not chinese or chinese == key or not first or first not in lines[start]:
            continue
        prefix = lines[start][: lines[start].index(first)]
        replace[start] = (end, prefix + chinese)
    out, i = [], 0
    while i < len(lines):
        if i in replace:
            end, text = replace[i]
            if text is not None:
                out.append(text)
            elif out and not out[-1].strip() and end < len(lines) and not lines[end].strip():
                end += 1  # a dropped paragraph takes one of the blank lines around it
            i = end
            continue
        out.append(_table_row(lines[i], table))
        i += 1
    return "\n".join(out)


_DIRECTIVE = re.compile(r"^(\s*(?::{3,}|`{3,})\{[\w-]+\}[ \t]+)(\S.*?)\s*$")


def _table_row(line: str, table: dict[str, str]) -> str:
    """A directive's title line (``:::{dropdown} Title``, whose title is a message of its own, as
    Sphinx's gettext extracts it) or a markdown table row, in Chinese where the table knows the
    title or a cell (one message per cell)."""
    directive = _DIRECTIVE.match(line)
    if directive:
        return directive.group(1) + table.get(directive.group(2), directive.group(2))
    if not line.lstrip().startswith("|") or set(line.strip()) <= set("|-: "):
        return line
    cells = line.strip().strip("|").split("|")
    return "| " + " | ".join(table.get(c.strip(), c.strip()) for c in cells) + " |"


def _translate_cells(cells, table: dict[str, str], original: str | None) -> int:
    """Translate the markdown cells in place (jupytext or nbformat-JSON cells); how many changed."""
    changed = 0
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        new = translate_markdown(source, table, drop=f"*{original}*" if original else None)
        if new != source:
            cell["source"] = new
            changed += 1
    return changed


def zh_py(chapter, root: Path = ROOT) -> str:
    """The chapter's ``.py`` (py:percent, hidden cells left out) with its markdown in Chinese."""
    import jupytext

    from lab_snippets.book.pages import page_source

    nb = jupytext.reads(page_source(chapter.path.read_text(encoding="utf-8")), fmt="py:percent")
    _translate_cells(nb.cells, catalogue_table(root, chapter.stem), chapter.original)
    return jupytext.writes(nb, fmt="py:percent")


def zh_ipynb(notebook: dict, chapter, root: Path = ROOT) -> dict:
    """An executed notebook (nbformat JSON) with its markdown in Chinese, code and outputs kept."""
    _translate_cells(notebook["cells"], catalogue_table(root, chapter.stem), chapter.original)
    return notebook


def chinese_cells(cells, stem: str, root: Path = ROOT) -> int:
    """Translate the markdown cells of chapter ``stem`` in place (the student release in Chinese:
    ``python -m lab_snippets.labs release --lang zh_CN``); code cells are left as they are.
    Returns how many cells changed; a chapter without a Chinese catalogue raises ``LookupError``."""
    from lab_snippets.book.chapters import existing

    table = catalogue_table(root, stem)
    if not table:
        raise LookupError(f"no Chinese catalogue for {stem} (locale/zh_CN/LC_MESSAGES/notebooks/{stem}.po)")
    chapter = next((c for c in existing() if c.stem == stem), None)
    return _translate_cells(cells, table, chapter.original if chapter else None)


def write_downloads(root: Path, html: Path) -> int:
    """Make the chapter downloads of the Chinese edition's pages (in ``html/_sources/notebooks``)
    Chinese; how many files were written."""
    from lab_snippets.book.chapters import existing

    folder = Path(html) / "_sources" / "notebooks"
    written = 0
    for chapter in existing():
        py = folder / chapter.path.name
        if py.exists():
            py.write_text(zh_py(chapter, root), encoding="utf-8")
            written += 1
        ipynb = folder / f"{chapter.stem}.ipynb"
        if ipynb.exists():
            nb = zh_ipynb(json.loads(ipynb.read_text(encoding="utf-8")), chapter, root)
            ipynb.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    from lab_snippets.book.chapters import existing

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    for chapter in existing():
        (out / chapter.path.name).write_text(zh_py(chapter, ROOT), encoding="utf-8")
    print(f"wrote {len(existing())} Chinese notebooks (py:percent) to {out}; open them with "
          f"`jupyter lab {out}` (jupytext opens a .py as a notebook)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
