"""The check lines of the zh edition in Chinese (lab_snippets/book/zhchecks.py, issue 42)."""

from docutils import nodes

from lab_snippets.book import zhchecks
from lab_snippets.book.i18n import LANG, write_po

CELL = '''x = 3
print("✓ plain words")
print(f"✓ {x} of {len([1, 2])} done")
print("not a check")
print(f"✓ first line\\n  second {x}")
print("✓ joined", "by sep:", x, "and", "one" if x else "none")
print("✓ added" + ("; and more" if x else ""))
'''


def test_templates_are_read_from_the_print_calls_with_their_fields():
    assert zhchecks.templates_in(CELL) == [
        "✓ plain words", "✓ {x} of {len([1, 2])} done", "✓ first line\n  second {x}",
        "✓ joined by sep: {x} and one", "✓ joined by sep: {x} and none",
        "✓ added; and more", "✓ added"]
    assert zhchecks.templates_in("%time x = 1\nprint('✓ after a magic')") == ["✓ after a magic"]


def _catalogue(tmp_path, pairs):
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale=LANG)
    for english, chinese in pairs:
        catalog.add(english, chinese)
    path = zhchecks.catalogue_path(tmp_path)
    write_po(catalog, path)
    zhchecks._table.cache_clear()
    zhchecks._ids.cache_clear()
    return tmp_path


def test_a_line_gets_its_values_in_the_translations_order_and_other_lines_stay(tmp_path):
    """Counterfactuals: fields filled by position (the reordered one swaps 3 and 2), or every
    output line translated (the data line changes)."""
    root = _catalogue(tmp_path, [("✓ {x} of {len(done)} done", "✓ 完成 {len(done)} 个中的 {x} 个"),
                                 ("✓ plain words", "✓ 纯文字")])
    assert zhchecks.translate("✓ 3 of 2 done", root) == "✓ 完成 2 个中的 3 个"
    assert zhchecks.translate("✓ something else", root) is None
    text, changed = zhchecks.translate_output("✓ plain words\n[1, 2]\n✓ 3 of 2 done", root)
    assert (text, changed) == ("✓ 纯文字\n[1, 2]\n✓ 完成 2 个中的 3 个", 2)
    block = nodes.literal_block("", "✓ plain words\n42", classes=["output", "stream"])
    source = nodes.literal_block("", "print('✓ plain words')", classes=["cell_input"])
    tree = nodes.section("", block, source)
    assert zhchecks.translate_doctree(tree, root) == 1
    assert block.astext() == "✓ 纯文字\n42" and source.astext() == "print('✓ plain words')"


def test_a_check_printed_on_two_lines_is_translated_whole(tmp_path):
    """Counterfactual: line by line, the second line (no ✓ of its own) stays English."""
    root = _catalogue(tmp_path, [
        ("✓ with the GIL:\n  at most one core busy", "✓ 有 GIL 时：\n  最多一个核在忙"),
        ("✓ with the GIL:", "✓ 错：只译了第一行")])
    text, changed = zhchecks.translate_output("✓ with the GIL:\n  at most one core busy\nrest", root)
    assert (text, changed) == ("✓ 有 GIL 时：\n  最多一个核在忙\nrest", 1)


CHECK = """x, share = 3, 0.5
print(f"✓ {x!r} of {len([1, 2])} done, {share:.0%} in time")
print("✓ plain words")
print("✓ joined:", x)
print("✓ not in the catalogue")
print("✓ two lines:\\n"
      "  the second")
print("✓ either" if x else "✓ or")
"""


