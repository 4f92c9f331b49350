# %% [markdown]
# # 17 · Thread pool Future results and shutdown
# *线程池 Future 的结果与退出*
#
# **The question.** You hand work to a `ThreadPoolExecutor` and get back futures. When is
# each job really running, what can you still take back, and what does shutting the pool
# down do to the work that is queued or already running?
#
# **You will**
# 1. follow one future through its states: queued, running, finished (or cancelled);
# 2. wait for a result with a bound, and get a worker's exception back from `result()`;
# 3. cancel a future, and find out when cancelling works;
# 4. tell apart `shutdown(wait=False)`, `cancel_futures=True` and leaving a `with` block,
#    and collect results in completion order with `as_completed`.
#
# **Needs** chapter 08 (thread pools next to the event loop) and chapter 09 · about 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The imports are folded below; `figure_style()` only sets how
# the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import sys
import threading
import time
from collections import deque
from concurrent.futures import (
    CancelledError,
    Future,
    ThreadPoolExecutor,
    as_completed,
    wait,
)

from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# The experiments below read a future's state with `state_of(future)`, which reads it through
# the future's public methods `cancelled()`, `done()` and `running()`.

# %%
def state_of(future: Future) -> str:
    """The future's state, read through its public methods."""
    if future.cancelled():
        return "cancelled"
    if future.done():
        return "finished"
    return "running" if future.running() else "queued"


# %% [markdown]
# ## Which of two jobs can you still take back?
#
# `pool.submit(fn, *args)` returns a `Future` at once. The job sits in the pool's queue
# until a worker thread is free; then it is running; then it is finished, holding a result
# or an exception. `future.cancel()` asks the pool to drop the job and returns `True` if the
# future is now cancelled. Below, a pool with **one** worker gets two jobs that wait at a
# shut gate (`wait_at_gate(name, gate)`, defined below); while the gate is shut, the cell
# reads each future's state and calls `cancel()` on both, then opens the gate and asks each
# for its `result()`.

# %%
gate = threading.Event()
first_started = threading.Event()


def wait_at_gate(
    name: str, gate: threading.Event, started: threading.Event | None = None
) -> str:
    if started is not None:
        started.set()
    if not gate.wait(timeout=5):
        raise TimeoutError("the gate was never opened")
    return f"{name} done"


def outcome_of(job) -> str:
    """What result() gives: the value, or the type of what it raised."""
    try:
        return repr(job.result(timeout=2))
    except Exception as exc:  # whatever comes out, its type is shown
        return type(exc).__name__


# %% [markdown]
# **Predict.** Fill in the table the cell prints, one row per job: its state while the gate
# is shut, what `cancel()` returns, and what `result()` gives once the gate is open.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
with ThreadPoolExecutor(max_workers=1, thread_name_prefix="one-worker") as pool:
    first = pool.submit(wait_at_gate, "first", gate, first_started)
    second = pool.submit(wait_at_gate, "second", gate)
    first_started.wait(timeout=2)  # until the worker has picked up the first job
    states = [state_of(first), state_of(second)]
    cancelled_by_call = [first.cancel(), second.cancel()]
    gate.set()
