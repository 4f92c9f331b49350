"""Record spans of work and events against one monotonic clock, and draw them.

One look for the whole course: the same colour for the same state in every chapter.

    from lab_snippets.timeline import Timeline

    tl = Timeline()
    with tl.span("fetch 1"):            # a span of running work
        ...
    tl.mark("fetch 1 done")             # an ordered event
    tl.add("worker", start, end, state="blocked")   # a span measured elsewhere
    assert tl.order("fetch 1 done", "fetch 2 done")
    fig = tl.plot("Two fetches")

Spans may come from tasks, threads or other processes: every time is a reading of
`time.monotonic()`, which on Linux is the same clock in every process of the machine.
A `Timeline` is safe to use from several threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

#: Every state a span can have, and its colour. Chapters use only these.
STATE_COLOURS: dict[str, str] = {
    "running": "#2b83ba",  # doing its work: computing, or a blocking call in a thread of its own
    "waiting": "#abdda4",  # suspended, waiting for something (an await, a lock, a queue)
    "blocked": "#d7191c",  # holding the loop (or a thread others need), busy or asleep
    "cancelled": "#7f7f7f",  # stopped on request
    "failed": "#fdae61",  # ended by an exception
    "cleanup": "#8e6bbf",  # releasing resources after the work
}
STATES = tuple(STATE_COLOURS)


@dataclass(frozen=True)
class Span:
    label: str
    start: float
    end: float
    state: str = "running"

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Event:
    name: str
    at: float
    data: dict = field(default_factory=dict)


class Timeline:
    """A thread-safe recorder of spans and events, all times from `time.monotonic()`."""

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.t0 = clock()
        self.spans: list[Span] = []
        self.events: list[Event] = []

    # -- recording ---------------------------------------------------------------
    def now(self) -> float:
        """Seconds since this timeline was created."""
        return self._clock() - self.t0

    def add(self, label: str, start: float, end: float, state: str = "running") -> Span:
        """Add a span measured elsewhere; `start` and `end` are raw `time.monotonic()` readings."""
        if state not in STATE_COLOURS:
            raise ValueError(f"unknown state {state!r}; use one of {', '.join(STATES)}")
        if end < start:
            raise ValueError(f"span {label!r} ends ({end}) before it starts ({start})")
        span = Span(label, start - self.t0, end - self.t0, state)
        with self._lock:
            self.spans.append(span)
        return span

    @contextmanager
    def span(self, label: str, state: str = "running") -> Iterator[None]:
        """Record the time spent inside the `with` block as one span.

        If the block is cancelled the span is recorded as "cancelled", if it raises
        anything else as "failed"; the exception always propagates.
        """
        if state not in STATE_COLOURS:
            raise ValueError(f"unknown state {state!r}; use one of {', '.join(STATES)}")
        start = self._clock()
        final = state
        try:
            yield
        except BaseException as exc:
            final = "cancelled" if _is_cancellation(exc) else "failed"
            raise
        finally:
            self.add(label, start, self._clock(), final)

    def mark(self, name: str, **data) -> Event:
        """Append an event to the ordered log."""
        with self._lock:
            event = Event(name, self._clock() - self.t0, dict(data))
            self.events.append(event)
        return event

    # -- questions experiments ask -------------------------------------------------
    def names(self) -> list[str]:
        """Event names in the order they happened."""
        with self._lock:
            return [e.name for e in self.events]

    def order(self, *names: str) -> bool:
        """True when every named event happened, in the given order (others may come between)."""
        seen = self.names()
        try:
            positions = [seen.index(n) for n in names]
        except ValueError:
            return False
        return positions == sorted(positions)

    def spans_of(self, label: str) -> list[Span]:
        with self._lock:
            return [s for s in self.spans if s.label == label]

    def total(self) -> float:
        """From the first span's start to the last span's end (0 when there is none)."""
        with self._lock:
            if not self.spans:
                return 0.0
            return max(s.end for s in self.spans) - min(s.start for s in self.spans)

    def max_overlap(self, state: str | None = "running") -> int:
        """The largest number of spans (of `state`, or of any state if None) open at one instant."""
        with self._lock:
            spans = [s for s in self.spans if state is None or s.state == state]
        points = sorted([(s.start, 1) for s in spans] + [(s.end, -1) for s in spans],
                        key=lambda p: (p[0], p[1]))
        peak = now = 0
        for _, step in points:
            now += step
            peak = max(peak, now)
        return peak

    # -- drawing ------------------------------------------------------------------
    def plot(self, title: str, ax=None, xlabel: str = "time since start (s)", lanes: list[str] | None = None,
             meanings: dict[str, str] | None = None):
        """Draw the spans as a Gantt chart, one lane per label, and return the figure.

        Events are drawn as small black ticks on the lane whose label starts their name;
        events that match no lane stay in the log but are not drawn. ``meanings`` gives a state
        the chapter's own word in the legend (``{"waiting": "zombie"}``): the colour stays the
        state's, the legend says what it means in this figure.
        """
        meanings = meanings or {}
        unknown = sorted(set(meanings) - set(STATE_COLOURS))
        if unknown:
            raise ValueError(f"meanings for unknown states {unknown}; use some of {', '.join(STATES)}")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch

        with self._lock:
            spans = list(self.spans)
            events = list(self.events)
        if lanes is None:
            lanes = []
            for s in spans:
                if s.label not in lanes:
                    lanes.append(s.label)
        if ax is None:
            fig, ax = plt.subplots(figsize=(8, 0.45 * max(len(lanes), 2) + 1.4), layout="constrained")
        else:
            fig = ax.figure
        row = {label: i for i, label in enumerate(lanes)}
        drawn = [s for s in spans if s.label in row]
        if drawn and all(s.end <= 0 for s in drawn):
            raise ValueError(
                f"{title!r}: every span ends before the timeline's start, so the chart would be empty "
                "(spans are drawn from t0 on): create the Timeline before the work it records, or set its "
                "t0 to the earliest start")
        for s in spans:
            if s.label in row:
                ax.barh(row[s.label], max(s.duration, 1e-4), left=s.start, height=0.6,
                        color=STATE_COLOURS[s.state], edgecolor="black", linewidth=0.4)
        for e in events:
            lane = next((row[label] for label in lanes if e.name.startswith(label)), None)
            if lane is not None:
                ax.plot([e.at, e.at], [lane - 0.38, lane + 0.38], color="black", linewidth=1)
        ax.set_yticks(range(len(lanes)), lanes)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.set_ylabel("work")
        ax.set_title(title)
        ax.set_xlim(left=0)
        ax.grid(axis="x", alpha=0.3)
        used = [st for st in STATES if any(s.state == st for s in spans)]
        ax.legend(handles=[Patch(facecolor=STATE_COLOURS[st], edgecolor="black", label=meanings.get(st, st))
                           for st in used],
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), title="state", frameon=False)
        return fig

    def table(self) -> str:
        """The spans as a compact text table (label, state, start, end), sorted by start."""
        with self._lock:
            spans = sorted(self.spans, key=lambda s: s.start)
        width = max([len(s.label) for s in spans] + [5])
        lines = [f"{'label':<{width}}  {'state':<9}  start   end"]
        lines += [f"{s.label:<{width}}  {s.state:<9}  {s.start:5.2f}  {s.end:5.2f}" for s in spans]
        return "\n".join(lines)


def _is_cancellation(exc: BaseException) -> bool:
    import asyncio
    import concurrent.futures

    return isinstance(exc, asyncio.CancelledError | concurrent.futures.CancelledError)


def figure_style() -> None:
    """Apply the course's matplotlib look (called once at the top of a chapter)."""
    import matplotlib

    matplotlib.rcParams.update({
        "figure.dpi": 96,
        "savefig.dpi": 96,
        "font.size": 10,
        "axes.titlesize": 11,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "figure.facecolor": "white",
    })
    from lab_snippets import figlang

    figlang.install()  # the book build also draws each figure in Chinese (COURSE_FIGURE_EDITIONS)
