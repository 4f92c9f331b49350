"""The check lines of the Chinese edition in Chinese: ``✓ ...`` printed by a chapter's checks.

A chapter's checks end with a line that says what held (``print(f"✓ the Task's body started only
when the caller suspended")``). The chapter runs once, in English; its outputs are the same for
both editions (the jupyter cache). In the Chinese edition each output line that begins with ``✓``
is looked up in ``locale/zh_CN/checks.po`` and shown in Chinese (``zhui``, when the page's doctree
is resolved); the English edition and the notebook keep what the program printed. At the same step
the cell's displayed source gets the same Chinese in the ``print`` call that printed the line
(``translate_source``: ``print(f"✓ 已完成 {x} 个")``, each field written as in the code), so the
check's code and its output agree on the page; what runs, and every grading digest, stay English.

The catalogue's messages are the checks' print templates, read from the chapters' code with
``ast``: a constant string as it is, an f-string with each replacement field written as its
expression (``{state}``, ``{len(done)}``). A line matches a template when the template's text
matches and each field matches any text; the translation names the same fields, in any order, and
gets the values the line had. ``python -m lab_snippets.book.zhchecks update`` adds the templates
of the current chapters (a changed one loses its translation) and ``status`` counts what is
missing; ``tests/test_zhchecks.py`` fails on an untranslated template or a field the translation
lost.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from pathlib import Path

from lab_snippets import REPO_ROOT

ROOT = REPO_ROOT
MARK = "✓"
_FIELD = re.compile(r"\{[^{}]+\}")


def catalogue_path(root: Path = ROOT) -> Path:
    return Path(root) / "locale" / "zh_CN" / "checks.po"


def _alternatives(node: ast.expr) -> list[str]:
    """The texts one argument of ``print`` can show, as templates: a string as it is, an f-string
    with each field as its expression, each branch of ``"a" if c else "b"``, each pairing of the two
    sides of ``+``, any other value as a field (``{len(done)}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value.replace("{", "{{").replace("}", "}}")]
    if isinstance(node, ast.JoinedStr):
        out = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                out.append(str(value.value).replace("{", "{{").replace("}", "}}"))
            elif isinstance(value, ast.FormattedValue):
                out.append("{" + ast.unparse(value.value) + "}")
        return ["".join(out)]
    if isinstance(node, ast.IfExp):
        return _alternatives(node.body) + _alternatives(node.orelse)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # "a" + ("b" if c else "")
        return [left + right for left in _alternatives(node.left) for right in _alternatives(node.right)]
    return ["{" + ast.unparse(node) + "}"]


def _print_templates(call: ast.Call) -> list[str]:
    """What one ``print(...)`` call can print, as templates (its arguments joined by ``sep``)."""
    import itertools

    sep = " "
    for keyword in call.keywords:
        if keyword.arg == "sep" and isinstance(keyword.value, ast.Constant) \
                and isinstance(keyword.value.value, str):
            sep = keyword.value.value
    choices = [_alternatives(arg) for arg in call.args if not isinstance(arg, ast.Starred)]
    return [sep.join(parts) for parts in itertools.product(*choices)][:8]


def templates_in(source: str) -> list[str]:
    """The check templates printed by one cell's code (lines of IPython magic left out): each
    ``print`` whose text begins with ✓, whole (several arguments, several lines)."""
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print" and node.args:
            found += [text for text in _print_templates(node) if text.startswith(MARK)]
    return found


def places(root: Path = ROOT) -> dict[str, str]:
    """``{template: the chapter file that prints it first}``, in chapter and cell order."""
    import jupytext

    from lab_snippets.book import chapters

    seen: dict[str, str] = {}
    for path in chapters.files_in(Path(root)):
        for cell in jupytext.read(path, fmt="py:percent").cells:
            if cell.cell_type == "code":
                for template in templates_in(cell.source):
                    seen.setdefault(template, path.name)
    return seen


def templates(root: Path = ROOT) -> list[str]:
    """Every chapter's check templates, in chapter and cell order, each once."""
    return list(places(root))


def fields(template: str) -> list[str]:
    return _FIELD.findall(template.replace("{{", "").replace("}}", ""))


@cache
def _table(path: str) -> list[tuple[re.Pattern, list[str], str, int]]:
    """The catalogue's translated templates as (pattern, field names, Chinese, lines), the longest
    first (a template of two lines is tried before one that matches its first line alone)."""
    from lab_snippets.book.i18n import read_po

    entries = []
    if not Path(path).is_file():
        return entries
    for message in read_po(Path(path)):
        if not message.id or not message.string or message.fuzzy:
            continue
        names = fields(message.id)
        parts = _FIELD.split(message.id.replace("{{", "\0").replace("}}", "\1"))
        parts = [p.replace("\0", "{").replace("\1", "}") for p in parts]
        pattern = re.compile("^" + "(.*?)".join(map(re.escape, parts)) + "$", re.S)
        entries.append((pattern, names, message.string, message.id.count("\n") + 1))
    return sorted(entries, key=lambda e: -e[3])