def test_the_displayed_check_code_prints_the_chinese_of_its_output(tmp_path):
    """The zh page's code says in its print the template its output line is shown in, each field
    as the code wrote it. Counterfactuals: a template the catalogue lacks stays English; a
    translation that reorders the fields keeps each one's ``!r`` and ``:spec``."""
    root = _catalogue(tmp_path, [
        ("✓ {x} of {len([1, 2])} done, {share} in time", "✓ 按时完成 {share}，{len([1, 2])} 个中的 {x} 个"),
        ("✓ plain words", "✓ 纯文字 “引号” 与 {{花括号}}"),
        ("✓ joined: {x}", "✓ 拼接：{x}"),
        ("✓ two lines:\n  the second", "✓ 两行：\n  第二行"),
        ("✓ either", "✓ 其一"), ("✓ or", "✓ 其二")])
    text, changed = zhchecks.translate_source(CHECK, root)
    assert changed == 5
    assert text.splitlines() == [
        "x, share = 3, 0.5",
        'print(f"✓ 按时完成 {share:.0%}，{len([1, 2])} 个中的 {x!r} 个")',
        'print("✓ 纯文字 “引号” 与 {花括号}")',
        'print(f"✓ 拼接：{x}")',
        'print("✓ not in the catalogue")',
        'print("✓ 两行：\\n"',
        '      "  第二行")',
        'print("✓ 其一" if x else "✓ 其二")']
    english, printed = [], []  # what the zh page shows the code print is what it shows it printed
    exec(CHECK, {"print": lambda *args: english.append(" ".join(map(str, args)))})
    exec(text, {"print": lambda *args: printed.append(" ".join(map(str, args)))})
    assert [zhchecks.translate(line, root) or line for line in english] == printed
    magic = "%time x = 1\nprint('✓ plain words')"
    assert zhchecks.translate_source(magic, root) == ("%time x = 1\nprint('✓ 纯文字 “引号” 与 {花括号}')", 1)
    assert zhchecks.translate_source("print('✓ plain words'", root) == ("print('✓ plain words'", 0)


def test_only_the_code_cells_of_a_page_are_rewritten(tmp_path):
    """Counterfactual: a code block in the prose, and an output, keep the program's words."""
    root = _catalogue(tmp_path, [("✓ plain words", "✓ 纯文字")])
    code = nodes.literal_block("", "print('✓ plain words')")
    prose = nodes.literal_block("", "print('✓ plain words')")
    output = nodes.literal_block("", "print('✓ plain words')", classes=["output"])
    tree = nodes.section("", nodes.container("", code, classes=["cell_input"]), prose,
                         nodes.container("", output, classes=["cell_output"]))
    assert zhchecks.translate_sources(tree, root) == 1
    assert code.astext() == code.rawsource == "print('✓ 纯文字')"
    assert prose.astext() == output.astext() == "print('✓ plain words')"


def test_every_check_print_of_the_chapters_has_its_chinese_in_the_code():
    """Each chapter cell's check prints, rewritten, print only templates the catalogue translates
    into (none of the English ones stays) and still parse."""
    import jupytext

    from lab_snippets.book import chapters

    left = []
    for path in chapters.files_in(chapters.ROOT):
        for cell in jupytext.read(path, fmt="py:percent").cells:
            if cell.cell_type != "code" or zhchecks.MARK not in cell.source:
                continue
            text, _ = zhchecks.translate_source(cell.source)
            chinese = zhchecks.templates_in(text)
            left += [f"{path.name}: {t[:80]}" for t in zhchecks.templates_in(cell.source) if t in chinese]
            assert len(chinese) == len(zhchecks.templates_in(cell.source)), path.name
    assert left == []


def test_the_catalogue_names_the_fields_of_its_template(tmp_path):
    root = _catalogue(tmp_path, [])
    (root / "notebooks").mkdir()
    from lab_snippets.book import chapters

    chapter = chapters.existing()[0]
    (root / "notebooks" / f"{chapter.stem}.py").write_text(
        '# %%\nx = 1\nprint(f"✓ {x} left")\n', encoding="utf-8")
    _catalogue(root, [("✓ {x} left", "✓ 剩下 {y} 个")])
    assert any("fields differ" in p for p in zhchecks.problems(root))
    _catalogue(root, [("✓ {x} left", "")])
    assert any("untranslated" in p for p in zhchecks.problems(root))



def test_every_check_line_of_the_chapters_has_its_chinese():
    assert zhchecks.problems() == []
