"""The book as a reader meets it, checked from the sources: one reading order (the sidebar and its
Next button, each chapter's "What's next" and its "Needs" agree), answers behind a click (every
reference solution and every predicted output folded), the reading guide linked from every
chapter and part page, and the length limits of visible code in the chapters reworked so far."""

import re

import jupytext
import pytest

from lab_snippets.book import chapters, reading_time

EXISTING = chapters.existing()
IDS = [c.stem for c in EXISTING]
ORDER = chapters.toc_order()
PAGE_OF_PART = chapters.PART_PAGES
PART_OF_PAGE = {page: part for part, page in PAGE_OF_PART.items()}


def notebook(chapter):
    return jupytext.read(chapter.path, fmt="py:percent")


def markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def paragraph(text: str, opening: str) -> str:
    """The paragraph that starts with ``opening`` (up to the next blank line)."""
    start = text.index(opening)
    end = text.find("\n\n", start)
    return text[start:] if end < 0 else text[start:end]


def chapter_docname(chapter) -> str:
    return f"notebooks/{chapter.stem}"


@pytest.fixture(params=EXISTING, ids=IDS)
def chapter(request):
    return request.param


def test_reading_order_is_the_order_of_the_numbers():
    listed = [d for d in ORDER if d.startswith("notebooks/")]
    assert listed == sorted(listed), "the sidebar reads the chapters in the order of their numbers"
    assert all(d in ORDER for d in map(chapter_docname, EXISTING))


def test_whats_next_names_the_page_the_next_button_opens(chapter):
    text = paragraph(markdown(notebook(chapter)), "**What's next.**")
    after = ORDER[ORDER.index(chapter_docname(chapter)) + 1]
    named = re.findall(r"\b[Cc]hapter (\d\d)\b", text)
    if after.startswith("notebooks/"):
        wanted = after.split("/")[1][:2]
        assert named and named[0] == wanted, (
            f"{chapter.number}: the Next button opens chapter {wanted}; 'What's next' names {named[:1]}")
    elif after in PART_OF_PAGE:
        link = f"../{after}.md"
        first = next(c for c in EXISTING if c.part == PART_OF_PAGE[after])
        assert link in text, f"{chapter.number}: the Next button opens {after}; 'What's next' must link it"
        assert named and named[0] == first.number, (
            f"{chapter.number}: 'What's next' must name chapter {first.number}, the first of {after}")
    else:
        later = [n for n in named if n > chapter.number]
        assert not later, f"{chapter.number} is the last chapter; 'What's next' names later chapters {later}"


def needs_line(nb) -> str:
    head = nb.cells[0].source
    start = head.index("**Needs**")
    return head[start:head.index("·", start)]


def test_needs_only_chapters_that_come_before(chapter):
    needed = re.findall(r"\b(\d\d)\b", needs_line(notebook(chapter)).replace("#", ""))
    position = ORDER.index(chapter_docname(chapter))
    for number in needed:
        assert number in chapters.BY_NUMBER, f"{chapter.number} needs an unknown chapter {number}"
        assert ORDER.index(chapter_docname(chapters.BY_NUMBER[number])) < position, (
            f"chapter {chapter.number} needs chapter {number}, which comes after it in the book")


def test_needs_line_parses_the_real_shapes():
    class Cell:
        source = "# 14\n**Needs** chapters 03, 05 and 12 (Tasks, 2 things) · about 40 minutes"

    class Nb:
        cells = [Cell]

    assert re.findall(r"\b(\d\d)\b", needs_line(Nb)) == ["03", "05", "12"]


def test_part_pages_are_headed_by_their_part():
    for part, page in PAGE_OF_PART.items():
        first = (chapters.ROOT / f"{page}.md").read_text(encoding="utf-8").splitlines()[0]
        assert first == f"# {part}", f"{page}.md: the sidebar shows its heading, which must name the part"


GUIDE_LINK = f"../{chapters.READING_GUIDE}.md"


def test_every_chapter_links_the_reading_guide(chapter):
    head = notebook(chapter).cells[0].source
    assert GUIDE_LINK in head, f"chapter {chapter.number}: its opening cell must link {GUIDE_LINK}"


def test_every_part_page_and_the_intro_link_the_reading_guide():
    assert (chapters.ROOT / f"{chapters.READING_GUIDE}.md").exists()
    for page in list(PAGE_OF_PART.values()) + ["book/intro"]:
        text = (chapters.ROOT / f"{page}.md").read_text(encoding="utf-8")
        assert "reading_guide`" in text or "reading_guide.md" in text, \
            f"{page}.md does not link the reading guide"


def tags(cell) -> set[str]:
    return set(cell.metadata.get("tags", []))


FOLDED_SOURCE = {"hide-input", "hide-cell", "remove-input", "remove-cell"}
FOLDED_OUTPUT = {"hide-output", "hide-cell", "remove-output", "remove-cell"}


# A predict heading is the question itself ("## Predict: does the loop stall?"), so the table of
# contents says what is asked (issue 41: "Predict, then run" told readers of both editions nothing).
# Counterfactual: a bare "## Predict, then run" or "## Measure it" (every chapter before session 12).
PREDICT_HEADING = re.compile(r"^## Predict ?[:·] .+$", re.M)
MEASURE_HEADING = re.compile(r"^## Measure ?[:·] .+$", re.M)


def predict_cells(nb) -> list:
    """The code cells right after each predict heading, up to the next markdown cell: the
    experiment to predict and its check (whose printout would give the answer away)."""
    found, state = [], "before"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            heading = PREDICT_HEADING.search(cell.source)
            state = "heading" if heading else "before"
        elif state in ("heading", "inside"):
            found.append(cell)
            state = "inside"
    return found


