# %% [markdown]
# # 08 · Thread pools: moving blocking work off the event loop
# *线程池：把阻塞工作移出事件循环*
#
# **The question.** Some calls block: a synchronous client, `ray.get`, reading a checkpoint.
# How do you call them from async code without freezing the event loop, what limits how many
# run at once, and what happens to such a call when the coroutine waiting for it gives up?
#
# **You will**
# 1. measure the loop's heartbeat while a blocking call runs on the loop and while it runs
#    in a worker thread through `asyncio.to_thread`;
# 2. use `run_in_executor` with a pool of your own and predict what its size does to the work
#    in flight;
# 3. tell a `concurrent.futures.Future` from an `asyncio.Future`, and bridge them with
#    `asyncio.wrap_future`;
# 4. find out what a timeout or a cancellation of the awaiting coroutine does to the thread,
#    and stop the thread properly with a `threading.Event`.
#
# **Needs** chapters 02 (a frozen loop), 03 and 05 (cancellation) · about 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The folded setup cell imports the tools; its `figure_style()` only
# sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import concurrent.futures
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from lab_snippets.asyncio_tools import InFlight, ideal_batch_time
from lab_snippets.loopwatch import LoopWatch, borrowed_default_executor
from lab_snippets.measure import ainterleaved, cpu_share, usable_cpus
from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## A blocking call
#
# `blocking_call` stands for any function that holds its thread until it returns: here a
# `time.sleep`, in real code `ray.get(ref)`, `requests.post(...)`, `torch.load(...)`. It
# records its span (`tl.span`) on a `Timeline`, the course's stopwatch (chapter 01), in a
# lane named after the thread that ran it.
#
# `asyncio.to_thread` hands such a call to the loop's *default* thread pool. The course's
# `borrowed_default_executor` lends a cell a fresh default pool and shuts it down at the end,
# so no experiment leaves threads behind; your own code calls `asyncio.to_thread` alone.

# %%
def blocking_call(seconds: float, tl: Timeline, label: str | None = None,
                  state: str = "running") -> str:
    thread = threading.current_thread().name
    with tl.span(label or thread, state=state):
        time.sleep(seconds)
    return thread


# %% [markdown]
# ## Measure: the loop's heartbeat during each call
#
# The heartbeat of chapter 02 (`LoopWatch`: a task that wakes up every 5 ms and records each
# wake-up) now watches two runs of the same 0.15 s call: first called directly in the
# coroutine, then awaited through `asyncio.to_thread`. `draw_heartbeat` (folded) draws the
# two calls above the heartbeat lane, in the colours of the [reading guide](../book/reading_guide.md):
# the call on the loop red (blocked: it holds the loop's thread), the call in a worker thread
# blue (running). The heartbeat lane is measured: blue while the loop answers its heartbeat,
# red where it went without a wake-up.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code and the heartbeat count"}
def draw_heartbeat(tl: Timeline, watch: LoopWatch):
    watch.add_to(tl, label="event loop heartbeat", threshold=0.05)
    return tl.plot("The same blocking call, on the event loop and in a worker thread",
                   lanes=["called on the loop", "awaited via to_thread", "event loop heartbeat"],
                   meanings={"running": "running / answering"})


def heartbeats_during(span, tl: Timeline, watch: LoopWatch) -> int:
    """How many heartbeats the loop got while the span was open (beats are absolute times)."""
    return sum(tl.t0 + span.start < beat < tl.t0 + span.end for beat in watch.beats)


# %% [markdown]
# **Predict:** does the call itself take any less time in a worker thread, and does the
# coroutine that awaits it go on any sooner? The cell also counts the heartbeats the loop gets
# during each call (about 30 fit in 0.15 s), which shows the loop's side; `heartbeats_during`,
# folded with the plotting code, does the counting.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
BLOCK = 0.15
tl = Timeline()
with borrowed_default_executor():
    async with LoopWatch(interval=0.005) as watch:  # a heartbeat task, every 5 ms
        await asyncio.sleep(0.02)
        blocking_call(BLOCK, tl, label="called on the loop", state="blocked")
        await asyncio.sleep(0.02)
        worker = await asyncio.to_thread(
            blocking_call, BLOCK, tl, "awaited via to_thread")
        await asyncio.sleep(0.02)
print(f"the to_thread call ran in thread {worker!r}, "
      f"not in {threading.current_thread().name!r}")
for call in ("called on the loop", "awaited via to_thread"):
    call_span = tl.spans_of(call)[0]
    print(f"{call}: the call took {call_span.duration:.2f} s, "
          f"heartbeats during it: {heartbeats_during(call_span, tl, watch)}")
fig = draw_heartbeat(tl, watch)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: thread-keeps-the-loop-beating
on_loop = tl.spans_of("called on the loop")[0]
in_thread = tl.spans_of("awaited via to_thread")[0]


def beats_inside(span) -> list[float]:
    return [b for b in watch.beats if tl.t0 + span.start < b < tl.t0 + span.end]


print(f"heartbeats during the call on the loop: {len(beats_inside(on_loop))}, "
      f"during the to_thread call: {len(beats_inside(in_thread))}")
covering = [(a, b) for a, b in watch.stalls(0.5 * BLOCK)
            if a <= tl.t0 + on_loop.start and b >= tl.t0 + on_loop.end]
assert worker != threading.current_thread().name
assert beats_inside(on_loop) == [], "nothing ran on the loop during the direct call"
assert len(covering) == 1, "one gap between heartbeats spans the whole direct call"
assert len(beats_inside(in_thread)) >= 5, "the loop kept beating while the thread blocked"
print("✓ no heartbeat during the call on the loop; the loop kept beating during to_thread")