outcomes = [outcome_of(first), outcome_of(second)]
print("job     state   cancel()  result()")
for i, name in enumerate(["first", "second"]):
    print(f"{name:<7} {states[i]:<7} {cancelled_by_call[i]!s:<9} {outcomes[i]}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: only-a-queued-future-can-be-cancelled
assert states == ["running", "queued"], states
assert cancelled_by_call == [False, True], (
    f"cancel() should refuse the running job and take the queued one; got {cancelled_by_call}")
assert outcomes == ["'first done'", CancelledError.__name__], outcomes
print("✓ cancel() refused the running job and cancelled the queued one")

# %% [markdown]
# :::{dropdown} Why
#
# One worker runs one job at a time: the first job holds it, waiting at the shut gate, so the
# second has no worker and stays queued. `cancel()` works only while the job waits in the
# queue; once a worker has picked it up, `cancel()` returns `False` and changes nothing:
# Python has no supported way to interrupt a thread from outside (chapter 09), and the pool
# does not try. So the running job still gave its result once the gate opened, and the
# cancelled one raised `CancelledError` from `result()`.
#
# :::

# %% [markdown]
# ## A job's errors, and a bounded wait for its result
#
# `future.result(timeout)` waits at most `timeout` seconds, then raises `TimeoutError`; as in
# chapter 13 (*A timeout does not cancel*), the job runs on (the first printed line below).
# What is new here is a job that fails. Below, one job raises `ValueError` in its worker
# thread; another waits at a shut gate while we call `result(timeout=0.05)` on it.
#
# **Predict.** Is a traceback printed when that `ValueError` is raised in the worker? And
# what do `exception()` and `result()` give for that job?

# %%
import io
from contextlib import redirect_stderr

slow_gate = threading.Event()  # a new gate, passed to wait_at_gate (defined above)


def convert_shard(shard: int) -> int:
    if shard < 0:
        raise ValueError(f"bad shard {shard}")
    return shard * 10


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
stderr = io.StringIO()  # anything the pool prints on stderr lands here
with (redirect_stderr(stderr),
      ThreadPoolExecutor(max_workers=2, thread_name_prefix="convert") as pool):
    slow = pool.submit(wait_at_gate, "slow", slow_gate)
    failing = pool.submit(convert_shard, -1)
    try:
        slow.result(timeout=0.05)
        timed_out = False
    except TimeoutError:
        timed_out = True
    still_running_after_timeout = slow.running()
    slow_gate.set()
    slow_result = slow.result(timeout=2)

    stored = failing.exception(timeout=2)
    try:
        from_result = failing.result(timeout=2)
    except Exception as exc:  # whatever comes out is shown below
        from_result = exc

print(f"timed out: {timed_out}, still running after: {still_running_after_timeout}, "
      f"then: {slow_result!r}")
print(f"exception(): {stored!r}; result(): {from_result!r}; "
      f"one and the same object: {from_result is stored}")
print(f"stderr: {stderr.getvalue()!r}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-timeout-bounds-the-wait-not-the-job
assert timed_out and still_running_after_timeout and slow_result == "slow done", (
    "result(timeout) should give up waiting while the job runs on and finishes; got "
    f"timed out {timed_out}, running after {still_running_after_timeout}, {slow_result!r}")
assert isinstance(stored, ValueError) and from_result is stored
print("✓ result(timeout=0.05) gave up, the job ran on and finished; the error came back")

# %% [markdown]
# :::{dropdown} Why
#
# A job that raises does not crash its worker, and nothing is printed when it fails: the
# exception is stored in the future (the last printed line shows stderr empty), `exception()`
# returns it, and `result()` raises that same object again in the caller. An error nobody
# asks for is never seen. The first printed line is chapter 13's lesson again: when
# `result(timeout)` raises, nothing is sent to the worker, and the job ran on.
#
# :::

# %% [markdown]
# ## Three ways to end a pool
#
# A pool can be ended three ways: `shutdown(wait=False)`, the same with
# `cancel_futures=True`, or `shutdown(wait=True)`, which is what leaving a
# `with ThreadPoolExecutor() as pool:` block calls. As you would write them:

# %%
ENDINGS = {
    "shutdown(wait=False)": lambda pool: pool.shutdown(wait=False),
    "shutdown(wait=False, cancel_futures=True)":
        lambda pool: pool.shutdown(wait=False, cancel_futures=True),
    "shutdown(wait=True), as a with block": lambda pool: pool.shutdown(wait=True),
}


# %% [markdown]
# `end_while_job_0_runs(ending)` (folded below) tries one on a pool of one worker with three
# jobs: it ends the pool while job 0 runs and jobs 1 and 2 are queued, counts the jobs
# finished when the call returns, then waits (at most 3 s) and reads the three jobs' states.
# Job 0 is held until 0.2 s after the ending, then takes 0.1 s more, so the ending surely
# comes while it runs. A `Timeline`, the course's stopwatch (chapter 01), records when each job runs, for the
# figure.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the job, the driver that ends the pool while job 0 runs, and the plotting code"}
started = threading.Event()  # set when a job starts
release = threading.Event()  # job 0 waits for it: the driver sets it 0.2 s after the ending


def convert_in_steps(shard: int) -> int:
    with tl.span(f"job {shard}"):
        started.set()
        if not release.wait(timeout=5):
            raise TimeoutError("never released")
        for _ in range(5):
            time.sleep(0.02)
    return shard


def end_while_job_0_runs(ending) -> tuple[int, list[str]]:
    """One worker, three jobs; `ending(pool)` is called while job 0 runs and 1, 2 are queued."""
    started.clear()
    release.clear()
    pool = ThreadPoolExecutor(max_workers=1)
    jobs = [pool.submit(convert_in_steps, shard) for shard in range(3)]
    started.wait(timeout=2)
    time.sleep(0.05)  # so that the figure shows job 0 running before the pool is ended
    opener = threading.Timer(0.2, release.set)
    opener.start()
    tl.mark("pool ended")
    ending(pool)
    tl.mark("call returned")
    finished_on_return = sum(state_of(job) == "finished" for job in jobs)
    wait(jobs, timeout=3)
    opener.join(timeout=2)
    pool.shutdown()  # joins the worker (a second call is harmless)
    return finished_on_return, [state_of(job) for job in jobs]


def draw_endings():
    """One panel per ending. A job's bar is light green while it waited in the queue (from the
    submits to its start, or to its cancel), then as run; dashed: the ending is called; dotted:
    the call returns."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(8, 6.6), sharex=True, layout="constrained")
    fig.suptitle("Three ways to end a pool while job 0 runs: when the call returns, what the queue does")
    for ax, (name, row) in zip(axes, timelines.items(), strict=True):
        at = {e.name: e.at for e in row.events}
        for shard in (1, 2):  # the Timeline was created just before the submits
            ran = row.spans_of(f"job {shard}")
            queued_until = row.t0 + (ran[0].start if ran else at["pool ended"])
            row.add(f"job {shard}", row.t0, queued_until, state="waiting")
            if not ran:  # cancelled in the queue: a short grey mark where it was dropped
                row.add(f"job {shard}", queued_until, queued_until + 0.006, state="cancelled")
        row.plot(name, ax=ax, lanes=[f"job {shard}" for shard in range(3)],
                 meanings={"waiting": "queued"})
        ax.axvline(at["pool ended"], color="black", linestyle="--", linewidth=1)
        ax.axvline(at["call returned"], color="black", linestyle=":", linewidth=1.5)
        if ax is not axes[-1]:
            ax.set_xlabel("")
    from matplotlib.lines import Line2D

    fig.legend(handles=[Line2D([], [], color="black", linestyle="--", linewidth=1, label="ending called"),
                        Line2D([], [], color="black", linestyle=":", linewidth=1.5, label="call returned")],
               loc="outside lower center", ncols=2, frameon=False)
    return fig


# %% [markdown]
# ## Predict: what does each ending do to the queue?
#
# Fill in the table, one row per ending: how many jobs have finished when the call returns,
# and in which state do jobs 0, 1 and 2 end?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
rows, timelines = {}, {}
for name, ending in ENDINGS.items():
    tl = timelines[name] = Timeline()
    rows[name] = end_while_job_0_runs(ending)
print(f"{'ending':<42} {'finished on return':<19} states of jobs 0, 1, 2")
for name, (finished_on_return, states) in rows.items():
    print(f"{name:<42} {finished_on_return:<19} {', '.join(states)}")
fig = draw_endings()  # from the fold above

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: shutdown-without-wait-still-runs-queued-jobs
assert rows["shutdown(wait=False)"] == (0, ["finished"] * 3), (
    f"shutdown(wait=False) should return at once and every queued job still run: {rows}")
print("✓ shutdown(wait=False) returned at once; the queued jobs still ran")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: cancel-futures-drops-the-queued-jobs
assert rows["shutdown(wait=False, cancel_futures=True)"] == (0, ["finished", "cancelled", "cancelled"]), (
    f"cancel_futures=True should drop the queued jobs and let the running one finish: {rows}")
assert rows["shutdown(wait=True), as a with block"] == (3, ["finished"] * 3), rows
print("✓ cancel_futures dropped the two queued jobs; shutdown(wait=True) returned after all three")

# %% [markdown]
# :::{dropdown} Why
#
# `shutdown(wait=False)` makes the pool refuse new `submit` calls and returns without
# waiting, and that is all it does: the running job runs to the end, and the queued jobs
# **still start** afterwards, so all three finished. `cancel_futures=True` also cancels what
# is still in the queue: jobs 1 and 2 never ran. Neither can stop job 0, since a running
# thread cannot be stopped from outside. `shutdown(wait=True)` returns only when every
# submitted job has finished and the worker has ended, so leaving a `with` block waits for
# all of it.
#
# The figure draws one panel per row of the table. The dashed line is the call to the ending,
# the dotted line its return (the key under the figure): for both `wait=False` endings they
# coincide, and only `wait=True` returns after job 2. Blue is a job running, that is, held by
# the worker thread: job 0 stays blue while it waits for the `release` event (in the fold). Light green is a job waiting in the
# queue: from the submits until it started, or until it was cancelled (the short grey mark),
# computed from the submit time and the job's own start.
#
# :::

# %% [markdown]
# ## Measure: how long until the fast job's result is in hand?
#
# `as_completed(futures, timeout)` returns an iterator that hands out each future when it is
# done. Below, three jobs sleep 0.18 s ("slow"), 0.12 s ("medium") and 0.06 s ("fast"), each
# returning its seconds, submitted in that order on three workers. `in_hand_at(read)` submits
# them and notes, for each job, when `read` hands its future over, counted from the submit.
# It runs twice: once reading the futures in submission order, each `result()` before the
# next, and once with `as_completed`.

# %%
def convert_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def in_submission_order(futures):
    for future in futures:
        future.result(timeout=3)  # wait for this one before looking at the next
        yield future


def in_finishing_order(futures):
    yield from as_completed(futures, timeout=3)


def in_hand_at(read) -> dict[str, float]:
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="as-completed") as pool:
        start = time.monotonic()
        jobs = [("slow", 0.18), ("medium", 0.12), ("fast", 0.06)]
        futures = {pool.submit(convert_for, seconds): name for name, seconds in jobs}
        return {futures[f]: time.monotonic() - start for f in read(futures)}


# %% [markdown]
# **Predict.** How long after the submit does each way hand you the fast job's result?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
by_submission = in_hand_at(in_submission_order)
by_completion = in_hand_at(in_finishing_order)
readings = {"submission order": by_submission, "as_completed": by_completion}
for label, in_hand in readings.items():
    print(f"{label:>16}:",
          ", ".join(f"{job} at {at:.2f} s" for job, at in in_hand.items()))

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: as-completed-yields-in-finishing-order
assert list(by_completion) == ["fast", "medium", "slow"], (
    f"as_completed should yield each job as it finishes; got {list(by_completion)}")
assert list(by_submission) == ["slow", "medium", "fast"], (
    f"read in submission order, each result waits for the one before it; got {list(by_submission)}")
assert by_submission["fast"] > 1.5 * by_completion["fast"], (
    f"in submission order the fast result waited behind the slow job: {by_submission}, {by_completion}")
print("✓ as_completed handed out the fast result first; in submission order it waited for the slow job")

# %% [markdown]
# :::{dropdown} Why
#
# Reading in submission order, the loop waits in the slow job's `result()` first, so the
# medium and fast results, done long before, are handed over only when the slow job ends,
# all three at about 0.18 s: a fast job waits behind a slow one. `as_completed` hands out
# each future the moment it is done, whatever its place in the submission, so the fast result
# arrives at about 0.06 s and the order follows the finishing times. Keep the futures in a
# list or dict as well, and you still have the submission order for putting the results back
# in input order.
#
# :::
#
# `as_completed` also takes a `timeout`, for the whole iteration: counted from the loop's
# first `next()`.
# Below, a fast job (0.05 s) and a slow one (1 s) run on two workers, and a loop reads
# `as_completed(futures, timeout=0.5)`. **Predict.** What does the loop get, and how does it
# end while the slow job still runs?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
with ThreadPoolExecutor(max_workers=2, thread_name_prefix="as-completed") as pool:
    futures = {pool.submit(convert_for, seconds): name
               for name, seconds in [("fast", 0.05), ("slow", 1.0)]}
    loop_got: list[str] = []
    try:
        for future in as_completed(futures, timeout=0.5):
            loop_got.append(f"{futures[future]}: {future.result()}")
    except TimeoutError as exc:  # raised by the iterator, not by a result()
        loop_got.append(f"TimeoutError({str(exc)!r})")
    slow_running = not [f for f, name in futures.items() if name == "slow"][0].done()
print(loop_got, "| the slow job still running after the timeout:", slow_running)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert loop_got == ["fast: 0.05", "TimeoutError('1 (of 2) futures unfinished')"], loop_got
assert slow_running, "the timeout ended the loop, not the slow job"
print("✓ as_completed handed out the fast job, then raised TimeoutError; the slow job ran on")

# %% [markdown]
# :::{dropdown} Why
#
# The iterator hands out the fast future at once. At 0.5 s its `next()` raises
# `TimeoutError`, naming how many futures are still unfinished, so the exception comes out
# of the `for` statement itself, not out of a `result()`: put the whole loop in the `try`.
# The slow job runs on (the `with` block's exit waited for it), and its future is never
# handed out. A job's own error, in contrast, does not stop the iterator: its future is
# handed out like any other, and the error comes out of its `result()`.
#
# :::
#
# ## How eagerly does `pool.map` submit?
#
# `pool.map(fn, items)` returns an iterator of results. Below, `items` is a generator of
# 1000 numbers that counts how many have been taken from it, and `square(n)` returns
# `n * n`. **Predict.** How many items has `pool.map` taken by the time it returns, before
# you read a single result?

# %%
def square(n: int) -> int:
    return n * n


taken: list[int] = []


def counted(n: int):
    for item in range(n):
        taken.append(item)
        yield item


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
import tracemalloc

tracemalloc.start()  # from here on, count the memory Python allocates
with ThreadPoolExecutor(max_workers=2, thread_name_prefix="map") as pool:
    squares = pool.map(square, counted(1000))
    taken_before_reading = len(taken)
    held, _ = tracemalloc.get_traced_memory()  # allocated since start(), not yet freed
    first_square = next(squares)
tracemalloc.stop()
print(f"items taken before the first result was read: {taken_before_reading} of 1000")
print(f"memory held by then: {held / 1024:.0f} KiB, {held / 1000:.0f} bytes an item")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: map-submits-the-whole-input-at-once
assert taken_before_reading == 1000 and first_square == 0
print("✓ pool.map submitted all 1000 items before the first result was read")

# %% [markdown]
# :::{dropdown} Why
#
# `pool.map(fn, items)` submits **every** item before it returns, so the printed count is the
# whole input, 1000 of 1000. The second line is what that costs before you read a single
# result: everything allocated since `tracemalloc.start()` and still held, divided by the
# 1000 items. That is a future for every item, kept until you read its result, a queued work
# item for each item no worker has taken yet, and the 1000 numbers kept in `taken`. It grows
# with the input: a long input fills memory.
#
# :::
#
# You can bound it yourself, with a `collections.deque` of
# futures, as the exercise below and slime's weight encoder do.
#
# :::{dropdown} Going further
#
# **Python 3.14: `map(..., buffersize=n)`.** Python 3.14 adds
# `pool.map(fn, items, buffersize=n)`, which keeps at most `n` jobs submitted ahead of the
# results you have consumed. The folded cell below uses it when the kernel runs 3.14, and
# says what to do instead when it does not.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment"}
if sys.version_info >= (3, 14):
    with ThreadPoolExecutor(max_workers=2) as pool:
        squares = list(pool.map(square, range(8), buffersize=2))
    print("3.14 map with buffersize=2:", squares)
    assert squares == [n * n for n in range(8)]
else:
    print("Before 3.14, Executor.map has no buffersize: it submits every item at once.")
    print("Keep a deque of at most n futures; collect the oldest, then submit more.")

# %% [markdown]
# ## Exercise 17.1 · Map with a bounded number of jobs in flight
#
# Implement `map_bounded(pool, fn, items, max_in_flight, timeout)`:
#
# 1. submit `fn(item)` for the items in order, keeping `max_in_flight` jobs submitted and
#    not yet collected, never more: when the limit is reached, collect the **oldest**
#    future's result, then submit the next item at once;
# 2. return the results in input order;
# 3. wait for each result at most `timeout` seconds (a `TimeoutError` propagates);
# 4. if a job raises or a wait times out, cancel the futures still outstanding (a timed-out
#    one too) and let the exception out, submitting nothing more. Pop a future only after
#    its `result()` returns: popped first, a timed-out future would be out of the cleanup's
#    reach.
#
# The pool may have more workers than `max_in_flight`: the bound must come from your code.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (no items, one, several, the same item more than once, in any
# order; `max_in_flight` below and above the number of items and of the pool's workers; jobs
# that take any time, that never end, or that raise; a pool of its own, or one whose workers
# are busy with other work for a while or for good):
#
# - **results**: one job per item, a repeated item once per occurrence; the results in input
#   order;
# - **in flight**: never more than `max_in_flight` submitted and not yet collected, and as
#   many as that while items are waiting: the next item is submitted the moment the oldest
#   result is collected, not later;
# - **timeout**: each result waited for at most `timeout` seconds, counted from when you start
#   waiting for it; then `TimeoutError` comes out;
# - **errors**: a job's exception is re-raised as soon as its result is collected; nothing is
#   submitted after it;
# - **what is left**: when `map_bounded` ends with an error or a timeout, no submitted job is
#   still waiting for a worker (cancel the outstanding futures; a job already running may
#   finish).
#
# :::
#
# :::{dropdown} Hint
#
# Keep the futures in a `collections.deque`: `append` each new one, and `popleft()` the
# oldest once its `result(timeout=timeout)` is collected. Put the loops in `try` and, in the
# `finally`, call `cancel()` on every future still in the deque: as the first experiment
# showed, that drops the queued ones and leaves a running one alone.
#
# :::
#
# The visible test below shows one run.

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
def map_bounded(pool: ThreadPoolExecutor, fn, items, max_in_flight: int, timeout: float) -> list:
    """Like pool.map, with at most `max_in_flight` jobs submitted and not yet collected."""
    ### BEGIN SOLUTION
    results = []
    in_flight: deque[Future] = deque()
    try:
        for item in items:
            if len(in_flight) >= max_in_flight:
                results.append(in_flight[0].result(timeout=timeout))
                in_flight.popleft()  # only once collected: a wait that times out leaves it to cancel
            in_flight.append(pool.submit(fn, item))
        while in_flight:
            results.append(in_flight[0].result(timeout=timeout))
            in_flight.popleft()
    finally:
        for future in in_flight:
            future.cancel()
    return results
    ### END SOLUTION


# %% tags=["tests"]
with ThreadPoolExecutor(max_workers=4) as test_pool:
    test_squares = map_bounded(test_pool, square, range(10), max_in_flight=3, timeout=2)
    assert test_squares == [n * n for n in range(10)], (
        f"the squares of 0..9 in input order expected, got {test_squares!r}")
    test_empty = map_bounded(test_pool, square, [], max_in_flight=3, timeout=2)
    assert test_empty == [], f"no items: an empty list expected, got {test_empty!r}"

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets.measure import ReferenceWait as _ReferenceWait

_lock = threading.Lock()
_now = {"in_flight": 0, "peak": 0}
_release = threading.Event()
_hang_ended = threading.Event()
_three_at_once = threading.Event()  # the bound reached once: a job holds on until then (at most 1 s),
def _tracked(item) -> int:         # so a loaded machine's slow thread start cannot hide the overlap
    with _lock:
        _now["in_flight"] += 1
        _now["peak"] = max(_now["peak"], _now["in_flight"])
        if _now["in_flight"] >= 3:
            _three_at_once.set()
    try:
        if item == "hang":
            _release.wait(timeout=3)
            _hang_ended.set()
            return -1
        _three_at_once.wait(timeout=1.0)
        time.sleep(0.1)
        return item * 2
    finally:
        with _lock:
            _now["in_flight"] -= 1
_ran: list = []
def _one_at_a_time(item: int) -> int:
    _ran.append(item)
    if item == 7:
        raise ValueError("item 7 is bad")
    time.sleep(0.02 if item < 7 else 0.5)
    return item * 2
_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="hidden-17")
_solo = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hidden-17-solo")
try:
    _got = map_bounded(_pool, _tracked, list(range(7)), max_in_flight=3, timeout=2)
    assert _got == [i * 2 for i in range(7)], (
        f"results must come back in input order: got {_got}; collect the oldest future first "
        "(chapter 17)")
    assert _now["peak"] <= 3, (
        f"{_now['peak']} jobs ran at once with max_in_flight=3: submit the next item only after "
        "collecting the oldest one (chapter 17)")
    assert _now["peak"] == 3, (
        "the jobs ran one by one: they should run concurrently up to the bound, so keep up to "
        "max_in_flight submitted before collecting (chapter 17)")
    # One worker, four jobs in flight: when item 7 fails, the jobs submitted after it are still
    # queued, so cancelling them keeps them from running.
    _raised = None
    try:
        map_bounded(_solo, _one_at_a_time, list(range(20)), max_in_flight=4, timeout=5)
    except ValueError as _exc:
        _raised = _exc
    _solo.shutdown(wait=True)
    assert _raised is not None and "item 7" in str(_raised), "the job's own exception must propagate"
    _after = [i for i in _ran if i > 7]
    assert len(_after) <= 1, (
        f"{len(_after)} jobs ran after the failing one: on a failure, cancel the futures still "
        "outstanding and submit nothing more (chapter 17)")
    _timed_out = False
    _limit = _ReferenceWait(1.5)  # a plain wait of 1.5 s, started beside the call
    _t0 = time.monotonic()
    try:
        map_bounded(_pool, _tracked, ["hang", 1, 2], max_in_flight=2, timeout=0.2)
    except TimeoutError:
        _timed_out = True
    _waited = time.monotonic() - _t0
    _ended_first = _hang_ended.is_set()
    assert _timed_out and not _ended_first, (
        "a result that does not come within `timeout` must raise TimeoutError, while the job is "
        "still running: pass the timeout to result() (chapter 17)")
    assert _waited < _limit.seconds, (
        f"a result that does not come within `timeout` must raise TimeoutError after `timeout`: "
        f"{_waited:.2f} s for a timeout of 0.2 s; pass the timeout itself to result() (chapter 17)")
    # The same with every item submitted up front: the last results are collected after the
    # loop that submits, and each of those waits at most `timeout` too.
    _timed_out = False
    _limit = _ReferenceWait(1.5)
    _t0 = time.monotonic()
    try:
        map_bounded(_pool, _tracked, [1, "hang"], max_in_flight=3, timeout=0.2)
    except TimeoutError:
        _timed_out = True
    _waited = time.monotonic() - _t0
    assert _timed_out and not _hang_ended.is_set() and _waited < _limit.seconds, (
        f"a result that does not come within `timeout` must raise TimeoutError, also among the "
        f"last results collected once everything is submitted (here after {_waited:.2f} s for a "
        "timeout of 0.2 s): pass the timeout to every result() (chapter 17)")
finally:
    _release.set()
    _pool.shutdown(wait=True, cancel_futures=True)
    _solo.shutdown(wait=True, cancel_futures=True)

# Generated scenarios (issue 37): the same items through map_bounded and the reference, with a
# stand-in pool on virtual time (no thread at all: a future's result() moves the clock to the next
# job's end), compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc
import math as _math
from concurrent.futures import Future as _Future

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc


class _Stuck(BaseException):
    """result() without a timeout on a job that never ends."""


class _VirtualFuture(_Future):
    def __init__(self, pool, n: int) -> None:
        super().__init__()
        self.pool, self.n = pool, n

    def result(self, timeout=None):
        self.pool.drive(self, timeout)
        self.pool.collected.add(self.n)
        return super().result(timeout=0)

    def exception(self, timeout=None):
        self.pool.drive(self, timeout)
        self.pool.collected.add(self.n)
        return super().exception(timeout=0)


class _VirtualPool:
    """`workers` workers; the n-th job submitted behaves as scenario.job(n), on a virtual clock."""

    def __init__(self, s) -> None:
        self.s, self.now = s, 0.0
        self.submits: list = []
        self.queued: list = []
        self.running: list = []   # (end, n, future, fn, args); other work: n < 0, no future
        self.running += [(s.busy_until, -1 - i, None, None, (), {}) for i in range(s.busy)]
        self.collected: set = set()
        self.peak = 0

    def submit(self, fn, *args, **kwargs):
        n = len(self.submits)
        self.submits.append((self.now, args[0] if args else None))
        future = _VirtualFuture(self, n)
        self.queued.append((n, future, fn, args, kwargs))
        self._start()
        self.peak = max(self.peak, len(self.submits) - len(self.collected | self._cancelled()))
        return future

    def _cancelled(self) -> set:
        return {n for n, f, *_ in self.queued if f.cancelled()}

    def _start(self) -> None:
        while self.queued and len(self.running) < self.s.workers:
            n, future, fn, args, kwargs = self.queued.pop(0)
            if future.set_running_or_notify_cancel():
                self.running.append((self.now + self.s.job(n).seconds, n, future, fn, args, kwargs))

    def drive(self, future, timeout) -> None:
        deadline = self.now + (_math.inf if timeout is None else timeout)
        while not future.done():
            if not self.running or min(r[0] for r in self.running) > deadline:
                if deadline == _math.inf:
                    raise _Stuck()
                self.now = deadline
                raise TimeoutError()
            end, n, f, fn, args, kwargs = min(self.running, key=lambda r: r[:2])
            self.running.remove((end, n, f, fn, args, kwargs))
            self.now = end
            if f is not None and self.s.job(n).raises:  # (no future: other work ended)
                f.set_exception(ValueError(f"job {n} failed"))
            elif f is not None:
                f.set_result(fn(*args, **kwargs))
            self._start()


_reference = _sc.reference(globals(), "map_bounded")


@_dc.dataclass(frozen=True)
class _Scenario:
    items: tuple
    max_in_flight: int
    workers: int
    timeout: float
    jobs: tuple      # of _sc.Job: the n-th job submitted behaves as jobs[n] (else 1 s)
    busy: int = 0    # workers running other work when map_bounded starts (a shared pool) ...
    busy_until: float = 0.0  # ... until this time

    def job(self, n: int) -> _sc.Job:
        return self.jobs[n] if n < len(self.jobs) else _sc.Job(1)

    def describe(self) -> str:
        jobs = "; ".join(j.describe(f"job {n}").replace("after inf s", "never") for n, j in enumerate(self.jobs))
        shared = (f"; {self.busy} of the pool's workers run other work until "
                  f"{'never' if self.busy_until == _math.inf else f'{self.busy_until:g} s'}"
                  if self.busy else "")
        return (f"map_bounded(a pool of {self.workers} worker(s), fn, {list(self.items)!r}, max_in_flight="
                f"{self.max_in_flight}, timeout={self.timeout:g}); the jobs, in the order they are submitted: "
                f"{jobs + '; later ones' if jobs else 'each'} take 1 s; fn(x) returns ('done', x), a job that "
                f"fails raises ValueError{shared}")


@_st.composite
def _scenarios(draw):
    job = _st.builds(_sc.Job, seconds=_st.sampled_from([1, 2, 0.5, 3, _math.inf]), value=_st.none(),
                     raises=_st.sampled_from([False, False, False, True]))
    items = draw(_st.lists(_st.sampled_from([3, 1, 2, 3, 0]), max_size=7))
    workers = draw(_st.integers(1, 5))
    return _Scenario(items=tuple(items), max_in_flight=draw(_st.integers(1, 4)),
                     workers=workers, timeout=draw(_st.sampled_from([2.5, 10, 1.5])),
                     jobs=tuple(draw(_st.lists(job, max_size=len(items)))),
                     busy=draw(_st.sampled_from([0, 0, workers])),
                     busy_until=draw(_st.sampled_from([0.5, 4, _math.inf])))


def _observe(fn, s: _Scenario) -> dict:
    pool = _VirtualPool(s)
    try:
        seen = {"kind": "returned", "value": fn(pool, lambda x: ("done", x), list(s.items), s.max_in_flight,
                                                    s.timeout)}
    except _Stuck:
        seen = {"kind": "waited for ever", "value": None}
    except Exception as exc:  # noqa: BLE001 - what came out is the observation
        seen = {"kind": f"raised {type(exc).__name__}", "value": None}
    queued = sum(not f.cancelled() for _, f, *_ in pool.queued)
    return {**seen, "at": pool.now, "submits": pool.submits, "peak": pool.peak, "queued": queued}


def _compare(me: dict, it: dict, s: _Scenario) -> str | None:
    if me["kind"] != it["kind"] or me["value"] != it["value"]:
        got = me["value"] if me["kind"] == "returned" else me["kind"]
        want = it["value"] if it["kind"] == "returned" else it["kind"]
        return (f"map_bounded gave {got!r}, expected {want!r}: every result in input order, a job's "
                "exception re-raised, TimeoutError when a result takes longer than `timeout`")
    if me["peak"] > s.max_in_flight:
        return (f"{me['peak']} jobs submitted and not yet collected with max_in_flight={s.max_in_flight}: "
                "collect the oldest before submitting the next")
    if me["submits"] != it["submits"]:
        return (f"jobs (time, item) submitted {me['submits']!r}, expected {it['submits']!r}: keep "
                "max_in_flight submitted, submit the next one as soon as the oldest is collected, and "
                "nothing after a failure")
    if me["at"] != it["at"]:
        return (f"map_bounded ended at {_sc.fmt(me['at'])}, expected {_sc.fmt(it['at'])}: wait for each "
                "result at most `timeout`, and stop at the first error")
    if me["queued"]:
        return (f"{me['queued']} submitted job(s) still waiting to run when map_bounded ended "
                f"({me['kind']}): cancel the futures still outstanding")
    return None


# Always tried first: one worker, a window of 2, three items; the next item goes in when the
# oldest result is collected (at 1 s), not when the whole window is (at 2 s).
_sliding = _Scenario(items=(3, 3, 3), max_in_flight=2, workers=1, timeout=10, jobs=())
# And a pool shared with other work: the oldest job is still queued when its wait times out.
_shared = _Scenario(items=(3, 3), max_in_flight=2, workers=1, timeout=1.5, jobs=(), busy=1,
                    busy_until=_math.inf)
_sc.differential(map_bounded, _reference, _scenarios(), _observe, _compare, what="map_bounded",
                 examples=40, hint="chapter 17", explicit=(_sliding, _shared))
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - A future is queued, then running, then finished or cancelled; `running()`, `done()` and
#   `cancelled()` tell which.
# - `result(timeout)` bounds your wait, not the job; `result()` re-raises a worker's exception,
#   and `exception()` returns it without raising.
# - `cancel()` works only on queued jobs: a running job stops only if it checks a stop signal
#   itself (chapters 08 and 09).
# - `shutdown(wait=False)` neither stops running jobs nor drops queued ones;
#   `cancel_futures=True` drops the queued ones; leaving a `with` block waits for all of it.
# - `as_completed` yields futures as they finish; keep the futures in a list or dict to get
#   input order back.
#
# **What's next.** Chapter 18 moves from threads to processes. For a process, finishing the
# work, exiting and being reaped are three different moments.
#
# ## In slime
#
# slime's weight tools use both ways of collecting results. The checkpoint converter in
# `tools/` (`save_tensors`, the first quote) submits one job per parameter inside a `with`
# block and handles them in completion order; a parameter whose job fails is silently left
# out of the checkpoint (the commentary under the quote). When slime syncs changed weights to disk, its delta encoder (`_encode_delta`, the
# second quote) runs a diff-and-compress job per tensor on a thread pool and bounds the jobs
# in flight as Exercise 17.1 does. More pools are listed in the
# [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("17b")

# %% [markdown]
# The encoder (quoted last, below) ends in a `finally` that calls a plain `shutdown()`. The
# cell below runs the same shape on a model first: two workers, at most `2 * NUM_WORKERS` jobs in flight, and
# job 0 raises at once while the others take 0.2 s each. It marks when each job finishes
# and when the error reaches the caller. **Predict.** Does the error reach the caller before
# jobs 1 to 3 finish, or after?

# %%
tl = Timeline()
NUM_WORKERS = 2


def diff_and_compress(shard: int) -> int:
    if shard == 0:
        raise ValueError("tensor 0 cannot be encoded")
    time.sleep(0.2)
    tl.mark(f"job {shard} finished")
    return shard


def encode_like_slime(shards: int) -> None:
    pool = ThreadPoolExecutor(max_workers=NUM_WORKERS, thread_name_prefix="encoder")
    inflight: deque[Future] = deque()
    try:
        for shard in range(shards):
            inflight.append(pool.submit(diff_and_compress, shard))
            if len(inflight) >= 2 * NUM_WORKERS:
                inflight.popleft().result()  # slime's order: pop, then wait
        while inflight:
            inflight.popleft().result()
    finally:
        pool.shutdown()


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
try:
    encode_like_slime(8)
except ValueError:
    tl.mark("error reached the caller")
print(tl.names())

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-plain-shutdown-holds-the-error-back
names = tl.names()
assert sorted(names[:-1]) == ["job 1 finished", "job 2 finished", "job 3 finished"], names
assert names[-1] == "error reached the caller", names
print("✓ the error reached the caller only after every job in flight had finished")

# %% [markdown]
# :::{dropdown} Why
#
# A plain `shutdown()` is `shutdown(wait=True)`: before the `finally` lets the exception out,
# it waits for the jobs already submitted, job 3 too, which was still queued when job 0's
# error was collected. In slime that is up to `2 * NUM_WORKERS - 1` more tensors diffed and
# compressed (the failed one is not among them) for a sync that has already failed;
# `shutdown(cancel_futures=True)` in the `finally` would drop the queued ones, as the
# shutdown section showed.
#
# :::
#
# The model keeps slime's order, marked in its comment: pop the oldest future, then wait for
# it. Without a timeout that costs nothing, since `result()` returns once the job is done;
# with one, popping before `result(timeout)` loses a timed-out future to the cleanup, which
# item 4 of Exercise 17.1 rules out.


# %% tags=["remove-input"]
show_call_site("17")
