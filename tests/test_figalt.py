"""The alt text built for each figure (lab_snippets/book/figalt.py): a sentence from the figure's
title, and for a timeline what its lanes, axis and colours mean, in the page's language."""

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
    drawn = figalt.chinese_alt([], ["running"], {"running": "运行"}, {"running": "running（运行）"})
    assert drawn.endswith("颜色表示运行。"), "the state word the figure draws, not the guide's English one"


def test_an_f_string_title_reads_as_a_reader_sees_it_not_as_code():
    """Chapter 16's alt text was "f'Stopping periodic work (interval {interval} s)…'"."""
    from lab_snippets.book.figalt import english_alt

    alt = english_alt(["f'Stopping work (interval {interval} s)'"], [])
    assert alt == "Stopping work (interval … s).", alt
    assert chinese_alt_of("停止工作（间隔 {interval} 秒）") == "停止工作（间隔 … 秒）。"


def chinese_alt_of(zh_title: str) -> str:
    from lab_snippets.book.figalt import chinese_alt

    return chinese_alt(["t"], [], {"t": zh_title}, {})
