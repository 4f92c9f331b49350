"""Each figure drawn in both editions from one execution (lab_snippets/figlang.py, issue 42): the
words swapped from the catalogue and back, the PNG tagged with its edition and the words it lacked,
and nothing changed where the book build did not ask for it."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from lab_snippets import figlang  # noqa: E402
from lab_snippets.book import pages  # noqa: E402


@pytest.fixture
def catalogue(monkeypatch):
    table = {"work": "工作", "time since start (s)": "自开始起的时间（秒）", "job {i}": "作业 {i}",
             "A title": "一个标题"}
    monkeypatch.setattr(figlang, "words", lambda: table)
    figlang._patterns.cache_clear()
    monkeypatch.setattr(figlang, "_patterns", figlang._patterns.__wrapped__)
    return table


@pytest.fixture
def fig():
    figure, ax = plt.subplots()
    ax.barh([0, 1], [1, 2])
    ax.set_yticks([0, 1], ["job 0", "job 1"])
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel("work")
    ax.set_title("A title")
    ax.legend(["running"])
    yield figure
    plt.close(figure)


def test_words_swap_to_chinese_inside_the_block_and_back_after(catalogue, fig):
    ax = fig.axes[0]
    english = figlang.png(fig, "en")
    with figlang.in_chinese(fig) as missing:
        assert ax.get_title() == "一个标题" and ax.get_xlabel() == "自开始起的时间（秒）"
        assert [t.get_text() for t in ax.get_yticklabels()] == ["作业 0", "作业 1"], "placeholders fill in"
        chinese = figlang.png(fig, "zh_CN", missing)
    assert missing == ["running"], "a word the catalogue lacks is reported, not dropped silently"
    fig.canvas.draw()
    assert ax.get_title() == "A title" and [t.get_text() for t in ax.get_yticklabels()] == ["job 0", "job 1"]
    assert figlang.png(fig, "en") == english, "the English figure is exactly as it was"
    assert chinese != english
    assert figlang.edition_of(chinese) == ("zh_CN", ["running"])
    assert figlang.edition_of(english) == ("en", [])


def test_numbers_units_and_identifiers_need_no_words():
    assert not figlang.needs_words("0.25") and not figlang.needs_words("s")
    assert not figlang.needs_words("to_thread") and not figlang.needs_words("asyncio.sleep")
    assert figlang.needs_words("event loop") and figlang.needs_words("job 3")


def test_nothing_changes_unless_the_book_build_asks(monkeypatch):
    monkeypatch.delenv(figlang.ENV, raising=False)
    assert figlang.install() is False


def test_each_edition_downloads_only_its_own_figures():
    out = [{"output_type": "display_data", "metadata": {figlang.EDITION_KEY: e}, "data": {}}
           for e in ("en", "zh_CN")]
    plain = {"output_type": "stream", "metadata": {}, "text": "x"}
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": "", "outputs": [*out, plain]}]}
    for edition in ("en", "zh_CN"):
        kept = pages.page_notebook(nb, edition)["cells"][0]["outputs"]
        assert [o["metadata"].get(figlang.EDITION_KEY) for o in kept] == [edition, None]


def test_a_word_left_as_it_is_or_already_translated_is_not_reported_missing(catalogue, fig):
    catalogue["rm-worker_{}"] = "rm-worker_{}"
    fig.axes[0].set_yticks([0, 1], ["rm-worker_0", "job 1"])
    with figlang.in_chinese(fig) as missing:
        pass
    assert missing == ["running"], f"only the legend's word is missing, not {missing}"


def test_a_timeline_y_axis_names_what_its_lanes_are_or_nothing(catalogue, fig, monkeypatch):
    """The Chinese timelines all read 「各项工作」 down their y-axis, whatever their lanes were: a
    timeline listed in figure_axes.po says 线程 / 进程 / 任务, any other draws no label (its lane
    names say it), and the English figure keeps "work". Counterfactual: translate "work" as any word."""
    from lab_snippets.timeline import Timeline

    assert figlang.LANES_LABEL == "work"
    tl = Timeline()
    tl.add("job 0", tl.t0, tl.t0 + 0.1, "running")
    drawn = tl.plot("A title")
    assert drawn.axes[0].get_ylabel() == figlang.LANES_LABEL, "timeline.py and figlang agree"
    plt.close(drawn)
    ax = fig.axes[0]
    with figlang.in_chinese(fig):
        assert ax.get_ylabel() == ""
    assert ax.get_ylabel() == "work"
    monkeypatch.setattr(figlang, "lane_kinds", lambda: [(figlang.re.compile("A title$"), "线程")])
    with figlang.in_chinese(fig):
        assert ax.get_ylabel() == "线程"
    assert ax.get_ylabel() == "work"


def test_the_lane_kinds_are_keyed_by_titles_the_chapters_draw():
    """figure_axes.po: each entry is a title some chapter draws (an f-string as written), its word
    one a Chinese engineer names a lane by, and an f-string title matches as drawn."""
    from babel.messages.pofile import read_po

    from lab_snippets.book import zhfigures

    with figlang.axes_path().open("rb") as f:
        ids = [m.id for m in read_po(f) if m.id]
    stale = set(ids) - set(zhfigures.notebook_titles())
    assert not stale, f"figure_axes.po holds titles no chapter draws: {stale}"
    assert {word for _, word in figlang.lane_kinds()} <= {"线程", "进程", "任务", "协程", "沙箱", "请求"}
    assert figlang.lane_kind("9 blocking calls on a pool of 3 threads, one lane per thread") == "线程"
    assert figlang.lane_kind("SIGKILL to the parent") == "进程" and figlang.lane_kind("slot 0") == ""