def translate(line: str, root: Path = ROOT) -> str | None:
    """``line`` (what one check printed, one or more lines) in Chinese, or None when no template
    matches it."""
    for pattern, names, chinese, _lines in _table(str(catalogue_path(root))):
        match = pattern.match(line)
        if match:
            return _filled(chinese, dict(zip(names, match.groups(), strict=True)))
    return None


def _filled(chinese: str, values: dict[str, str]) -> str:
    out = _FIELD.sub(lambda m: values.get(m.group(0), m.group(0)),
                     chinese.replace("{{", "\0").replace("}}", "\1"))
    return out.replace("\0", "{").replace("\1", "}")


def translate_output(text: str, root: Path = ROOT) -> tuple[str, int]:
    """``text`` (an output block) with what each check printed in Chinese, where the catalogue
    has it; and how many checks changed."""
    entries = _table(str(catalogue_path(root)))
    spans = sorted({n for *_, n in entries}, reverse=True)
    lines, out, changed, i = text.split("\n"), [], 0, 0
    while i < len(lines):
        if lines[i].startswith(MARK):
            for n in spans:
                chinese = translate("\n".join(lines[i:i + n]), root) if i + n <= len(lines) else None
                if chinese is not None:
                    out.append(chinese)
                    changed, i = changed + 1, i + n
                    break
            else:
                out.append(lines[i])
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out), changed


def translate_doctree(doctree, root: Path = ROOT) -> int:
    """The check lines of a page's outputs in Chinese (MyST-NB writes a cell's printed text as a
    ``literal_block`` with the ``output`` class); returns how many lines changed."""
    return _rewrite_blocks(doctree, lambda block: "output" in block.get("classes", []),
                           lambda text: translate_output(text, root))


def _rewrite_blocks(doctree, chosen, rewrite) -> int:
    """Each ``literal_block`` of ``doctree`` that ``chosen`` picks and that has a ✓, rewritten by
    ``rewrite`` (text -> (text, changes)); returns the changes."""
    from docutils import nodes

    changed = 0
    for block in doctree.findall(nodes.literal_block):
        if not chosen(block) or MARK not in block.astext():
            continue
        text, n = rewrite(block.astext())
        if n:
            block.children = [nodes.Text(text)]
            block.rawsource = text
            changed += n
    return changed


@cache
def _ids(path: str) -> dict[str, str]:
    from lab_snippets.book.i18n import read_po

    if not Path(path).is_file():
        return {}
    return {m.id: m.string for m in read_po(Path(path)) if m.id and m.string and not m.fuzzy}


def _field_code(value: ast.FormattedValue) -> str:
    """A replacement field as the code writes it: the expression, ``!r``, ``:spec``."""
    code = "{" + ast.unparse(value.value)
    if value.conversion != -1:
        code += "!" + chr(value.conversion)
    if value.format_spec is not None:
        code += ":" + "".join(
            str(part.value).replace("{", "{{").replace("}", "}}") if isinstance(part, ast.Constant)
            else _field_code(part) for part in value.format_spec.values)
    return code + "}"


def _fields_as_written(args: list[ast.expr]) -> dict[str, str]:
    """``{template field: its code}`` for the arguments of one print call (as ``_alternatives``
    reads them: an f-string's fields, a branch or side that is no string, any other value)."""
    written: dict[str, str] = {}

    def read(node: ast.expr) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return
        if isinstance(node, ast.JoinedStr):
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    written["{" + ast.unparse(value.value) + "}"] = _field_code(value)
        elif isinstance(node, ast.IfExp):
            read(node.body), read(node.orelse)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            read(node.left), read(node.right)
        else:
            written["{" + ast.unparse(node) + "}"] = "{" + ast.unparse(node) + "}"

    for arg in args:
        read(arg)
    return written


def _literal(chinese: str, written: dict[str, str], quote: str) -> str:
    """Python source of a string literal that prints ``chinese`` (a catalogue template): an
    f-string with each field as the code wrote it, or a plain string when it has no field."""
    names = fields(chinese)
    pieces = re.split(r"(\{\{|\}\}|\{[^{}]+\})", chinese)
    if any(code.count(quote) for name, code in written.items() if name in names):
        quote = "'" if quote == '"' else '"'
    out = []
    for piece in pieces:
        if piece in ("{{", "}}"):
            out.append(piece if names else piece[0])
        elif _FIELD.fullmatch(piece) and piece in names:
            out.append(written[piece])
        else:
            for char in piece:
                if char in ("\\", quote):
                    out.append("\\" + char)
                elif char == "\n":
                    out.append("\\n")
                elif not char.isprintable():
                    out.append(repr(char)[1:-1])
                else:
                    out.append(char)
    return ("f" if names else "") + quote + "".join(out) + quote


