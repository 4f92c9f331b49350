"""The Chinese key under each timeline figure of the zh edition (lab_snippets.book.zhfigures)."""

from __future__ import annotations

import re

import pytest

from lab_snippets.book import zhfigures, zhui
from lab_snippets.timeline import Timeline, figure_style

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _png(fig, path):
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=96, bbox_inches="tight")  # as the notebook's inline backend saves it
    plt.close(fig)
    return path


def test_states_are_read_from_the_picture(tmp_path):
    figure_style()
    tl = Timeline()
    tl.add("worker", tl.t0, tl.t0 + 0.2, state="running")
    tl.add("loop", tl.t0 + 0.05, tl.t0 + 0.1, state="blocked")
    tl.add("loop", tl.t0 + 0.1, tl.t0 + 0.101, state="cleanup")  # a sliver: its legend patch tells
    tl.mark("worker done")
    png = _png(tl.plot("two lanes, three states"), tmp_path / "t.png")
    assert zhfigures.states_drawn(png) == ["running", "blocked", "cleanup"]


def test_a_figure_that_is_no_timeline_gets_no_key(tmp_path):
    import matplotlib.pyplot as plt

    figure_style()
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1, 2], [3, 1, 2], color="#7f7f7f")  # the cancelled grey, as a line, and grey text
    ax.set_title("Queue depth over time")
    assert zhfigures.states_drawn(_png(fig, tmp_path / "line.png")) == []


def test_key_names_each_colour_with_its_state_in_chinese():
    sentence, title = zhfigures.key_text(["running", "waiting", "blocked"], zhui.catalogue(),
                                         zhfigures.guide_words())
    assert "蓝色 running（运行）、浅绿色 waiting（等待）、红色 blocked（阻塞）" in sentence
    assert "泳道" in sentence and "秒" in sentence and "cancelled" not in sentence
    assert re.search(r"[\u4e00-\u9fff]", title)
    assert title == zhfigures.guide_words()["How to read an experiment"]
    assert zhfigures.key_text(["running"], {}, zhfigures.guide_words()) is None, "no sentence, no key"


def test_titles_are_read_from_the_code_in_source_order():
    source = ('fig = tl.plot("Two lanes", lanes=["a"])\n'
              'await asyncio.sleep(0)\n'                       # a notebook cell may await at top level
              'ax.set_title(f"{n} calls: {t:.2f} s")\n'
              'ax.plot(xs, ys, label="measured")\n'             # a line, not a title
              'fig.suptitle("")\n'
              'tl.plot("wide" if wide else "narrow", ax=ax)\n')  # two subplots, one title each
    assert zhfigures.titles_in(source) == ["Two lanes", "f'{n} calls: {t:.2f} s'", "wide", "narrow"]
    assert zhfigures.titles_in("def broken(:\n") == []


def test_every_figure_title_of_the_chapters_is_translated():
    """`python -m lab_snippets.book.zhfigures update` then translate locale/zh_CN/figures.po."""
    titles, words = zhfigures.notebook_titles(), zhfigures.title_words()
    assert len(titles) >= 25
    missing = [t for t in titles if t not in words]
    assert not missing, f"figure titles without Chinese in figures.po: {missing}"
    stale = sorted(set(words) - set(titles) - zhfigures.drawn_words())
    assert not stale, f"figures.po holds titles no chapter draws (run `... zhfigures update`): {stale}"
    assert all(re.search(r"[\u4e00-\u9fff]", words[t]) for t in titles)


def test_every_lane_the_chapters_write_out_is_translated():
    """A lane renamed in a chapter (13's `notebook: result() blocks` -> `notebook: result()`, session 16)
    is caught here, before a build draws it with a word figures.po lacks. Counterfactual: rename a
    lane in a `lanes=` list (this test names it)."""
    assert zhfigures.lanes_in('tl.plot("T", lanes=["job 1", "main thread", name], ax=ax)\n'
                              'f(lanes=("b",))\n') == ["job 1", "main thread", "b"]
    lanes, words = zhfigures.notebook_lanes(), zhfigures.title_words()
    assert len(lanes) >= 30, len(lanes)
    missing = [lane for lane in lanes if lane not in words and zhfigures.as_pattern(lane) not in words]
    assert not missing, f"lanes without Chinese in figures.po (`zhfigures update`, then translate): {missing}"


def test_figure_keys_say_only_what_the_picture_cannot():
    """locale/zh_CN/figure_keys.po: a figure drawn in Chinese shows its title, so its key (when it has
    one) explains the rest, for a title some chapter draws, in plain text, never repeating the title."""
    keys, titles, words = zhfigures.figure_keys(), zhfigures.notebook_titles(), zhfigures.title_words()
    assert len(keys) >= 20, len(keys)
    stale = sorted(set(keys) - set(titles))
    assert not stale, f"figure_keys.po holds keys of titles no chapter draws: {stale}"
    for title, key in keys.items():
        assert re.search(r"[\u4e00-\u9fff]", key), title
        assert words[title].rstrip("。？！") not in key, f"the key of {title!r} repeats its title"
        assert "`" not in key, f"the key of {title!r}: a key is plain text, a backtick shows as one"


