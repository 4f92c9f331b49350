"""The alt text built for each figure (lab_snippets/book/figalt.py): a sentence from the figure's
title, and for a timeline what its lanes, axis and colours mean, in the page's language."""

import re

from lab_snippets.book import figalt


def test_english_alt_is_the_title_then_what_a_timeline_shows():
    alt = figalt.english_alt(["Three tasks under a semaphore of 2"], ["running", "waiting"])
    assert alt.startswith("Three tasks under a semaphore of 2. A timeline:"), alt
    assert "running (blue)" in alt and "waiting (light green)" in alt and "cancelled" not in alt


def test_a_figure_that_is_no_timeline_gets_its_title_only():
    assert figalt.english_alt(["Throughput against the cap"], []) == "Throughput against the cap."


def test_no_title_still_gives_a_sentence_not_a_path():
    assert figalt.english_alt([], []) == figalt.UNTITLED
    assert figalt.chinese_alt([], [], {}, {}) == figalt.ZH_UNTITLED


def test_chinese_alt_takes_the_catalogue_words_and_skips_what_is_untranslated():
    words = {"Three tasks": "三个任务"}
    guide = {"running": "运行", "waiting": "等待"}
    alt = figalt.chinese_alt(["Three tasks", "Not in the catalogue"], ["running", "waiting"], words, guide)
    assert alt.startswith("三个任务。时间线："), alt
    assert "运行、等待" in alt and "Not in the catalogue" not in alt


def test_an_f_string_title_reads_as_a_reader_sees_it_not_as_code():
    """Chapter 16's alt text was "f'Stopping periodic work (interval {interval} s)…'"."""
    from lab_snippets.book.figalt import english_alt

    alt = english_alt(["f'Stopping work (interval {interval} s)'"], [])
    assert alt == "Stopping work (interval … s).", alt
    assert chinese_alt_of("停止工作（间隔 {interval} 秒）") == "停止工作（间隔 … 秒）。"


def chinese_alt_of(zh_title: str) -> str:
    from lab_snippets.book.figalt import chinese_alt

    return chinese_alt(["t"], [], {"t": zh_title}, {})


def test_a_title_with_values_reads_as_drawn_from_the_png():
    """Chapter 04's alt text was "Batches of … with gather: … s" and 16's "interval … s": the
    book's PNG carries its titles as drawn (figlang.TITLES_KEY), so the alt gives the values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lab_snippets import figlang

    in_flight, elapsed = 4, 0.3612
    fig, (top, bottom) = plt.subplots(2, 1)
    top.set_title(f"Batches of {in_flight} with gather: {elapsed:.2f} s")
    bottom.set_title("A refill\nkeeps every slot busy")
    fig.suptitle("Two ways to keep four requests in flight")
    png = figlang.png(fig, "en")
    plt.close(fig)
    assert figlang.titles_drawn(fig) == ["Two ways to keep four requests in flight",
                                         "Batches of 4 with gather: 0.36 s", "A refill keeps every slot busy"]

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "figure.png"
        path.write_bytes(png)
        drawn = figalt.drawn_titles(path)
        fig2, ax = plt.subplots()
        fig2.savefig(Path(folder) / "plain.png")  # a PNG drawn outside the book build says nothing
        plt.close(fig2)
        assert figalt.drawn_titles(Path(folder) / "plain.png") is None
    source = ['f"Batches of {IN_FLIGHT} with gather: {batched_elapsed:.2f} s"']
    alt = figalt.english_alt(source, ["running"], drawn)
    assert alt.startswith("Two ways to keep four requests in flight. Batches of 4 with gather: 0.36 s. "
                          "A refill keeps every slot busy. A timeline:"), alt
    assert "…" not in alt
    assert figalt.english_alt(source, [], None) == "Batches of … with gather: … s."  # the fallback


def test_the_chinese_alt_takes_the_chinese_titles_as_drawn():
    drawn = ["停止周期性工作（间隔 0.2 秒）", "Not translated yet"]
    assert figalt.chinese_alt(["f'Stopping work (interval {interval} s)'"], [], {}, {}, drawn) == (
        "停止周期性工作（间隔 0.2 秒）。")


STATES_WITH_GLOSS = re.compile(r"(?<![A-Za-z])(?:running|waiting|blocked|cancelled|failed|cleanup)\s*[（(]")


def test_chinese_alt_names_each_state_in_chinese_not_english_with_a_gloss():
    """The zh alt text read "颜色表示waiting（等待）": the reading guide's legend cell (an English state
    with its gloss) put in a Chinese sentence. Each state is named by the word the Chinese figure's
    legend draws (figures.po), with its colour, for every title a chapter draws. Counterfactual: take
    the names from the guide's catalogue again (``guide.get(state)``)."""
    from lab_snippets.book import zhfigures
    from lab_snippets.timeline import STATES

    words, guide = zhfigures.title_words(), zhfigures.guide_words()
    for title in zhfigures.notebook_titles():
        alt = figalt.chinese_alt([title], list(STATES), words, guide)
        assert not STATES_WITH_GLOSS.search(alt), f"{title!r}: English state names in the zh alt: {alt!r}"
        assert not re.search(r"[A-Za-z]+（", alt.split("时间线：", 1)[-1]), alt
    alt = figalt.chinese_alt([], list(STATES), words, guide)
    for state in STATES:
        assert f"{guide[zhfigures.COLOUR_NAMES[state]]}表示{words[state]}" in alt, (state, alt)