def test_every_solution_is_folded(chapter):
    solutions = [c for c in notebook(chapter).cells if "solution" in tags(c)]
    assert solutions, f"chapter {chapter.number} has no solution cell"
    for cell in solutions:
        assert tags(cell) & FOLDED_SOURCE, (
            f"chapter {chapter.number}: a reference solution is in plain view (tag it hide-input)")


def test_every_predicted_output_is_folded(chapter):
    cells = predict_cells(notebook(chapter))
    assert cells, f"chapter {chapter.number} has no '## Predict: ...?' experiment"
    for cell in cells:
        assert tags(cell) & FOLDED_OUTPUT, (
            f"chapter {chapter.number}: the output to predict is in plain view (tag it hide-output)")


# Each fold says what it reveals (issue 41): MyST-NB's own label ("Show code cell content") twice in
# a row tells a reader nothing. A cell sets its label on its "# %%" line,
# mystnb={"code_prompt_show": "Show the check"}; the Chinese edition looks it up in
# locale/zh_CN/theme.po (lab_snippets.book.zhui.fold_labels) and closes it with "Hide the check".
FOLDS = {"hide-input", "hide-cell", "hide-output"}
# Chapters whose folds another helper labels after merging main (issue 41); empty this set then.
FOLD_LABELS_PENDING: set[str] = set()


def fold_label(cell) -> str:
    return cell.metadata.get("mystnb", {}).get("code_prompt_show", "")


def test_every_fold_says_what_it_reveals(chapter):
    if chapter.number in FOLD_LABELS_PENDING:
        pytest.skip(f"chapter {chapter.number}'s folds are labelled by the helper who owns it")
    from lab_snippets.book import zhui

    chinese = zhui.catalogue()
    for cell in notebook(chapter).cells:
        if cell.cell_type != "code" or not tags(cell) & FOLDS:
            continue
        label = fold_label(cell)
        first = cell.source.strip().split("\n")[0][:60]
        assert label.startswith("Show ") and not label.startswith("Show code cell"), (
            f"chapter {chapter.number}: a fold with MyST-NB's generic label; give its '# %%' line "
            f'mystnb={{"code_prompt_show": "Show the ..."}} naming what it reveals: {first!r}')
        assert chinese.get(label, "").startswith("显示"), (
            f"chapter {chapter.number}: the fold label {label!r} has no Chinese (显示...) in "
            f"locale/zh_CN/theme.po, so the Chinese edition would show it in English")
    # The first fold under each predict heading hides what the experiment printed or drew;
    # the checks after it say "Show the check".
    reveals = [c for c in predict_cells(notebook(chapter))
               if tags(c) & {"hide-output", "hide-cell"} and "claim" not in tags(c)]
    if reveals:
        assert fold_label(reveals[0]) == "Show the answer", (
            f"chapter {chapter.number}: the fold under the predict heading hides the answer; "
            f"label it 'Show the answer', not {fold_label(reveals[0])!r}")


# --------------------------------------------------------------------------- the limits of visible code

HIDDEN_SOURCE = FOLDED_SOURCE
MAX_CELL_LINES = 25
MAX_LINE_CHARS = 88
# Every chapter is laid out as idiom + folded check (issue 24), a new one too.
REWORKED = tuple(c.number for c in chapters.CHAPTERS)


def visible_code(nb) -> list[list[str]]:
    """The lines of every code cell whose source the page shows (not folded, not removed)."""
    return [c.source.splitlines() for c in nb.cells
            if c.cell_type == "code" and not tags(c) & HIDDEN_SOURCE]


def visible_figures(nb) -> dict[str, int]:
    cells = visible_code(nb)
    return {"cells": len(cells), "lines": sum(len(c) for c in cells),
            "longest cell": max((len(c) for c in cells), default=0),
            "lines over 88": sum(len(line) > MAX_LINE_CHARS for c in cells for line in c)}


@pytest.mark.parametrize("number", REWORKED)
def test_visible_code_fits_a_screen(number):
    nb = notebook(chapters.BY_NUMBER[number])
    for lines in visible_code(nb):
        assert len(lines) <= MAX_CELL_LINES, (
            f"chapter {number}: a visible cell has {len(lines)} lines (at most {MAX_CELL_LINES}; "
            f"fold the check into its own cell): {lines[0]!r}")
        wide = [line for line in lines if len(line) > MAX_LINE_CHARS]
        assert not wide, f"chapter {number}: visible lines over {MAX_LINE_CHARS} characters: {wide}"


# Chapters being reworked on another branch when the rule came in; strict, so the mark must go
# as soon as they state the rule's figure.
TIME_PENDING: set[str] = set()


@pytest.mark.parametrize("chapter", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="reworked on another branch; "
                                            "state the figure of `python -m lab_snippets.book.reading_time`"))
    if c.number in TIME_PENDING else c for c in EXISTING], ids=IDS)
def test_time_estimate_follows_the_rule(chapter):
    stated = reading_time.stated(chapter.path)
    assert stated is not None, f"chapter {chapter.number} states no 'about N minutes'"
    assert stated == reading_time.estimate(chapter.path), (
        f"chapter {chapter.number} says about {stated} minutes; the rule (words / 150 + 2 per claim "
        f"+ 3 per Predict + 10 per exercise, to the nearest 5) gives {reading_time.estimate(chapter.path)}")


GLOSSARY_PENDING: set[str] = set()  # chapters reworked elsewhere when the rule came in; strict xfail


@pytest.mark.parametrize("chapter", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="reworked on another branch"))
    if c.number in GLOSSARY_PENDING else c for c in EXISTING], ids=IDS)