# %% [markdown]
# :::{dropdown} Why
#
# The call takes its 0.15 s either way, and the coroutine that awaits it waits all of it:
# `to_thread` does not make the call faster or let its caller go on sooner. What differs is
# the thread the call blocks. Called directly, the call holds the loop's own thread, so no other task, the heartbeat included,
# can run until it returns. Through `to_thread` it holds a worker thread, where waiting is
# that thread's whole job, and the loop's thread stays free. In the figure, the measured red
# stretch of the heartbeat lane lines up with the red call, the one on the loop, and not with
# the blue one in a worker thread. (The lane turns red where the loop went more than 50 ms
# without a wake-up, from the last wake-up before the gap, so its red can start a little
# before the call's bar.)
#
# :::
#
# ## A pool of your own
#
# `asyncio.to_thread(fn, ...)` is close to `loop.run_in_executor(None, fn, ...)`, with two
# differences: it also accepts keyword arguments for `fn`, and it runs `fn` in a copy of the
# caller's context (chapter 11 takes that one up). The `None` means "the default pool".
# `run_in_executor(pool, fn, ...)` sends the call to a pool you choose.
#
# `draw_pool_calls` (folded) draws each call on the lane of the thread that ran it, from the
# first call's start. The labels `#1`, `#2`, `#3` on a lane are the order of the calls on
# that thread (its first, second, third call), not call ids.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_pool_calls(pool_tl: Timeline, threads_used: list[str]):
    first_start = min(span.start for span in pool_tl.spans)
    from_first_call = Timeline()  # the same spans, with 0 at the first call's start
    for span in pool_tl.spans:
        from_first_call.add(span.label, from_first_call.t0 + span.start - first_start,
                            from_first_call.t0 + span.end - first_start, span.state)
    fig = from_first_call.plot(
        f"{CALLS} blocking calls on a pool of {WORKERS} threads, one lane per thread",
        xlabel="time since the first call (s)", lanes=sorted(set(threads_used)),
        meanings={"running": "a call running"})
    ax = fig.axes[0]
    calls_by_lane: dict[float, list] = {}
    for bar in ax.patches:  # one bar per call
        calls_by_lane.setdefault(round(bar.get_y(), 3), []).append(bar)
    for bars in calls_by_lane.values():
        for nth, bar in enumerate(sorted(bars, key=lambda b: b.get_x()), start=1):
            bar.set_edgecolor("white")  # a visible gap between one call and the next
            bar.set_linewidth(3)
            ax.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2,
                    f"#{nth}", ha="center", va="center", color="white", fontsize=9)
    return fig


# %% [markdown]
# The next cell sends nine 0.08 s calls to a pool of three threads, all at once. Predict: how
# many of them run at the same moment, and how long does it take from the first call's start
# to the last call's end: 0.08 s, 0.24 s or 0.72 s?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
CALLS, WORKERS, DURATION = 9, 3, 0.08
inside = InFlight()  # counts the calls inside counted_call
pool_tl = Timeline()


def counted_call(seconds: float) -> str:
    with inside:
        return blocking_call(seconds, pool_tl, state="running")


loop = asyncio.get_running_loop()
with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="rm-worker") as pool:
    calls = [loop.run_in_executor(pool, counted_call, DURATION) for _ in range(CALLS)]
    threads_used = await asyncio.gather(*calls)
print(f"{CALLS} calls on a pool of {WORKERS}: peak in flight {inside.peak}, "
      f"on {len(set(threads_used))} threads; "
      f"first call to last: {pool_tl.total():.2f} s")
fig = draw_pool_calls(pool_tl, threads_used)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: pool-size-caps-calls-in-flight
pool_elapsed = pool_tl.total()  # from the first call's start to the last call's end
ideal = ideal_batch_time(CALLS, WORKERS, DURATION)
print(f"first call to last: {pool_elapsed:.3f} s (ideal {ideal:.2f} s; "
      f"one thread would need {CALLS * DURATION:.2f} s)")
assert inside.peak == WORKERS, f"the pool size caps the calls in flight: {inside.peak}"
assert len(set(threads_used)) == WORKERS
# floor: a sleep never ends early, so no load makes the waves faster than ideal
assert pool_elapsed >= 0.95 * ideal, (
    "the calls beyond the pool size had to wait for a free thread")
print(f"✓ never more than {WORKERS} calls at once, on {WORKERS} threads, in three waves")

# %% [markdown]
# :::{dropdown} Why
#
# Look at the peak and the thread count in the output: a pool with *k* threads gives each
# thread one call at a time, and the other calls queue inside the pool until a thread is free.
# So nine calls on three threads run in three waves of 0.08 s, one lane per worker thread, and
# the pool size, not the number of calls, sets the pace. The printed time is a little over
# 0.24 s: handing each call to a thread and its result back costs a few milliseconds, and
# 0.24 s is the floor. A sleep never ends early, but on a busy machine it can end late, so
# some bars in the figure can be wider than 0.08 s.
#
# :::

# %% [markdown]
# The loop's default pool is a pool like this one, with `min(32, CPUs + 4)` threads, shared
# by every `to_thread` call of the loop. The next cell starts two more blocking `to_thread`
# calls than the pool has threads, each sleeping 0.1 s, while the CPU sits idle, and prints the
# pool's size on this machine and how long the batch took.

# %%
inside = InFlight()
with borrowed_default_executor() as default_pool:
    default_size = default_pool._max_workers
    batch_start = time.monotonic()
    await asyncio.gather(*(asyncio.to_thread(counted_call, 0.1)
                           for _ in range(default_size + 2)))
    batch_time = time.monotonic() - batch_start
print(f"default pool size {default_size}: "
      f"peak in flight {inside.peak} of {inside.entered} calls; "
      f"the batch took {batch_time:.2f} s")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert inside.peak == default_size < inside.entered, (
    f"the default pool caps the calls at its size: {inside.peak} of {inside.entered}")
print(f"✓ {inside.entered} calls, never more than the pool's {default_size} at once")

# %% [markdown]
# The batch took about two rounds of 0.1 s: the default pool caps its calls as the pool of
# three did. However idle the CPU is, every blocked `to_thread` call holds one of the pool's
# threads, and the calls after the last free thread wait in its queue. The chapter's last run
# measures what that cost slime's `post` when it waited for each request this way.