def translate_source(source: str, root: Path = ROOT) -> tuple[str, int]:
    """``source`` (a cell's code as the page shows it) with each ``print`` of a check whose
    template the catalogue translates saying its Chinese: the arguments become one literal, each
    field as the code wrote it (``{x!r}``, ``{share:.0%}``), a template of several lines one
    literal per line, a print that says one of two texts by one ``if``/``else`` the two literals
    on either side of that condition; a print the catalogue lacks (or more than two texts) stays
    as it is. Returns the source and how many calls changed."""
    chinese_of = _ids(str(catalogue_path(root)))
    if not chinese_of or MARK not in source:
        return source, 0
    lines = source.splitlines(keepends=True)
    code = "".join("\n" if line.lstrip().startswith(("%", "!")) else line for line in lines)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return source, 0
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:  # ast's columns count UTF-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode())

    edits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print" and node.args):
            continue
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            continue
        made = _print_templates(node)
        choices = [n for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.IfExp)]
        # one text, or the two of one ``if``/``else`` (``"a" + ("b" if c else "")``)
        if not made[0].startswith(MARK) or any(t not in chinese_of for t in made) \
                or not (len(made) == 1 or (len(made) == 2 and len(choices) == 1)):
            continue
        written = _fields_as_written(node.args)
        if not all(set(fields(chinese_of[t])) <= set(written) for t in made):
            continue
        first, last = node.args[0], node.args[-1]
        start, end = offset(first.lineno, first.col_offset), offset(last.end_lineno, last.end_col_offset)
        opening = source[start:end].lstrip("rRbBuUfF")[:1]
        quote = opening if opening in ("'", '"') else '"'
        indent = " " * (start - starts[first.lineno - 1])
        said = [("\n" + indent).join(_literal(part, written, quote) for part in
                                     re.split(r"(?<=\n)(?=.)", chinese_of[t], flags=re.S)) for t in made]
        if len(said) == 2:
            gap = " " if first.lineno == last.end_lineno else "\n" + indent  # on one line if it was
            said = [f"{said[0]}{gap}if {ast.unparse(choices[0].test)}{gap}else {said[1]}"]
        edits.append((start, end, said[0]))
    out, changed, done = source, 0, len(source) + 1
    for start, end, text in sorted(edits, reverse=True):
        if end <= done:  # not inside a call already rewritten
            out, changed, done = out[:start] + text + out[end:], changed + 1, start
    return out, changed


def translate_sources(doctree, root: Path = ROOT) -> int:
    """The check prints in the code cells of a page (MyST-NB's ``cell_input`` containers) in the
    Chinese their output lines are shown in; returns how many calls changed."""
    return _rewrite_blocks(doctree, lambda block: block.parent is not None
                           and "cell_input" in block.parent.get("classes", []),
                           lambda text: translate_source(text, root))


def problems(root: Path = ROOT) -> list[str]:
    """Templates the catalogue lacks or leaves untranslated or fuzzy, and translations that lost or
    invented a field."""
    from lab_snippets.book.i18n import read_po

    path = catalogue_path(root)
    have = {m.id: m for m in read_po(path) if m.id} if path.is_file() else {}
    found = []
    for template in templates(root):
        message = have.get(template)
        if message is None:
            found.append(f"not in {path.name}: {template!r} "
                         "(run `python -m lab_snippets.book.zhchecks update`)")
        elif not message.string or message.fuzzy:
            found.append(f"untranslated: {template!r}")
        elif sorted(fields(message.string)) != sorted(fields(template)):
            found.append(f"fields differ: {template!r} has {fields(template)}, the translation "
                         f"{fields(message.string)}")
        else:
            from lab_snippets.book.zhterms import problems as zh_rules

            found += [f"{template!r}: {problem}" for problem in zh_rules(message.string, root)]
    return found


def update(root: Path = ROOT) -> tuple[int, int]:
    """Add the current templates to the catalogue and drop the ones no chapter prints; (added, dropped)."""
    from babel.messages.catalog import Catalog

    from lab_snippets.book.i18n import LANG, read_po, write_po

    path = catalogue_path(root)
    previous = read_po(path) if path.is_file() else None
    old = {m.id: m for m in previous if m.id} if previous is not None else {}
    catalog = Catalog(locale=LANG, project="slime concurrency course: check lines", fuzzy=False,
                      creation_date=previous.creation_date if previous is not None else None)
    wanted = places(root)
    for template, chapter in wanted.items():
        message = old.get(template)
        catalog.add(template, message.string if message else "", locations=[(chapter, 0)],
                    flags=("fuzzy",) if message is not None and message.fuzzy else ())
    write_po(catalog, path)
    _table.cache_clear()
    _ids.cache_clear()
    return len(set(wanted) - set(old)), len(set(old) - set(wanted))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["update"]:
        added, dropped = update()
        print(f"{catalogue_path().relative_to(ROOT)}: {added} templates added, {dropped} dropped")
        return 0
    if args[:1] == ["status"]:
        found = problems()
        print("\n".join(found) or f"every check line of the chapters has its Chinese ({len(templates())})")
        return 1 if found else 0
    print("usage: python -m lab_snippets.book.zhchecks update|status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