def test_every_chapter_links_the_glossary(chapter):
    text = markdown(notebook(chapter))
    assert "../book/glossary.md" in text, f"chapter {chapter.number} does not link the glossary"


@pytest.mark.parametrize("number", ["01", "02"])
def test_the_first_chapters_link_core_terms(number):
    chapter = next(c for c in EXISTING if c.number == number)
    assert "{term}`event loop`" in markdown(notebook(chapter)), (
        f"chapter {number} does not link 'event loop' to the glossary at its first use")


def test_glossary_has_no_authoring_note():
    intro = (chapters.ROOT / "book/glossary.md").read_text(encoding="utf-8").split("```{glossary}")[0]
    assert "{term}" not in intro, (
        "the glossary's opening is for readers; authoring notes go in CONTRIBUTING.md")


def test_call_site_plumbing_is_not_shown(chapter):
    """A reader sees slime's quote, not the `show_call_site("06b")` call that fetches it: every cell
    that calls it is tagged `remove-input` and holds nothing else (so hiding its source hides no lesson).
    Counterfactual: drop the tag from one such cell (or add a line of teaching code to it) and this fails."""
    found = 0
    for cell in notebook(chapter).cells:
        if cell.cell_type != "code" or "show_call_site(" not in cell.source:
            continue
        found += 1
        assert "remove-input" in tags(cell), (
            f"chapter {chapter.number}: a visible show_call_site cell: {cell.source.strip()[-40:]!r}")
        rest = [line for line in cell.source.splitlines() if line.strip()
                and not line.startswith("from lab_snippets.sites import show_call_site")
                and not re.fullmatch(r'show_call_site\("\w+"\)', line.strip())]
        assert not rest, f"chapter {chapter.number}: a hidden call-site cell also holds {rest[:1]}"
    assert found, f"chapter {chapter.number} quotes no slime call site"


SITES_TOML = chapters.ROOT / "lab_snippets" / "sites.toml"


def site_symbols() -> dict[str, str]:
    import tomllib
    with SITES_TOML.open("rb") as f:
        return {s["id"]: s["symbol"] for s in tomllib.load(f)["site"]}


def first_naming(prose: str, symbol: str) -> int | None:
    """Where the prose first names ``symbol`` (its last dotted part, or the whole) in inline code."""
    names = {symbol, symbol.rsplit(".", 1)[-1]}
    for span in re.finditer(r"`([^`\n]+)`", prose):
        if any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", span.group(1)) for n in names):
            return span.start()
    return None


def slime_section(nb) -> tuple[str, list[str]]:
    """The "In slime" section's prose (every markdown cell from its heading on) and its quoted site ids,
    in cell order."""
    cells = nb.cells
    start = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and "## In slime" in c.source)
    prose = [cells[start].source.split("## In slime", 1)[1]]
    quoted = []
    for cell in cells[start + 1:]:
        if cell.cell_type == "markdown":
            prose.append(cell.source)
        quoted += re.findall(r'show_call_site\("(\w+)"\)', cell.source) if cell.cell_type == "code" else []
    return "\n".join(prose), quoted


def test_slime_quotes_follow_the_prose(chapter):
    """The "In slime" quotes come in the order the prose first names each site's symbol (in inline code),
    so a reader meets each quote after the sentence that discusses it. Sites whose symbol the prose never
    names are exempt; sites sharing a symbol may come in any order among themselves.
    Counterfactual: chapter 24's old order (show_call_site("24b"), the `timeout` context manager, before
    "24", `async_rm`, which the prose discusses first) fails here; so do 28's and 29's old orders"""
    symbols = site_symbols()
    prose, quoted = slime_section(notebook(chapter))
    named = [(sid, first_naming(prose, symbols[sid])) for sid in quoted]
    named = [(sid, at) for sid, at in named if at is not None]
    for (before, at_before), (after, at_after) in zip(named, named[1:], strict=False):
        assert at_before <= at_after, (
            f"chapter {chapter.number}: the quote of {before!r} ({symbols[before]}) comes before "
            f"{after!r} ({symbols[after]}), but the prose names {symbols[after]} first")


def test_the_page_shows_a_solution_without_the_graders_markers():
    # lab_snippets.book.pages drops nbgrader's region markers from the rendered solution (the
    # built pages are checked in test_book); counterfactual: the handler not connected, or a
    # marker indented differently from the one it looks for.
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    from lab_snippets.book import pages

    doc = new_document("chapter", get_default_settings(Parser))
    source = "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n"
    doc += nodes.literal_block(source, source, language="ipython3")
    pages._drop_grader_markers(None, doc, "chapter")
    block = next(iter(doc.findall(nodes.literal_block)))
    assert (block.astext(), block["language"]) == ("def f():\n    return 1\n", "ipython3")


# --------------------------------------------------------------------------- the course's instruments


def parse_cell(source: str):
    """A code cell's syntax tree, its IPython magics and shell lines blanked out."""
    import ast

    return ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                               for line in source.splitlines()))


