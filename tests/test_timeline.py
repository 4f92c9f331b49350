import asyncio
import threading

import matplotlib
import pytest

matplotlib.use("Agg")

from lab_snippets.timeline import STATE_COLOURS, Timeline  # noqa: E402


def fake_clock(times):
    it = iter(times)
    return lambda: next(it)


def test_span_records_relative_times_and_state():
    tl = Timeline(clock=fake_clock([10.0, 10.5, 11.25]))
    with tl.span("work"):
        pass
    assert tl.spans[0].label == "work"
    assert tl.spans[0].start == pytest.approx(0.5)
    assert tl.spans[0].end == pytest.approx(1.25)
    assert tl.spans[0].state == "running"


def test_span_marks_failure_and_cancellation_and_reraises():
    tl = Timeline()
    with pytest.raises(ValueError):
        with tl.span("bad"):
            raise ValueError("boom")

    async def cancelled():
        with tl.span("stopped"):
            await asyncio.sleep(10)

    async def main():
        task = asyncio.create_task(cancelled())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 1)

    asyncio.run(main())
    assert [s.state for s in tl.spans] == ["failed", "cancelled"]


def test_unknown_state_and_inverted_span_are_rejected():
    tl = Timeline()
    with pytest.raises(ValueError, match="unknown state"):
        tl.add("x", 1, 2, state="sleeping")
    with pytest.raises(ValueError, match="ends"):
        tl.add("x", 2, 1)


def test_order_checks_relative_order_with_gaps():
    tl = Timeline()
    for name in ["a", "x", "b", "c"]:
        tl.mark(name)
    assert tl.order("a", "b", "c")
    assert tl.order("a", "c")
    assert not tl.order("b", "a")
    assert not tl.order("a", "missing")


def test_max_overlap_counts_concurrent_spans():
    tl = Timeline(clock=lambda: 0.0)
    tl.add("a", 0, 2)
    tl.add("b", 1, 3)
    tl.add("c", 2, 4)  # touches a's end: not overlapping a
    tl.add("d", 0, 10, state="waiting")
    assert tl.max_overlap() == 2
    assert tl.max_overlap(None) == 3


def test_thread_safe_recording():
    tl = Timeline()

    def record(i):
        for j in range(200):
            tl.mark(f"{i}-{j}")

    threads = [threading.Thread(target=record, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
        assert not t.is_alive()
    assert len(tl.names()) == 800


def test_plot_has_title_labels_legend_and_state_colours():
    tl = Timeline(clock=lambda: 0.0)
    tl.add("task A", 0, 1)
    tl.add("task B", 0.5, 2, state="waiting")
    tl.mark("task A done")
    fig = tl.plot("Two tasks")
    ax = fig.axes[0]
    assert ax.get_title() == "Two tasks"
    assert ax.get_xlabel() and ax.get_ylabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["running", "waiting"]
    colours = {matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches}
    assert colours == {STATE_COLOURS["running"], STATE_COLOURS["waiting"]}
    assert [t.get_text() for t in ax.get_yticklabels()] == ["task A", "task B"]
    matplotlib.pyplot.close(fig)


def test_plot_meanings_rename_a_state_in_the_legend_and_keep_its_colour():
    tl = Timeline(clock=lambda: 0.0)
    tl.add("child", 0, 1)
    tl.add("child", 1, 2, state="waiting")
    fig = tl.plot("A child", meanings={"waiting": "zombie"})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["running", "zombie"], \
        "the legend names a state by the chapter's word, the others by their own"
    handles = ax.get_legend().legend_handles
    assert [matplotlib.colors.to_hex(h.get_facecolor()) for h in handles] == [
        STATE_COLOURS["running"], STATE_COLOURS["waiting"]], "a renamed state keeps its colour"
    matplotlib.pyplot.close(fig)
    with pytest.raises(ValueError, match="unknown states"):
        tl.plot("A child", meanings={"zombie": "zombie"})


def test_table_lists_spans_sorted_by_start():
    tl = Timeline(clock=lambda: 0.0)
    tl.add("late", 1, 2)
    tl.add("early", 0, 1)
    lines = tl.table().splitlines()
    assert lines[1].startswith("early") and lines[2].startswith("late")


def test_now_mark_and_total_are_relative_to_the_start():
    tl = Timeline(clock=fake_clock([10.0, 10.5, 11.0]))
    assert tl.now() == pytest.approx(0.5)
    assert tl.mark("x").at == pytest.approx(1.0)
    tl.add("a", 11.0, 13.0)
    tl.add("b", 12.0, 15.0)
    assert tl.total() == pytest.approx(4.0), "from the first start (1.0) to the last end (5.0)"
    assert Timeline().total() == 0.0


def test_spans_of_compares_labels_by_value():
    tl = Timeline(clock=lambda: 0.0)
    tl.add("worker 1", 0, 1)
    label = "".join(["worker ", str(1)])  # an equal string built elsewhere, as a loop's f-string is
    assert [s.end for s in tl.spans_of(label)] == [1.0]


def test_plot_ticks_span_their_lane_and_the_figure_grows_with_the_lanes():
    import matplotlib.pyplot as plt

    tl = Timeline(clock=lambda: 0.0)
    for n in range(8):
        tl.add(f"lane {n}", 0, 1)
    tl.mark("lane 0 event")
    fig = tl.plot("Eight lanes")
    ticks = [line for line in fig.axes[0].get_lines() if list(line.get_xdata()) == [0.0, 0.0]]
    assert [list(t.get_ydata()) for t in ticks] == [pytest.approx([-0.38, 0.38])], "a tick centred on lane 0"
    few = Timeline(clock=lambda: 0.0)
    few.add("one", 0, 1)
    small = few.plot("One lane")
    heights = [f.get_size_inches()[1] for f in (small, fig)]
    plt.close(fig)
    plt.close(small)
    assert 0 < heights[0] < heights[1], f"more lanes, a taller figure: {heights}"


def test_a_chart_whose_spans_all_end_before_t0_is_refused():
    import time

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lab_snippets.timeline import Timeline

    start = time.monotonic()
    tl = Timeline()  # made after the work: every span lies before its t0
    tl.add("a", start - 2.0, start - 1.0)
    with pytest.raises(ValueError, match="every span ends before the timeline's start"):
        tl.plot("late timeline")
    tl = Timeline()
    tl.t0 = start - 2.0  # set before the spans are added: they are stored relative to t0
    tl.add("a", start - 2.0, start - 1.0)
    fig = tl.plot("fixed")
    assert fig.axes[0].patches, "with t0 at the earliest start the span is drawn"
    plt.close("all")