def test_an_update_from_a_partial_cache_drops_no_drawn_word():
    # counterfactual: the rule before session 16 (the words of the cached chapters only): "Lane B",
    # drawn by a chapter the cache lacked, lost its translation
    titles, old = ["A title"], ["Lane A", "Lane B"]
    assert zhfigures.drawn_entries(titles, old, {"Lane A", "Lane C"}, complete=False) == \
        ["Lane A", "Lane B", "Lane C"]
    assert zhfigures.drawn_entries(titles, old, {"Lane A", "Lane C"}, complete=True) == \
        ["Lane A", "Lane C"], "a complete cache removes what no chapter draws any more"
    assert zhfigures.drawn_entries(titles, old, {"A title"}, complete=True) == []


def test_a_figure_drawn_by_a_function_of_another_cell_finds_its_title():
    """An answer cell that ends with ``draw(...)`` shows the figure whose title a folded cell's
    function sets (chapter 01 after round 17b had no Chinese key). Counterfactual: look only at the
    cell's own code (no title found)."""
    helper = 'def draw(tl):\n    tl.plot("Three bodies and the caller")\n    plt.show()\n'
    answer = 'print(starts)\ndraw(tl)\n'
    drawers = zhfigures.drawing_functions([helper, answer])
    assert drawers == {"draw": ["Three bodies and the caller"]}
    assert zhfigures.titles_in(answer) == [] and zhfigures.called_names(answer) == ["print", "draw"]


def test_a_legend_given_inside_a_drawing_function_is_found():
    """The alt text names a colour by the figure's own legend (``meanings=``) also when a function
    of another cell draws it. Counterfactual: read only the cell's own code (the default meaning)."""
    from lab_snippets.book import figalt

    helper = 'def draw(tl):\n    tl.plot("T", meanings={"failed": "dropped by the filter"})\n'
    defined = zhfigures.function_sources([helper, "draw(tl)\n"])
    assert [figalt.meanings_in(defined[n]) for n in zhfigures.called_names("draw(tl)\n")] == [
        {"failed": "dropped by the filter"}]


def test_a_figure_drawn_two_calls_away_finds_its_title_and_legend():
    """An answer cell that calls ``report(...)``, whose body calls ``draw(...)``, shows what
    ``draw`` sets: its title and its legend's words (chapter 02's heartbeat figure after session
    25's round 7). Counterfactual: follow only the cell's own calls (``called_names``): neither the
    title nor the legend is found."""
    from lab_snippets.book import figalt

    helper = ('def draw(tl):\n    tl.plot("Two waits", meanings={"running": "on time"})\n'
              'def report(tl):\n    print(len(tl.spans))\n    draw(tl)\n')
    answer = "tl = run()\nreport(tl)\n"
    defined = zhfigures.function_sources([helper, answer])
    names = zhfigures.reachable_names(answer, defined)
    assert names[:2] == ["run", "report"] and "draw" in names
    drawers = zhfigures.drawing_functions([helper, answer])
    assert [t for n in names for t in drawers.get(n, [])] == ["Two waits"]
    legends = [figalt.meanings_in(defined.get(n, "")) for n in names]
    assert [legend for legend in legends if legend] == [{"running": "on time"}]
    assert "draw" not in zhfigures.called_names(answer)


def test_an_execution_runs_again_when_a_word_it_drew_is_translated_differently(tmp_path, monkeypatch):
    # the Chinese figures are drawn when a chapter executes; a later change to figures.po reaches the
    # page only if that execution runs again (session 19's review build kept 11's old labels)
    from lab_snippets import figlang
    from lab_snippets.book import zhfigures as zf

    records = {(7, "t0"): ({"waiting", "job {}"}, set()), (8, "t1"): None}
    monkeypatch.setattr(zf, "_figure_words_by_record", lambda root: records)
    table = {"waiting": "等待", "job {}": "作业 {}"}
    monkeypatch.setattr(figlang, "translate", lambda w: table.get(w))
    assert zf.stale_records(tmp_path) == {8}  # never remembered: only the record without Chinese figures
    zf.remember_figure_words(tmp_path)
    assert zf.stale_records(tmp_path) == {8}  # the catalogue unchanged since
    table["waiting"] = "等候"
    assert zf.stale_records(tmp_path) == {7, 8}
    records[(7, "t2")] = records.pop((7, "t0"))  # record 7 replaced by a new execution (same number)
    zf.remember_figure_words(tmp_path)
    assert zf.stale_records(tmp_path) == {8}