def course_imports(nb) -> dict[str, int]:
    """``{name: index of the cell that imports it}`` for each name a chapter imports from the course's
    package (``from lab_snippets.timeline import Timeline``, ``import lab_snippets.raylab as raylab``)."""
    import ast

    found = {}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            tree = parse_cell(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lab_snippets"):
                for alias in node.names:
                    found.setdefault(alias.asname or alias.name, i)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("lab_snippets") and alias.asname:
                        found.setdefault(alias.asname, i)
    return found


def used_names(source: str) -> set[str]:
    """The names a cell's code reads (not its strings or comments)."""
    import ast

    try:
        tree = parse_cell(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def glossed(name: str, prose: str, cell_source: str, import_source: str) -> bool:
    """Whether a reader is told what ``name`` is where they meet it: the prose before names it in
    inline code, or a comment sits on a line of the cell (or of its import) that uses it."""
    if re.search(rf"`{re.escape(name)}\b", prose):
        return True
    word = re.compile(rf"\b{re.escape(name)}\b")
    return any("#" in line and word.search(line.split("#", 1)[0] or line)
               for line in (cell_source + "\n" + import_source).splitlines())


def test_each_course_instrument_is_explained_where_a_reader_first_meets_it(chapter):
    """Every name a chapter imports from ``lab_snippets`` (``Timeline``, ``InFlight``, ``LoopWatch``,
    ``join_all``, ``raylab``...) is explained at the first visible cell that uses it: named in inline
    code by the prose before that cell, its source shown by an earlier ``show_source`` cell, or
    commented on a line that uses or imports it. A helper used
    only in folded cells is exempt (the fold is the proof, not the lesson). Counterfactual: drop the
    sentence or comment that glosses one instrument and this names it (the learners' finding of
    issue 41: `InFlight` in chapter 06's predict cell, explained only in the reading guide)."""
    nb = notebook(chapter)
    imports = course_imports(nb)
    prose, missing, met = "", [], set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            prose += "\n" + cell.source
            continue
        # a function whose source the page shows (lab_snippets.showcode) is explained by its code
        prose += "".join(f" `{name}` " for name in re.findall(r"show_source\((\w+)", cell.source))
        if cell.cell_type != "code" or tags(cell) & HIDDEN_SOURCE:
            continue
        for name in sorted((used_names(cell.source) & set(imports)) - met):
            met.add(name)
            if not glossed(name, prose, cell.source, nb.cells[imports[name]].source):
                missing.append(name)
    assert not missing, (
        f"chapter {chapter.number}: the course's {', '.join(f'`{n}`' for n in missing)} reach a visible "
        "cell with no word on what they are: name each in the prose before it (in inline code) or "
        "comment the line that uses or imports it")


# --------------------------------------------------------------------------- questions, exercises, workers
# Reader round 3 (issue 41, the learner of session 9): a question the page puts to the reader is
# answered behind a fold; an exercise says what to build in a few lines and keeps the graded
# properties in a dropdown; the workers whose behaviour is the lesson are on the page; the notes on
# how the course itself was checked are not in the reader's path.


def _asks(markdown_source: str) -> bool:
    """The prose puts a question to the reader: it ends with one, or tells them to predict."""
    text = re.sub(r"`[^`]*`", "x", markdown_source).rstrip()
    text = re.sub(r"[*_)\]]+$", "", text)
    return text.endswith("?") or bool(re.search(r"(^|[.!?:]\s+|\*\*|# )Predict\b", text, re.M))


def _only_defines(source: str) -> bool:
    """A cell that shows nothing: no ``print``/``display``/plot call, and no bare value on its last
    line (the helpers and set-up an experiment needs); or one that shows a program's source
    (``show_source``), which is not an answer."""
    import ast

    if "show_source(" in source:
        return True
    if re.search(r"\b(print|display|show_call_site)\(|\.plot\(|plt\.show\(", source):
        return False
    try:
        tree = parse_cell(source)
    except SyntaxError:
        return False
    last = tree.body[-1] if tree.body else None
    return not (isinstance(last, ast.Expr) and not isinstance(last.value, (ast.Call, ast.Await)))


def test_every_question_put_to_the_reader_is_answered_behind_a_fold(chapter):
    """A markdown cell that asks (ends with a question, or says "Predict ...") is followed by the
    cell that answers it (the first after it that prints: helpers and a program's source may come
    between): its output is folded ("Show the answer"), so the reader can guess first. A slime
    quote after a question is exempt (a quote is not an answer). Counterfactual: chapter 28 of
    session 9, whose four questions were each followed by their printed answer."""
    cells = notebook(chapter).cells
    open_answers = []
    for i, before in enumerate(cells):
        if before.cell_type != "markdown" or not _asks(before.source):
            continue
        after = cells[i + 1:]
        answer = next((c for c in after if c.cell_type == "markdown" or not _only_defines(c.source)),
                      None)
        if answer is None or answer.cell_type != "code":
            continue
        if "show_call_site" in answer.source or tags(answer) & FOLDED_OUTPUT:
            continue
        open_answers.append(before.source.strip().splitlines()[-1][-90:])
    assert not open_answers, (
        f"chapter {chapter.number}: a question whose answer prints in plain view right after it (tag "
        f"the next cell hide-output, label 'Show the answer', and explain after the fold): {open_answers}")



def test_a_check_after_an_answer_does_not_print_it_in_view(chapter):
    """After a question's answer fold, the cells that print before the prose resumes (its check, a
    second measurement) are folded too: a ✓ line in plain view under "Show the answer" gives the
    answer away. Counterfactual: 01's "✓ the Task's body started only when the caller suspended",
    in view under the fold in session 11's learner reading. A cell that draws a figure stays in
    view (``test_a_figure_is_not_folded_away``)."""
    cells = notebook(chapter).cells
    in_view = []
    for i, before in enumerate(cells):
        if before.cell_type != "markdown" or not _asks(before.source):
            continue
        later = iter(cells[i + 1:])
        answer = next((c for c in later if c.cell_type == "markdown" or not _only_defines(c.source)),
                      None)
        if answer is None or answer.cell_type != "code":
            continue
        for cell in later:
            if cell.cell_type == "markdown":
                break
            if not _only_defines(cell.source) and "show_call_site" not in cell.source \
                    and not tags(cell) & FOLDED_OUTPUT and not DRAWS.search(cell.source):
                in_view.append(cell.source.strip().splitlines()[0][:70])
    assert not in_view, (
        f"chapter {chapter.number}: a cell after an answer fold prints in view (fold its output too, "
        f"e.g. tags hide-cell with 'Show the check'): {in_view}")



# The first words a reader sees under a closed "Show the answer" fold. Session 12's learners found
# the verdict there in every chapter they read ("Three at a time, in 0.24 s.", 08; "Twenty:", 28;
# "Still alive.", 09): the fold hid the output, the next sentence told it. A short opening sentence
# or one that opens with an answer word ("No", "All three", "About 0.1 s") is a verdict; a pointer
# into the output ("Look at ...", "In the chart ...") or a question is not.
VERDICT_OPENING = re.compile(
    r"^(?:yes|no|neither|both|none|nothing|all|only|zero|one|two|three|four|five|six|seven|eight|"
    r"nine|ten|twenty|about|exactly|most|far|every|still|not|never|always|it did|they (?:are|did)|"
    r"\d)\b", re.I)
POINTER_OPENING = re.compile(
    r"^(?:look|read|compare|count|here|open|why|in the (?:chart|figure|output|table))\b", re.I)
SHORTEST_EXPLANATION = 7  # words; "Three at most:" and "Only the queued one." are shorter


def _opens_with_a_verdict(markdown_source: str) -> str | None:
    source = markdown_source.strip()
    if source.startswith(":::{dropdown} Why"):  # the explanation is folded: judge what follows it
        parts = re.split(r"^:::\s*$", source, maxsplit=1, flags=re.M)
        source = parts[1] if len(parts) > 1 else ""
    text = re.sub(r"\s+", " ", source.strip())
    if not text or text.startswith(("#", ":::{", "```{", "~~~{")):  # a heading, or another fold
        return None
    first = re.split(r"(?<=[.!?:])\s", text, maxsplit=1)[0]
    if first.endswith("?") or POINTER_OPENING.match(first):
        return None
    if len(first.split()) < SHORTEST_EXPLANATION or VERDICT_OPENING.match(first):
        return first
    return None


def test_the_prose_after_an_answer_fold_opens_with_the_why_not_the_verdict(chapter):
    """Under a closed "Show the answer" fold, the next sentence in view explains (the mechanism) or
    points into the output ("Look at the last line"); it does not state the result, or the fold
    hides nothing. Counterfactual: session 12's "Three at most:" (28), "Still alive." (09), "No." (07):
    this test found 52 such openings in 25 chapters. A heuristic (short sentences and answer words),
    so a verdict in a long sentence passes it; readers who have not seen the page are the check."""
    found = []
    for _, prose in _after_an_answer_fold(notebook(chapter).cells):
        opening = _opens_with_a_verdict(prose.source)
        if opening and opening not in found:
            found.append(opening)
    assert not found, (
        f"chapter {chapter.number}: the sentence under an answer fold gives the answer away (open "
        f"with why it happens, or with what to look at in the output): {found}")


WHY_FOLD = "Why"


def _after_an_answer_fold(cells):
    """(fold cell, the markdown after it) for every "Show the answer" fold of a chapter."""
    for i, cell in enumerate(cells):
        if cell.cell_type == "code" and \
                cell.metadata.get("mystnb", {}).get("code_prompt_show") == "Show the answer":
            prose = next((c for c in cells[i + 1:] if c.cell_type == "markdown"), None)
            if prose is not None and prose.source.strip():
                yield cell, prose


def test_the_explanation_of_an_answer_is_folded_with_it(chapter):
    """What a reader reads next to a closed "Show the answer" fold is not the answer's explanation:
    the markdown after the fold opens with a ``:::{dropdown} Why`` that holds it (or with a heading,
    the next section). Counterfactual: four of four learners of session 14, independently, first
    finding: "the paragraph right under 'Show the answer' states the result" (160 such paragraphs
    in 29 chapters); session 13's test above only reworded their first sentence."""
    found = []
    for _, prose in _after_an_answer_fold(notebook(chapter).cells):
        first = prose.source.strip().splitlines()[0]
        if first.startswith("#") or first.strip() == f":::{{dropdown}} {WHY_FOLD}":
            continue
        found.append(first[:60])
    assert not found, (
        f"chapter {chapter.number}: the explanation under an answer fold is in view (put it in a "
        f"':::{{dropdown}} {WHY_FOLD}' right after the fold): {found}")


DRAWS = re.compile(r"\.plot\(|\bplt\.|subplots\(")


def test_a_figure_is_not_folded_away(chapter):
    """A cell that draws a figure shows it: its source may be folded (``hide-input``), its output
    only when the figure is the answer to a question ("Show the answer"). The prose points at
    figures, and a reader with the folds closed must find them. Counterfactual: 06's batch-time and
    21's span figures, folded whole with their checks in session 11 ("Show the plotting code and
    the check")."""
    hidden = [cell.source.strip().splitlines()[0][:70] for cell in notebook(chapter).cells
              if cell.cell_type == "code" and DRAWS.search(cell.source)
              and tags(cell) & FOLDED_OUTPUT - {"remove-output", "remove-cell"}
              and fold_label(cell) != "Show the answer"]
    assert not hidden, f"chapter {chapter.number}: a figure folded away (fold its source only): {hidden}"


def top_level_names(source: str) -> set[str]:
    """The names a cell defines at its top level: functions, classes, assigned variables."""
    import ast

    try:
        tree = parse_cell(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


# Chapters whose fold-defined names a helper glosses after merging main; empty this set then.
FOLDED_NAMES_PENDING: set[str] = set()


def test_a_name_defined_in_a_fold_is_explained_where_a_visible_cell_uses_it(chapter):
    """A function, class or variable that a folded cell defines and a visible cell uses gets a word
    where the reader meets it: the prose before names it in inline code, or a comment sits on a
    line that uses it (or on its definition). Counterfactual: 17's `timed_job` and `job_2_started`,
    called in view and defined in a fold labelled "plotting code" (session 12's learner), and 14's
    `is_running`, `MiniSandbox`, `lane_of`; this test found 53 such names in 23 chapters when it
    was written. Exercise cells are exempt (the grader's scaffolding is explained in its dropdown)."""
    if chapter.number in FOLDED_NAMES_PENDING:
        pytest.skip(f"chapter {chapter.number}'s folded names are glossed by the helper who owns it")
    nb = notebook(chapter)
    folded: dict[str, int] = {}
    seen_in_view: set[str] = set()
    prose, missing = "", []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            prose += "\n" + cell.source
            continue
        prose += "".join(f" `{name}` " for name in re.findall(r"show_source\((\w+)", cell.source))
        if tags(cell) & {"solution", "tests", "hidden-tests"}:
            continue
        if tags(cell) & HIDDEN_SOURCE:
            for name in top_level_names(cell.source) - seen_in_view:
                folded.setdefault(name, i)
            continue
        for name in sorted((used_names(cell.source) & set(folded)) - seen_in_view):
            seen_in_view.add(name)
            if not glossed(name, prose, cell.source, nb.cells[folded[name]].source):
                missing.append(name)
        seen_in_view |= top_level_names(cell.source)
    assert not missing, (
        f"chapter {chapter.number}: {', '.join(f'`{n}`' for n in missing)} reach a visible cell "
        "defined only in a fold, with no word on what they are: name each in the prose before it "
        "(in inline code), comment the line that uses it, or define it in view")


LEAKS_PENDING: set[str] = set()
PLOT_OBJECTS = {"ax", "axes", "axis", "fig", "figure", "plt", "left", "right", "twin"}


def test_no_drawing_call_leaks_its_return_value_onto_the_page(chapter):
    """A cell that ends with a bare call on a figure or axes (``ax.set_xlim(-0.15, 6)``) shows the
    call's return value as output: the stray ``(-0.15, 6.0)`` under 29's figure in session 12's
    reading. Move it up, or assign it. Counterfactual: 29's figure cell at a12680b."""
    import ast

    if chapter.number in LEAKS_PENDING:
        pytest.skip(f"chapter {chapter.number}'s figure is being redrawn by the helper who owns it")
    leaks = []
    for cell in notebook(chapter).cells:
        if cell.cell_type != "code" or tags(cell) & {"remove-output", "remove-cell"}:
            continue
        source = cell.source.rstrip()
        if source.endswith(";"):
            continue
        try:
            tree = parse_cell(source)
        except SyntaxError:
            continue
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) \
                and isinstance(last.value.func, ast.Attribute):
            owner = last.value.func.value
            while isinstance(owner, (ast.Attribute, ast.Subscript)):
                owner = owner.value
            if isinstance(owner, ast.Name) and (owner.id in PLOT_OBJECTS or owner.id.startswith("ax")) \
                    and last.value.func.attr not in {"show", "savefig", "close"}:
                leaks.append(ast.unparse(last)[:70])
    assert not leaks, f"chapter {chapter.number}: a drawing call's return value prints: {leaks}"


CHECK_PRINT = re.compile(r"print\(f?[\"']✓")


def test_a_check_prints_its_verdict_behind_a_fold(chapter):
    """A check is the proof, one click away: its ✓ verdict line prints inside the fold too
    (``hide-cell``, label "Show the check"), not under a folded source. In session 12, learners
    found ✓ lines in view that answered the question above them (20: "✓ 17 replies to the good
    client, in order" under its prediction; 02, 13, 12), and praised 15, whose checks were folded
    whole. Counterfactual: tag a check cell ``hide-input``; this test found 41 such cells in 20
    chapters. A cell that draws a figure and checks it is two cells: the drawing in view, the check
    folded after it (session 13 split the last five, in 06, 10, 11, 20 and 21, whose ✓ lines
    printed in view under their figures)."""
    in_view = [cell.source.strip().splitlines()[0][:70] for cell in notebook(chapter).cells
               if cell.cell_type == "code" and CHECK_PRINT.search(cell.source)
               and not tags(cell) & (FOLDED_OUTPUT | {"solution", "tests", "hidden-tests"})]
    assert not in_view, (
        f"chapter {chapter.number}: a check prints its ✓ line in view (tag it hide-cell, label "
        f"'Show the check'): {in_view}")


MACHINE_NOTES = [
    (r"\bbuild machine\b|\bmachine that built\b|\bevery duration on this page\b",
     "the machine the page was built on"),
    (r"\bgh-\d{4,6}\b|\bbpo-\d+\b", "a CPython issue number"),
]


def test_measurement_and_version_caveats_are_folded(chapter):
    """Notes on the machine that built the page and CPython issue numbers (version differences) are
    true and needed, but they interrupt the argument: they go in a dropdown ("Why the course does it
    this way", "Going further"). Counterfactual: 26's "with sleep 0 on the course's 2-core build
    machine, load average about 3" and its gh-119710 paragraph, in view in session 10."""
    prose = visible_prose(notebook(chapter))
    found = [f"{why}: {m.group(0)!r}" for pattern, why in MACHINE_NOTES
             for m in [re.search(pattern, prose)] if m]
    assert not found, f"chapter {chapter.number}: caveats in the main line (fold them): {found}"


# An exercise the page has already solved teaches copying. Measured: the share of the reference
# solution's tokens that one chapter cell (not an exercise cell) matches, in order. Session 13's
# learners named 11.1 ("the chapter's own span() helper, line for line", 86%) and 12.1 (85%).
MOST_COPIED_FROM_THE_PAGE = 0.7
#: Exercises whose reference is still mostly a chapter cell, each to be given a twist (issue 41);
#: the list only shrinks: a new exercise, or a changed one, above the limit fails.
STILL_ON_THE_PAGE: dict[str, float] = {}


def _tokens(source: str) -> list[str]:
    import io
    import tokenize

    source = "\n".join("" if line.lstrip().startswith(("%", "!", "###")) else line
                       for line in source.splitlines())
    kinds = (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING)
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type in kinds]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []


def share_copied_from_the_page(nb) -> float:
    """The largest share of a reference solution's tokens that one chapter cell matches in order
    (``difflib``'s matching blocks), over the chapter's solution cells (all of a cell's solution
    regions together: measuring the first alone once let a class's ``__init__`` stand for it)."""
    import difflib

    graded = {"solution", "tests", "hidden-tests"}
    page = [_tokens(c.source) for c in nb.cells if c.cell_type == "code" and not tags(c) & graded]
    worst = 0.0
    for cell in nb.cells:
        if cell.cell_type != "code" or "solution" not in tags(cell):
            continue
        # every region of the cell (a class's methods may each have one), measured as one body
        regions = re.findall(r"### BEGIN SOLUTION(.*?)### END SOLUTION", cell.source, re.S)
        body = [t for region in regions or [cell.source] for t in _tokens(region)]
        if len(body) < 15:  # a one-liner is not a copy
            continue
        for other in page:
            blocks = difflib.SequenceMatcher(None, body, other, autojunk=False).get_matching_blocks()
            worst = max(worst, sum(b.size for b in blocks) / len(body))
    return worst


def test_an_exercise_is_not_already_solved_on_the_page(chapter):
    """The reference solution is not, token for token, a cell the chapter shows: the exercise asks
    for one idea the page taught but did not apply to this case. Counterfactual: 11.1 and 12.1 of
    session 13 (86% and 85% of their tokens in one chapter cell); the exercises above the limit are
    listed in ``STILL_ON_THE_PAGE`` and may only improve."""
    share = share_copied_from_the_page(notebook(chapter))
    allowed = STILL_ON_THE_PAGE.get(chapter.number, MOST_COPIED_FROM_THE_PAGE)
    assert share <= allowed + 0.005, (
        f"chapter {chapter.number}: {share:.0%} of the exercise's reference solution is a cell the "
        f"chapter already shows (at most {MOST_COPIED_FROM_THE_PAGE:.0%}): give it a twist the page "
        "has not solved")


MAX_EXERCISE_WORDS = 150


def outside_dropdowns(markdown_source: str) -> str:
    """The lines of a markdown text a reader sees with every ``:::{dropdown}`` (or other colon
    fence) closed."""
    seen, depth = [], 0
    for line in markdown_source.splitlines():
        stripped = line.strip()
        if re.match(r"^:{3,}\{", stripped):
            depth += 1
        elif re.fullmatch(r":{3,}", stripped) and depth:
            depth -= 1
        elif not depth:
            seen.append(line)
    return "\n".join(seen)


def visible_words(markdown_source: str) -> int:
    """Words of prose a reader sees without opening anything (a ``:::{dropdown}`` is closed; a
    fenced code block is code to read, not words of the statement)."""
    markdown_source = re.sub(r"^```.*?^```", "", markdown_source, flags=re.M | re.S)
    return len(re.findall(r"\w+", outside_dropdowns(markdown_source)))


def exercise_statement(nb) -> str:
    """The markdown from the ``## Exercise`` heading to the exercise's first code cell."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and re.search(r"^## Exercise", cell.source, re.M):
            text = cell.source[re.search(r"^## Exercise", cell.source, re.M).start():]
            for after in nb.cells[i + 1:]:
                if after.cell_type != "markdown":
                    break
                text += "\n" + after.source
            return text
    raise AssertionError("no '## Exercise' heading")


def test_an_exercise_says_what_to_build_in_a_few_lines(chapter):
    """The visible statement is a task (what to write, the few rules that shape it); the full list of
    graded properties sits in a dropdown (``:::{dropdown} What the grader checks``), where a student
    looks when a hidden test names one. Counterfactual: the session-9 statements of 250–475 visible
    words, which read as the grader's contract."""
    words = visible_words(exercise_statement(notebook(chapter)))
    assert words <= MAX_EXERCISE_WORDS, (
        f"chapter {chapter.number}: the exercise statement shows {words} words (at most "
        f"{MAX_EXERCISE_WORDS}); keep the task in view and move the graded properties into a "
        f"':::{{dropdown}} What the grader checks'")


# Notes on how the course was checked, addressed to its maintainers, not to a learner.
COURSE_NOTES = [
    (r"\b\d[\d,]* (?:runs?|dumps?|tries|trials?) (?:in|out of|of) [\d,]+\b"
     r"|\bin \d[\d,]* (?:runs?|dumps?|tries) of [\d,]+", "a count of the course's own test runs"),
    (r"\b(?:loaded|course's) two-core\b", "the course's test machine"),
    (r"\bChecked on (?:Python )?3\.\d+", "which Pythons the course was checked on"),
    (r"\bjsonschema\b", "the course's start-up cost"),
    (r"\blabs validate\b", "the grading tool's behaviour"),
    (r"\bnbval\b", "the course's test runner"),
]


def visible_prose(nb) -> str:
    """Markdown a reader sees without opening anything (dropdowns closed, every cell's text)."""
    text = "\n".join(outside_dropdowns(c.source) for c in nb.cells if c.cell_type == "markdown")
    return re.sub(r"\s+", " ", text)


def test_notes_on_how_the_course_was_checked_are_out_of_the_readers_path(chapter):
    """Counts of the course's own runs, its test machine, the Pythons it was checked on and its
    tooling's internals go in a dropdown ("Why the course does it this way") or out of the page.
    Counterfactual: 19's "in 1 run of 1,500 (8 at a time on a loaded two-core machine)"."""
    prose = visible_prose(notebook(chapter))
    found = [f"{why}: {m.group(0)!r}" for pattern, why in COURSE_NOTES
             for m in [re.search(pattern, prose)] if m]
    assert not found, f"chapter {chapter.number}: notes for the course's maintainers in view: {found}"


# Commands whose names say all they do; every other command a visible cell runs is shown.
SELF_EXPLAINING = {"sleep", "exit"}


def worker_commands(nb) -> list[tuple[str, str]]:
    """``(module, command)`` for each course worker command a visible cell runs as a child
    (``[sys.executable, "-m", "lab_snippets.X", "cmd"]``, or a name bound to the first three plus
    ``["cmd", ...]``)."""
    modules, found = {}, []
    module_list = r'\[\s*sys\.executable,\s*"-m",\s*"(lab_snippets\.\w+)"'
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for name, module in re.findall(rf"^(\w+)\s*=\s*{module_list}\s*\]", cell.source, re.M):
            modules[name] = module
        if tags(cell) & HIDDEN_SOURCE:
            continue
        found += re.findall(rf'{module_list},\s*"([\w-]+)"', cell.source)
        for name, module in modules.items():
            found += [(module, cmd) for cmd in
                      re.findall(rf'\b{name}\s*\+\s*\[\s*"([\w-]+)"', cell.source)]
    return [(m, c) for m, c in dict.fromkeys(found) if c not in SELF_EXPLAINING]


def test_a_worker_whose_behaviour_is_the_lesson_is_on_the_page(chapter):
    """A child program the chapter runs is code the reader cannot see unless the page shows it:
    each worker command a visible cell runs has its function (``_cmd_<command>``), or a function
    that one calls, shown by a ``show_source`` cell somewhere in the chapter. Counterfactual: 19's
    ``spawn-children`` and ``hold-flock``, run as black boxes in session 9."""
    import importlib
    import inspect

    nb = notebook(chapter)
    shown = {n for c in nb.cells if c.cell_type == "code"
             for n in re.findall(r"show_source\((\w+)", c.source)}
    missing = []
    for module, command in worker_commands(nb):
        mod = importlib.import_module(module)
        name = "_cmd_" + command.replace("-", "_")
        fn = getattr(mod, name, None) or getattr(mod, command.replace("-", "_"), None)
        assert fn is not None, f"{module} has no {name} for its command {command!r}"
        calls = set(re.findall(r"\b(\w+)\(", inspect.getsource(fn)))
        if not shown & ({fn.__name__} | calls):
            missing.append(f"{module} {command}")
    assert not missing, (
        f"chapter {chapter.number}: runs {missing} without showing its code; add a "
        f"show_source({{the command's function}}) cell beside the call")


# A place named in quotes with "above" or "below" ('the first of the "Two limits" above') is a
# heading, a dropdown or a fold of the same chapter, on that side. Counterfactual: chapter 22's
# pointer to a "Two limits" box that a rework had removed (reader 18-2 searched the page for it).
QUOTED_PLACE = re.compile(r'"([^"]{3,80})"\s+(above|below)\b')
QUOTED_FOLD = re.compile(r'\bthe (?:fold|section|heading) "([^"]{3,80})"')  # on either side


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[`*]", "", text).split()).strip(" .:").lower()


def named_places(nb) -> list[tuple[int, str]]:
    """(cell index, title) of every heading, dropdown and labelled fold."""
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            out += [(i, t) for t in re.findall(r"^#+\s+(.+?)\s*$", cell.source, re.M)]
            out += [(i, t) for t in re.findall(r"^:{3,}\{dropdown\}\s*(.+?)\s*$", cell.source, re.M)]
        if fold_label(cell):
            out.append((i, fold_label(cell)))
    return [(i, _plain(t)) for i, t in out]


def dangling_places(nb) -> list[str]:
    known = named_places(nb)
    bad = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        text = " ".join(cell.source.split())
        found = QUOTED_PLACE.findall(text) + [(n, "") for n in QUOTED_FOLD.findall(text)]
        for name, side in found:
            want = _plain(name)
            there = [j for j, title in known if title == want or title.startswith(want)]
            if not [j for j in there if not side or (j <= i if side == "above" else j >= i)]:
                other = "below" if side == "above" else "above"
                bad.append(f'"{name}"' + (f" {side}" if side else "")
                           + (f" (it is {other})" if there else " (no such heading or fold)"))
    return bad


def test_a_place_named_above_or_below_is_there(chapter):
    bad = dangling_places(notebook(chapter))
    assert not bad, f"chapter {chapter.number} points the reader at: {bad}"


def test_dangling_places_finds_a_removed_box_and_a_wrong_side():
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Two limits\n\ntext"),
        nbformat.v4.new_markdown_cell('as in "Two limits" above, and "Two limits" below, '
                                      'and "Three limits" above; the fold "Two limits" and '
                                      'the fold "Show the rest"'),
    ])
    assert dangling_places(nb) == ['"Two limits" below (it is above)',
                                   '"Three limits" above (no such heading or fold)',
                                   '"Show the rest" (no such heading or fold)']