# %% [markdown]
# ## Two kinds of Future
#
# A thread pool speaks `concurrent.futures`: `pool.submit(fn)` returns a
# `concurrent.futures.Future`, a thread-safe box that holds the call's return value once the
# call is done. Predict: can a coroutine `await` the future that `submit` returned?
#
# The cell below submits a call to a pool and tries `await` on the future it gets back,
# inside a `try` that catches an error whatever the answer is; then it waits for the same
# call in two other ways a coroutine can, and prints the type of each future.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
bridge_tl = Timeline()
with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bridge") as pool:
    thread_future = pool.submit(blocking_call, 0.02, bridge_tl)
    try:
        direct = await thread_future
    except Exception as exc:
        direct = exc
    wrapped = asyncio.wrap_future(thread_future)
    via_wrap = await wrapped
    loop_future = loop.run_in_executor(pool, blocking_call, 0.02, bridge_tl)
    via_executor = await loop_future


def kind(future) -> str:
    return f"{type(future).__module__}.{type(future).__name__}"


print(f"submit -> {kind(thread_future)}\n"
      f"  await gives: {type(direct).__name__}: {direct}")
print(f"wrap_future -> {kind(wrapped)}; run_in_executor -> {kind(loop_future)}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert isinstance(thread_future, concurrent.futures.Future)
# the type and the missing __await__ decide, not the message (3.14 reworded it)
assert isinstance(direct, TypeError) and not hasattr(thread_future, "__await__")
assert isinstance(wrapped, asyncio.Future) and isinstance(loop_future, asyncio.Future)
assert via_wrap == via_executor == "bridge_0"
print("✓ a concurrent.futures.Future cannot be awaited; wrapped, it is an asyncio.Future")

# %% [markdown]
# :::{dropdown} Why
#
# A `concurrent.futures.Future` has no `__await__`, so `await` on it raises `TypeError`;
# a thread either blocks in `.result()` or registers a function with
# `add_done_callback`, which the future calls when it is done. The event loop speaks the
# other kind, `asyncio.Future`, which you `await`; it is not thread-safe and belongs to
# one loop. `asyncio.wrap_future` wraps the first kind in the second, `run_in_executor`
# does that for you, and awaiting the result gives the call's return value (here the
# name of the pool's thread, `bridge_0`).
#
# :::

# %% [markdown]
# ## Predict: does the reload stop at the deadline?
#
# A weight reload runs in a thread and the handler waiting for it has a deadline:
# `async with asyncio.timeout(0.05): await asyncio.to_thread(reload, ...)`. When the deadline
# passes, `TimeoutError` is raised in the handler. The reload logs each chunk it loads, and the
# handler logs the `TimeoutError`; the cell's last `await` only gives the thread time to end
# before the log is printed (at most 2 s). Is the reload still running after the handler got
# `TimeoutError`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
def reload_weights(chunks: int, chunk_seconds: float, log: list[str],
                   reload_done: threading.Event) -> str:
    for i in range(chunks):
        time.sleep(chunk_seconds)
        log.append(f"chunk {i} loaded")
    log.append("reload finished")
    reload_done.set()
    return "weights reloaded"


reload_log: list[str] = []
reload_done = threading.Event()
with borrowed_default_executor():
    try:
        async with asyncio.timeout(0.05):
            await asyncio.to_thread(reload_weights, 5, 0.03, reload_log, reload_done)
    except TimeoutError:
        reload_log.append("the handler got TimeoutError")
    # bounded clean-up, not part of the question: 2 s at most for the thread to end
    await asyncio.to_thread(reload_done.wait, 2)
print(*reload_log, sep="\n")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
timeout_at = reload_log.index("the handler got TimeoutError")
assert reload_done.is_set(), "the thread ran to its end"
assert reload_log[-1] == "reload finished" and timeout_at < len(reload_log) - 1
assert sum(entry.startswith("chunk") for entry in reload_log[timeout_at:]) >= 2, (
    "work went on after the timeout")
print("✓ the handler timed out, and the thread went on to load every chunk")

# %% [markdown]
# :::{dropdown} Why
#
# A timeout cancels the task it runs in, and that task here is the handler's, the one that
# awaits the thread: the handler stopped waiting and moved on, and the thread was not told anything. Python has no
# supported way to stop a thread from outside, so the reload ran all five chunks; if it had
# been holding a lock or a GPU, it would have kept holding it, and nobody would have been
# waiting for its result or its error.
#
# :::
#
# ## Asking a thread to stop
#
# A thread stops when its own code decides to. The standard way to ask is a
# `threading.Event` that the work checks between steps, and the waiting side should then
# *wait for the thread to finish* before it reports the timeout, so that no work is left
# running behind its back.
#
# The handler below awaits `asyncio.shield(reload_future)` under the deadline, sets the stop
# event when the deadline passes, and then awaits `reload_future` itself. Recall `shield` from
# chapter 05: awaiting `asyncio.shield(aw)` waits for `aw`, and when that wait is cancelled,
# only the shield is cancelled; `aw` goes on.

# %%
def reload_until_stopped(chunks: int, chunk_seconds: float, log: list[str],
                         stop: threading.Event) -> str:
    for i in range(chunks):
        if stop.is_set():
            log.append(f"stop seen before chunk {i}")
            return "reload stopped"
        time.sleep(chunk_seconds)
        log.append(f"chunk {i} loaded")
    return "weights reloaded"


# %% [markdown]
# The reload below has five chunks of 0.03 s, the handler a deadline of 0.05 s, and the thread
# checks `stop` before each chunk. Predict: how many chunks are loaded before the thread stops,
# and does the handler get the thread's answer or a `CancelledError`? (Its `except` catches
# both, so that the cell prints whichever one comes.)

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
stop_log: list[str] = []
stop = threading.Event()
with ThreadPoolExecutor(max_workers=1, thread_name_prefix="reload") as pool:
    reload_future = loop.run_in_executor(
        pool, reload_until_stopped, 5, 0.03, stop_log, stop)
    try:
        async with asyncio.timeout(0.05):
            await asyncio.shield(reload_future)
    except TimeoutError:
        stop.set()
        try:
            outcome = await reload_future
        except (Exception, asyncio.CancelledError) as exc:  # either way, shown below
            outcome = exc
        stop_log.append(f"the handler's await of reload_future gave {outcome!r}")
print(*stop_log, sep="\n")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: stop-event-ends-the-thread
assert stop_log[-1].endswith("'reload stopped'"), stop_log
assert any(entry.startswith("stop seen") for entry in stop_log)
assert sum(entry.startswith("chunk") for entry in stop_log) <= 3, (
    "the thread stopped at its next check")
print("✓ the stop event ended the reload at its next check, before the handler reported")

# %% [markdown]
# :::{dropdown} Why
#
# The thread reads the event only between chunks. The handler set it at the deadline, 0.05 s,
# in the middle of chunk 1, so the thread finished that chunk and returned at its next check
# (see `stop seen before chunk 2` in the output). The deadline's cancellation hit the shield, not
# `reload_future`, so that future was never cancelled. The handler could still await it, and
# got the thread's own answer, `'reload stopped'`, before it reported the timeout. Without
# `shield`, the timeout would have cancelled `reload_future` itself, and awaiting it
# afterwards would raise `CancelledError`, with the thread's answer lost.
#
# Cancelling the future that `run_in_executor` returned does not touch a call its thread is
# already running (only a call still queued in the pool is dropped), but it does mark that
# future cancelled for good.
#
# :::

# %% [markdown]
# ## Threads and computation
#
# Every call so far *waited*: on a sleep standing for I/O, another process or a remote
# answer. What about pure-Python *computation*? Two calls of a CPU-bound `busy_sum` run at
# once on a pool's two threads, on a machine with two usable cores. Predict: together they
# take about as long as one call alone (1×), about twice as long (2×), or more?
#
# :::{dropdown} How the cell measures it
#
# `ainterleaved`, from the course's `measure` module, times one call alone and the two calls
# at once in turn, five rounds of each. The cell divides each round's two-call time by the
# one-call time taken next to it, and prints the middle of the five ratios (their median): a
# burst of load from other programs spoils a round or two, not the middle one.
#
# :::

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
def busy_sum(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


N = 400_000


async def one_call() -> None:  # pool: the two-thread pool opened below
    await loop.run_in_executor(pool, busy_sum, N)


async def two_calls() -> None:  # at once, on the pool's two threads
    await asyncio.gather(*(loop.run_in_executor(pool, busy_sum, N) for _ in range(2)))


with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cpu") as pool:
    runs = await ainterleaved({"one call": one_call, "two calls": two_calls}, k=5)
rounds = zip(runs.samples["one call"], runs.samples["two calls"], strict=True)
slower = statistics.median(two / one for one, two in rounds)  # the middle round's ratio
gil_enabled = sys._is_gil_enabled() if sys.version_info >= (3, 13) else True
print(f"GIL enabled: {gil_enabled}; two CPU-bound calls on two threads took "
      f"{slower:.2f} × as long as one call alone")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: gil-cpu-threads-take-turns
if sys.version_info >= (3, 13) and not gil_enabled:
    # how many cores two spinning threads of this process get right now
    with ThreadPoolExecutor(max_workers=2) as spinners:
        cores_now = sum(spinners.map(lambda _: cpu_share(0.05), range(2)))
    print(f"free-threaded build: two spinning threads got {cores_now:.2f} cores just now")
    if usable_cpus() < 2 or cores_now < 1.6:
        print("this machine cannot show it now: fewer than 2 usable CPUs, "
              "or other programs are taking most of the CPU")
    else:
        assert slower <= 1.5, (
            f"without the GIL, two CPU-bound calls run side by side: they took {slower:.2f} ×")
        print("✓ without the GIL, the two calls ran side by side: about as long as one")
else:
    assert slower >= 1.5, (
        "with the GIL the two calls take turns, so together they take about twice as long "
        f"as one: {slower:.2f} ×")
    print("✓ with the GIL (every build before 3.13, and the default build since):\n"
          f"  two calls took {slower:.1f} × as long as one: they took turns")


# %% [markdown]
# :::{dropdown} Why
#
# About 2: two calls on two threads took about twice as long as one call alone. The reason
# is the {term}`GIL` (global interpreter lock), a lock inside CPython's standard build: only
# the thread holding it runs Python bytecode. A thread lets go of it while it waits on the
# operating system (a sleep, a socket, a lock in C code that releases it), which is why the
# waiting calls above overlapped; two computing threads only take turns. The loop's
# heartbeat keeps going, because the GIL is handed over every few milliseconds, but there is
# no speed-up. For computation, use processes (chapter 12).
#
# Each ratio compares two runs made back to back on the same machine, so other programs slow
# both sides alike: a busy machine makes both calls slower, not the ratio smaller.
#
# :::
#
# Some details of this section change with the Python version:
#
# :::{dropdown} Python versions
#
# - **Free-threaded builds.** Python 3.13 added an optional free-threaded build
#   (`python3.13t`; supported, still optional, in 3.14) without the GIL, where CPU-bound
#   threads do run in parallel: on two free cores, the two calls of the computing cell above
#   take about as long as one. On such a build the folded check first measures how many
#   cores two spinning threads get, and says so when the machine cannot show it.
# - **The default pool's size.** `ThreadPoolExecutor()` without `max_workers` gets
#   `min(32, (os.process_cpu_count() or 1) + 4)` threads on Python 3.13 and later (the CPUs
#   this process may use), and `min(32, (os.cpu_count() or 1) + 4)` on 3.11 and 3.12 (all the
#   CPUs of the machine); the loop's default pool is such a pool.
#
# :::

# %% [markdown]
# ## Before the exercise
#
# Exercise 8.1 builds on the stop event and needs one more fact about deadlines.
#
# **Whose `TimeoutError`?** The work itself may raise a `TimeoutError`, a socket read whose
# own timeout fired, say. Does `asyncio.timeout` let that one through, or does it report its
# own? The cell runs two kinds of work under a deadline: one raises its own `TimeoutError` at
# once, the other outlasts the deadline.

# %%
def read_reply() -> str:  # stands for a socket read whose own timeout fired
    raise TimeoutError("the server did not answer")


def slow_reply() -> str:  # answers after 0.2 s
    time.sleep(0.2)
    return "reply"


whose_timeout = {}
with borrowed_default_executor():
    for work, deadline in ((read_reply, 2.0), (slow_reply, 0.05)):
        try:
            async with asyncio.timeout(deadline):
                await asyncio.to_thread(work)
        except TimeoutError as exc:
            whose_timeout[work.__name__] = exc
            print(f"{work.__name__}: {exc!r}, raised from {exc.__cause__!r}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert str(whose_timeout["read_reply"]) == "the server did not answer"
assert whose_timeout["read_reply"].__cause__ is None
assert isinstance(whose_timeout["slow_reply"].__cause__, asyncio.CancelledError)
print("✓ the work's own TimeoutError came through unchanged; the deadline's came from a cancel")

# %% [markdown]
# `asyncio.timeout` turns into `TimeoutError` only the cancellation that *it* caused, and
# marks it: its `TimeoutError` has no message and is raised from the `CancelledError`. A
# `TimeoutError` that the awaited work raised before the deadline passes through unchanged.

# %% [markdown]
# ## Exercise 8.1 · A deadline that really stops the work
#
# Implement `run_with_deadline(work, timeout, pool)`:
#
# 1. create a `threading.Event` and run `work(stop_event)` on `pool` without blocking the loop;
#    `work` checks the event between steps and returns early once it is set;
# 2. if `work` returns within `timeout` seconds, return its result, and leave its event
#    unset (set it only when the deadline passes or the call is cancelled);
# 3. if the deadline passes, **or the coroutine is cancelled**, set the event, wait (at most
#    5 s) for the thread to return (it will, within a step), and only then let the
#    `TimeoutError` or the cancellation propagate;
# 4. if `work` raises, let its exception come out unchanged, even a `TimeoutError` of its
#    own (a socket's, say), not a new `TimeoutError` of yours.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (work that ends in time, that outlasts its deadline, or that
# raises; work that takes a while to wind down once it sees `stop`; a caller that cancels the
# call; one to three calls at once on one pool):
#
# - **in time**: the work's own result comes back, and its stop event is never set;
# - **errors**: an exception raised by `work`, a `TimeoutError` of its own included (a socket's,
#   say), comes out of `run_with_deadline` unchanged: the same type and message (not a new
#   `TimeoutError` of yours);
# - **deadline**: `TimeoutError` once `timeout` has passed, not before, and no later than the
#   work's wind-down needs; when it reaches the caller, the stop event is set and the thread has
#   already finished;
# - **cancellation**: the same when the caller cancels the call: stop set, thread finished,
#   then the `CancelledError`;
# - **the loop stays free** while the call waits, the wind-down included;
# - **several calls at once**: each has its own stop event, so one call's deadline stops only
#   its own work; the work runs on `pool`, which still takes work afterwards.
#
# :::
#
# The visible test below shows one run.
#
# :::{dropdown} Hint: one piece the chapter showed only for the deadline
#
# *Asking a thread to stop* handled only the deadline. If the caller cancels instead, the
# cancellation arrives at the same shielded `await`, as `CancelledError` rather than
# `TimeoutError`, and an `except TimeoutError:` lets it pass with the thread still running.
# Clean-up that must run in both cases, setting the event and waiting for the thread, belongs
# in a `finally`.
#
# To wait for the thread there without raising, use `await asyncio.wait([future], timeout=5)`.
# `asyncio.wait` returns two sets, the done futures and the pending ones, and raises neither a
# future's error nor a timeout: a
# failed future stays in `done` with its exception kept inside it, and a timeout leaves the
# future in `pending`.
#
# Item 4 needs no code of its own: `async with asyncio.timeout(...)` turns only the
# cancellation *it* caused into `TimeoutError`, and a `TimeoutError` that the awaited work
# raises before the deadline passes through it unchanged (the `read_reply` run above).
#
# :::

# %%
def make_steps(steps: int, step_seconds: float, log: list[str]):
    """A `work(stop)` function: `steps` blocking steps, checking `stop` before each."""

    def work(stop: threading.Event) -> str:
        for i in range(steps):
            if stop.is_set():
                log.append(f"stopped before step {i}")
                return "stopped"
            time.sleep(step_seconds)
        log.append("all steps done")
        return "done"

    return work


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def run_with_deadline(work, timeout: float, pool: ThreadPoolExecutor):
    """Run `work(stop)` on `pool`; on timeout or cancellation, set `stop` and wait for the thread first."""
    ### BEGIN SOLUTION
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(pool, work, stop)
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.shield(future)
    finally:
        if not future.done():
            stop.set()
            await asyncio.wait([future], timeout=5)
    ### END SOLUTION


# %% tags=["tests"]
visible_log: list[str] = []
with ThreadPoolExecutor(max_workers=1) as visible_pool:
    visible_result = await asyncio.wait_for(
        run_with_deadline(make_steps(2, 0.01, visible_log), 1.0, visible_pool),
        timeout=2)
    assert visible_result == "done", (
        "work that ends before its deadline returns its own result 'done', "
        f"got {visible_result!r}")
    try:
        await asyncio.wait_for(
            run_with_deadline(make_steps(20, 0.02, visible_log), 0.05, visible_pool),
            timeout=2)
    except TimeoutError:
        visible_log.append("TimeoutError")
assert visible_log[0] == "all steps done" and visible_log[-1] == "TimeoutError", (
    "the fast work must run all its steps and the slow one end in TimeoutError; "
    f"the log was {visible_log!r}")
assert visible_log[1].startswith("stopped before step"), (
    "the slow work must be asked to stop")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
class _Work:
    """`work(stop)` that records its thread's events; after noticing `stop` it takes 0.3 s to wind
    down (a cleanup the caller must wait for without blocking the loop)."""

    def __init__(self, steps: int, step_seconds: float, events: list[str]) -> None:
        self.steps, self.step_seconds = steps, step_seconds
        self.events = events
        self.exited = threading.Event()
        self.stop_seen: threading.Event | None = None

    def __call__(self, stop: threading.Event) -> str:
        self.stop_seen = stop
        try:
            for _i in range(self.steps):
                if stop.is_set():
                    self.events.append("thread noticed stop")
                    time.sleep(0.3)  # winding down
                    return "stopped"
                time.sleep(self.step_seconds)
            return "done"
        finally:
            self.events.append("thread exited")
            self.exited.set()


async def _heartbeat(events: list[str]) -> None:
    while True:
        await asyncio.sleep(0.005)
        events.append("beat")


async def _wait_exited(work: _Work) -> None:
    for _ in range(500):
        if work.exited.is_set():
            return
        await asyncio.sleep(0.01)


def _check_cleanup(events: list[str], work: _Work, outcome: str, what: str) -> None:
    assert work.stop_seen is not None and work.stop_seen.is_set(), (
        f"the stop event was not set when {what}: set it, or the thread runs on after the caller has "
        "given up (chapter 08)")
    assert "thread exited" in events and f"caller saw {outcome}" in events \
        and events.index("thread exited") < events.index(f"caller saw {outcome}"), (
        f"the thread was still running when {outcome} reached the caller: after setting stop, wait "
        "for the thread to finish before letting the exception out (chapter 08)")
    if "thread noticed stop" in events:
        winding = events[events.index("thread noticed stop"):events.index("thread exited")]
        assert "beat" in winding, (
            "the event loop was blocked while waiting for the thread to finish: await the future "
            "(asyncio.wait or shield), never a blocking .result() or join() (chapter 08)")


with ThreadPoolExecutor(max_workers=2, thread_name_prefix="hidden") as _pool:
    # Timeout: the thread must be gone before TimeoutError reaches the caller; the loop stays free.
    _events: list[str] = []
    _slow = _Work(steps=100, step_seconds=0.02, events=_events)
    _beats = asyncio.create_task(_heartbeat(_events))
    try:
        try:
            async with asyncio.timeout(5):
                await run_with_deadline(_slow, 0.08, _pool)
            _outcome = "returned"
        except TimeoutError:
            _outcome = "TimeoutError"
            _events.append("caller saw TimeoutError")
    finally:
        _beats.cancel()
        await _wait_exited(_slow)
    assert _outcome == "TimeoutError", (
        f"run_with_deadline {_outcome} for work that outlasts its deadline: it must raise TimeoutError "
        "(chapter 08)")
    _check_cleanup(_events, _slow, "TimeoutError", "the deadline passed")

    # Cancellation: the same cleanup, and the CancelledError must reach the caller.
    _events = []
    _slow = _Work(steps=100, step_seconds=0.02, events=_events)
    _beats = asyncio.create_task(_heartbeat(_events))
    _task = asyncio.create_task(run_with_deadline(_slow, 5.0, _pool))
    try:
        await asyncio.sleep(0.06)
        _task.cancel()
        try:
            async with asyncio.timeout(5):
                await _task
            _outcome = "returned"
        except asyncio.CancelledError:
            _outcome = "CancelledError"
            _events.append("caller saw CancelledError")
    finally:
        _beats.cancel()
        if not _task.done():
            _task.cancel()
        await _wait_exited(_slow)
    assert _outcome == "CancelledError", (
        f"run_with_deadline {_outcome} when it was cancelled: the cancellation must propagate to the "
        "caller, not be swallowed (chapter 05)")
    _check_cleanup(_events, _slow, "CancelledError", "the task was cancelled (cancelling must set the stop event too)")

    # In time: the result comes back, and the stop event was never needed.
    _fast = _Work(steps=2, step_seconds=0.01, events=[])
    async with asyncio.timeout(3):
        assert await run_with_deadline(_fast, 2.0, _pool) == "done", "work that ends in time returns its result"
    assert not _fast.stop_seen.is_set(), "work that ends in time must not be asked to stop"
# Generated scenarios (issue 37): the same calls through run_with_deadline and the reference, on
# real threads (the chapter's point), the two run beside each other, each on its own event loop and
# pool, and compared on the contract's facts (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "run_with_deadline")
_STEP = 0.01  # seconds of one step of a stand-in work


class _WorkFailed(Exception):
    """What a stand-in work that fails raises."""


@_dc.dataclass(frozen=True)
class _Call:
    steps: int = 2                  # steps of 0.01 s before it returns `value`
    value: str = "a"
    raises_at: int | None = None    # raises `error` at this step
    error: str = "_WorkFailed"      # or "TimeoutError": its own (a socket timeout, say), not the deadline
    wind_down: float = 0            # seconds it takes to stop once it sees the stop event
    timeout: float = 1.0
    cancel_at: float | None = None  # its caller cancels the call then

    def describe(self, k: int) -> str:
        does = (f"raises {self.error} at step {self.raises_at}" if self.raises_at is not None
                else f"returns {self.value!r} after {self.steps} steps of {_STEP:g} s")
        slow = f", takes {_sc.fmt(self.wind_down)} to wind down once it sees stop" if self.wind_down else ""
        cancel = f", cancelled by its caller at {_sc.fmt(self.cancel_at)}" if self.cancel_at is not None else ""
        return f"call {k} (timeout={self.timeout:g}{cancel}): its work {does}{slow}"


@_dc.dataclass(frozen=True)
class _Scenario:
    calls: tuple

    def describe(self) -> str:
        return (f"{len(self.calls)} call(s) of run_with_deadline at once on one pool of {len(self.calls)} "
                "thread(s); " + "; ".join(c.describe(k) for k, c in enumerate(self.calls)))


@_st.composite
def _calls(draw):
    # Work in time ends within 0.06 s of a 1 s timeout; work that overruns would need 1 s against a
    # deadline or a cancel at 0.03-0.06 s: no outcome hangs on which comes first.
    how = draw(_st.sampled_from(["in time", "overruns", "raises", "cancelled"]))
    value, wind = draw(_st.sampled_from("aab")), draw(_st.sampled_from([0, 0.1, 0.05]))
    if how == "in time":
        return _Call(steps=draw(_st.sampled_from([0, 1, 3, 6])), value=value, wind_down=wind)
    if how == "raises":
        return _Call(steps=3, raises_at=draw(_st.integers(0, 2)),
                     error=draw(_st.sampled_from(["_WorkFailed", "TimeoutError"])))
    late = draw(_st.sampled_from([0.03, 0.06]))
    if how == "overruns":
        return _Call(steps=100, value=value, wind_down=wind, timeout=late)
    return _Call(steps=100, value=value, wind_down=wind, cancel_at=late)


class _Work:
    """A stand-in `work(stop)`: notes its stop event, its thread, and when it has returned."""

    def __init__(self, c: _Call) -> None:
        self.c, self.stop, self.thread = c, None, None
        self.exited = threading.Event()

    def __call__(self, stop) -> str:
        self.stop, self.thread = stop, threading.current_thread().name
        try:
            for i in range(self.c.steps):
                if stop.is_set():
                    time.sleep(self.c.wind_down)
                    return "stopped"
                if self.c.raises_at == i:
                    raise {"_WorkFailed": _WorkFailed, "TimeoutError": TimeoutError}[self.c.error](f"step {i} failed")
                time.sleep(_STEP)
            return self.c.value
        finally:
            self.exited.set()


async def _one_side(fn, s: _Scenario) -> dict:
    loop, gap = asyncio.get_running_loop(), [0.0]
    pool = ThreadPoolExecutor(max_workers=len(s.calls), thread_name_prefix="scenario-pool")

    async def beat() -> None:  # another task on the loop: the longest it waited for its turn
        while True:
            before = loop.time()
            await asyncio.sleep(0.005)
            gap[0] = max(gap[0], loop.time() - before - 0.005)

    async def one(c: _Call) -> dict:
        work, t0 = _Work(c), loop.time()
        seen = {"kind": "still running after 3 s", "value": None}

        def note(kind: str, value=None) -> None:  # the moment the call ends, before anything else runs
            seen.update(kind=kind, value=value, at=loop.time() - t0, exited=work.exited.is_set(),
                        stop=work.stop is not None and work.stop.is_set())

        async def call() -> None:
            try:
                note("returned", await fn(work, c.timeout, pool))
            except asyncio.CancelledError:
                note("cancelled")
                raise
            except Exception as exc:  # noqa: BLE001 - what came out is the observation
                note(_sc.kind_of(exc), str(exc))  # its message: the work's own error, or another

        task = asyncio.create_task(call())
        if c.cancel_at is not None:
            loop.call_later(c.cancel_at, task.cancel)
        await asyncio.wait([task], timeout=3)
        task.cancel()
        for _ in range(300):  # the work ends within 1 s even if never stopped
            if work.exited.is_set() or work.thread is None:
                break
            await asyncio.sleep(0.01)
        return {**seen, "thread": work.thread}

    beat_task = asyncio.create_task(beat())
    try:
        calls = await asyncio.gather(*(one(c) for c in s.calls))
    finally:
        beat_task.cancel()
    try:
        pool_ok = await asyncio.wait_for(asyncio.wrap_future(pool.submit(int, 1)), 2) == 1
    except Exception:  # noqa: BLE001 - a pool that no longer takes work
        pool_ok = False
    pool.shutdown(wait=True)
    return {"calls": calls, "gap": gap[0], "pool_ok": pool_ok}


def _run_beside(fn, s: _Scenario) -> tuple:
    """Run `fn` and the reference on the same scenario at the same time, each in its own thread."""
    out: dict = {}

    def side(key: str, f) -> None:
        out[key] = asyncio.run(_one_side(f, s))

    threads = [threading.Thread(target=side, args=(key, f), daemon=True)
               for key, f in (("mine", fn), ("ref", _reference))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    return out.get("mine", {"broken": "run_with_deadline did not end within 20 s"}), out.get("ref")


_beside: dict = {}


def _observe(fn, s: _Scenario) -> dict:
    if fn is _reference and s in _beside:
        return _beside.pop(s)  # measured beside the submission, a moment ago
    mine, ref = _run_beside(fn, s)
    _beside[s] = ref
    return mine


def _compare_call(me: dict, it: dict, c: _Call) -> str | None:
    if me["kind"] != it["kind"]:
        if it["kind"] == "returned":
            return (f"work that ends in time gave {me['kind']} where its result {it['value']!r} should come "
                    "back (a stop event shared by several calls stops work it should not)")
        if it["kind"] == "cancelled":
            return (f"the caller cancelled the call at {_sc.fmt(c.cancel_at)}, but it {me['kind']}: set stop, "
                    "wait for the thread, then let the CancelledError through")
        if c.raises_at is not None:
            return f"the work raised {c.error}, but run_with_deadline {me['kind']}: let its error out unchanged"
        return f"work that outlasts its {_sc.fmt(c.timeout)} deadline gave {me['kind']} instead of TimeoutError"
    if me["thread"] is not None and not me["thread"].startswith("scenario-pool"):
        return f"the work ran in thread {me['thread']!r}, not on `pool`: run it with run_in_executor(pool, ...)"
    if c.raises_at is not None:  # the work's own error, in time
        if me["value"] != it["value"]:
            return (f"an exception raised by `work` comes out unchanged: {me['kind']}({me['value']!r}) where the "
                    f"work raised {c.error}({it['value']!r}); let its own exception out, not a new one")
        return None
    if me["kind"] == "returned":
        if me["value"] != it["value"]:
            return (f"returned {me['value']!r} where the work returned {it['value']!r}: give each call a stop "
                    "event of its own")
        if me["stop"]:
            return "work that ends in time must not be asked to stop (its stop event was set)"
    if me["kind"] in ("raised TimeoutError", "cancelled"):
        if not me["stop"]:
            return f"the stop event was not set when the call {me['kind']}: set it, or the thread runs on"
        if not me["exited"]:
            return (f"the thread was still running when the call {me['kind']}: after setting stop, wait for "
                    "the thread to finish before letting the exception out")
        if me["kind"] == "raised TimeoutError" and me["at"] < c.timeout * 0.9:
            return f"raised TimeoutError after {me['at']:.3f} s, before the {_sc.fmt(c.timeout)} timeout"
        if me["at"] > max(2 * it["at"], it["at"] + 0.1):
            return (f"the call {me['kind']} after {me['at']:.3f} s where {it['at']:.3f} s was enough (the "
                    "reference, beside it): stop waiting once the thread has finished")
    return None


def _compare(mine: dict, ref: dict, s: _Scenario) -> str | None:
    if "broken" in mine:
        return mine["broken"]
    if not mine["pool_ok"]:
        return "the pool no longer takes work after the calls: never shut down a pool you were given"
    if mine["gap"] > max(2 * ref["gap"], ref["gap"] + 0.08):
        return (f"the event loop was blocked for {mine['gap']:.3f} s at a stretch (the reference, beside it: "
                f"{ref['gap']:.3f} s): await the future, never a blocking .result() or join()")
    for k, (me, it, c) in enumerate(zip(mine["calls"], ref["calls"], s.calls, strict=True)):
        problem = _compare_call(me, it, c)
        if problem:
            return f"call {k}: {problem}" if len(s.calls) > 1 else problem
    return None


_sc.differential(run_with_deadline, _reference,
                 _st.builds(_Scenario, _st.lists(_calls(), min_size=1, max_size=3).map(tuple)),
                 _observe, _compare, what="run_with_deadline", examples=2, timeout=40, hint="chapter 08",
                 explicit=(_Scenario((_Call(100, "a", wind_down=0.05, timeout=0.03), _Call(6, "b"))),
                           # work that raises a TimeoutError of its own, in time: too rare a draw for
                           # two generated runs
                           _Scenario((_Call(100, wind_down=0.05, cancel_at=0.03), _Call(3, raises_at=1),
                                      _Call(3, raises_at=0, error="TimeoutError")))))
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - A blocking call inside a coroutine freezes the loop; `await asyncio.to_thread(fn, ...)` runs
#   it in a worker thread while the loop keeps serving other tasks.
# - A thread pool caps the calls in flight at its size. The default pool (`to_thread`,
#   `run_in_executor(None, ...)`) has `min(32, CPUs + 4)` threads, shared by all such calls; pass your own pool to `run_in_executor` to give a kind of work its own cap.
# - `pool.submit` returns a `concurrent.futures.Future` (thread-safe, blocking `.result(timeout)`);
#   `await` needs an `asyncio.Future`: `asyncio.wrap_future` or `run_in_executor` bridge them.
# - A timeout or cancellation stops the *waiting*, not the thread. Ask the work to stop with a
#   `threading.Event`, and wait for the thread before you report the timeout.
#
# **What's next.** Chapter 09 looks at the threads themselves: shared state and `Lock`,
# stopping a thread with an `Event`, and threads at exit.
#
# ## In slime
#
# **The teacher server.** slime can serve a model over HTTP for another model to learn from,
# as a *teacher server*. Its handlers run on one event loop, so a handler that waits on a
# blocking call must send that call off the loop's thread. The first two quotes are from
# this server: a long weight reload, then a 50 ms poll for a result, each sent to the
# loop's default pool. The [source
# inventory](../book/reference/inventory.md) lists every `to_thread` and `run_in_executor` in
# slime.

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("08")

# %% tags=["remove-input"]
show_call_site("08c")

# %% [markdown]
# **`post`: a wait that holds no thread.** The third quote is not in that server:
# `post`, in slime's HTTP helpers, is a coroutine of the rollout's event loop. With
# distributed POST switched on, it hands each request to a Ray actor (chapter 28: an
# object living in another process). The call returns at once with an `ObjectRef`, a
# handle to a result not ready yet; `ray.get(ref)` blocks a thread until it is, while
# `post` awaits the `ObjectRef` itself, which holds no thread. The comment in `post`
# says why the `asyncio.to_thread(ray.get, ...)` it replaced had to go.

# %% tags=["remove-input"]
show_call_site("08b")

# %% [markdown]
# ### A run: what the replaced `to_thread(ray.get, ...)` cost `post`
#
# Does the comment in `post` hold? The scenario: as many slow requests as the default pool has
# threads are waiting, then four quick requests arrive. How long do the quick ones wait?
#
# A model of `post`'s two versions, written for this page, with two pools in it:
#
# - `remote` is the cluster: it has a thread per request, so it is not the bottleneck. A
#   Ray call becomes a `concurrent.futures.Future` that `remote` completes, the slow
#   requests after 0.5 s, the quick ones after 0.02 s.
# - The loop's default pool is `post`'s side, where `to_thread` waits: the bottleneck.
#
# The folded measurement runs `quick_answers_wait` for each version, twice, taking turns, and
# prints the faster time of each: when the four quick answers arrived.

# %%
async def post_via_thread(answer: concurrent.futures.Future):
    return await asyncio.to_thread(answer.result, 5)  # before: to_thread(ray.get, ref)


async def post_awaiting(answer: concurrent.futures.Future):
    return await asyncio.wrap_future(answer)  # slime's post now: await obj_ref


async def quick_answers_wait(post, remote: ThreadPoolExecutor, slow_requests: int):
    slow = [asyncio.create_task(post(remote.submit(time.sleep, 0.5)))
            for _ in range(slow_requests)]
    await asyncio.sleep(0.01)  # the slow requests are waiting first
    sent = time.monotonic()
    await asyncio.gather(*(post(remote.submit(time.sleep, 0.02)) for _ in range(4)))
    took = time.monotonic() - sent
    await asyncio.gather(*slow)
    return took


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the measurement"}
took: dict[str, list[float]] = {"through to_thread": [], "awaiting the future": []}
with borrowed_default_executor() as default_pool:
    size = default_pool._max_workers
    with ThreadPoolExecutor(max_workers=size + 4, thread_name_prefix="remote") as remote:
        async with asyncio.timeout(10):
            for _ in range(2):  # interleaved, best of two
                took["through to_thread"].append(
                    await quick_answers_wait(post_via_thread, remote, size))
                took["awaiting the future"].append(
                    await quick_answers_wait(post_awaiting, remote, size))
best = {version: min(times) for version, times in took.items()}

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
print(f"default pool: {size} threads; {size} slow requests waiting")
for version, seconds in best.items():  # best: each version's faster run of the two
    print(f"  {version}: the four quick answers arrived after {seconds:.2f} s")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: held-pool-threads-delay-ready-answers
ratio = best["through to_thread"] / best["awaiting the future"]
assert ratio > 5, (
    f"quick answers waited for a pool thread held by a slow request: only {ratio:.1f}x slower")
print(f"✓ through to_thread the quick answers came {ratio:.0f}x later than by awaiting")

# %% [markdown]
# :::{dropdown} Why
#
# The quick answers were ready after 0.02 s in both versions. Through `to_thread` each needed
# a pool thread to wait in, and the slow requests held them all, so the quick answers came in
# only when the slow ones freed the threads: just under 0.5 s after they were sent, since
# the slow requests had been sent 0.01 s before them. That is the tail latency of slime's
# comment.
# Had there been one slow request fewer than threads, the quick answers would have come in at
# once through the one free thread (the four were answered after 0.02 s, so that thread
# collects them one after another in no time); `await` needs no thread.
#
# :::