def test_a_title_that_may_stand_alone_is_a_sentence_in_both_editions():
    """A figure whose title is set with ``set_title``/``suptitle`` may be no timeline (a bar chart, a
    plot of counts), and then its alt text is its titles alone: they must make a sentence of 20
    characters or more in both editions (``test_book``'s rule, which only a built book checks).
    Counterfactual: chapter 14's "这批任务的资源" (15 characters) failed the built book in the
    rehearsal of fa07dd2, after a green phase 1."""
    import ast

    import jupytext

    from lab_snippets.book import chapters, zhfigures

    words = zhfigures.title_words()
    short = []
    for chapter in chapters.existing():
        for cell in jupytext.read(chapter.path).cells:
            if cell.cell_type != "code":
                continue
            try:
                tree = compile(cell.source, "<cell>", "exec",
                               flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("set_title", "suptitle") and node.args):
                    continue
                titles = zhfigures.titles_in(ast.unparse(node))
                for title in titles:
                    en, zh = figalt.english_alt([title], []), figalt.chinese_alt([title], [], words, {})
                    if len(en) < 20 or len(zh) < 20:
                        short.append(f"{chapter.number}: {en!r} / {zh!r}")
    assert not short, "figure titles too short to be a figure's whole alt text:\n" + "\n".join(short)


def test_a_state_is_named_as_the_figure_legend_names_it():
    """Chapter 01 draws grey as "created, not started": its alt text said "cancelled (grey)"."""
    alt = figalt.english_alt(["Three objects"], ["waiting", "cancelled"],
                             legend={"cancelled": "created, not started"})
    assert "created, not started (grey)" in alt and "cancelled" not in alt, alt
    zh = figalt.chinese_alt(["Three objects"], ["cancelled"], {"Three objects": "三个对象"},
                            {"grey": "灰色", "cancelled": "取消"}, legend={"cancelled": "已创建，未开始"})
    assert "已创建，未开始" in zh and "取消" not in zh, zh



def test_the_legend_words_are_read_from_the_cell_that_plots():
    source = ('fig = tl.plot("T", lanes=["a"],\n'
              '              meanings={"cancelled": "created, not started", "waiting": "suspended"})\n')
    assert figalt.meanings_in(source) == {"cancelled": "created, not started", "waiting": "suspended"}
    assert figalt.meanings_in("tl.plot('T')") == {} and figalt.meanings_in("%%time\nx") == {}


def test_a_legend_bound_to_a_name_is_read_too():
    """Chapters 11 and 19 pass ``meanings=PARENT`` / ``meanings=meanings``, a dict bound a line
    before: their alt text read the default colour words (浅绿色表示等待，橙色表示失败) under a
    legend that said "right parent" / "wrong parent". Counterfactual: read dict literals only."""
    source = ('def draw(a, b):\n'
              '    PARENT = {"waiting": "right parent", "failed": "wrong parent"}\n'
              '    a.plot("T", meanings=PARENT)\n    b.plot("U", meanings=PARENT)\n')
    assert figalt.meanings_in(source) == {"waiting": "right parent", "failed": "wrong parent"}
    assert figalt.meanings_in("tl.plot('T', meanings=UNBOUND)") == {}


def test_chapters_11_and_19_alt_text_names_their_legend_words():
    """Each drawing function of these two chapters gives its legend words, and the zh catalogue
    has each of them (the zh alt text leaves out a word it cannot translate)."""
    import jupytext

    from lab_snippets.book import chapters, zhfigures

    words = zhfigures.title_words()
    for number, expected in (("11", {"waiting": "right (its own sample)",
                                     "failed": "wrong (another sample's)"}),
                             ("19", {"blocked": "orphan, still running",
                                     "cancelled": "from the signal to the exit"})):
        chapter = next(c for c in chapters.existing() if c.number == number)
        sources = [c.source for c in jupytext.read(chapter.path).cells if c.cell_type == "code"]
        defined = zhfigures.function_sources(sources)
        assert figalt.meanings_in(defined["draw_both_runs"]) == expected, number
        assert all(words.get(word) for word in expected.values()), (number, expected)


def test_a_legend_bound_at_the_top_of_another_cell_is_read_through_the_drawing_function():
    """Chapter 29 binds ``meanings = {...}`` at the top of its plotting cell and its drawing
    function passes ``meanings=meanings``: the function's own source has no binding. Counterfactual:
    the function's source alone (the built alt text named the default colours)."""
    from lab_snippets.book import zhfigures

    cells = ['meanings = {"running": "engine busy"}\n\ndef draw(tl):\n    tl.plot("T", meanings=meanings)\n',
             "draw(tl)\n"]
    function = zhfigures.function_sources(cells)["draw"]
    assert figalt.meanings_in(function) == {}
    assert figalt.meanings_in(figalt.module_dicts(cells) + function) == {"running": "engine busy"}
