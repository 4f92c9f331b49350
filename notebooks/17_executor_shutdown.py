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
# Every section below prints a future's state with `state_of(future)`, which reads it through
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
# ## A future's life
#
# `pool.submit(fn, *args)` returns a `Future` at once. The job sits in the pool's queue
# until a worker thread is free; then it is running; then it is finished, holding a result
# or an exception. A pool with **one** worker and a job that waits for a gate makes every
# state visible in turn. The job is `wait_at_gate(name)`, defined below: it waits until the
# gate is opened, then returns. The cell after the question submits two such jobs, reads both
# states while the gate is shut, then opens the gate and reads them again.

# %%
gate = threading.Event()
first_started = threading.Event()


def wait_at_gate(name: str) -> str:
    first_started.set()
    if not gate.wait(timeout=5):
        raise TimeoutError("the gate was never opened")
    return f"{name} done"


# %% [markdown]
# **Predict.** While the gate is shut, which state does each of the two futures report?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
seen = {"first": [], "second": []}
with ThreadPoolExecutor(max_workers=1, thread_name_prefix="one-worker") as pool:
    first = pool.submit(wait_at_gate, "first")
    second = pool.submit(wait_at_gate, "second")
    first_started.wait(timeout=2)  # until the worker has picked up the first job
    seen["first"].append(state_of(first))
    seen["second"].append(state_of(second))
    gate.set()
    results = [first.result(timeout=2), second.result(timeout=2)]
    seen["first"].append(state_of(first))
    seen["second"].append(state_of(second))

print(seen, results)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert seen == {"first": ["running", "finished"], "second": ["queued", "finished"]}, seen
assert results == ["first done", "second done"], results
print("✓ the first job ran while the second was queued; both finished")

# %% [markdown]
# :::{dropdown} Why
#
# One worker runs one job at a time: the first job holds it, waiting at the shut gate, so the
# second has no worker and stays queued. Once the gate opens, the first returns and the worker
# takes the second.
#
# :::

# %% [markdown]
# ## A bounded wait for a result, and the job's errors
#
# `future.result(timeout)` waits at most `timeout` seconds; if the job is not done by then,
# it raises `TimeoutError`. Below, a job waits at a gate that stays shut, and we call
# `result(timeout=0.05)` on it. A second job raises `ValueError`.
#
# **Predict.** When `result(timeout=0.05)` gives up, is the job still running? And what do
# `exception()` and `result()` give for the job that raised?

# %%
gate = threading.Event()
first_started = threading.Event()


def convert_shard(shard: int) -> int:
    if shard < 0:
        raise ValueError(f"bad shard {shard}")
    return shard * 10


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
with ThreadPoolExecutor(max_workers=2, thread_name_prefix="convert") as pool:
    slow = pool.submit(wait_at_gate, "slow")
    failing = pool.submit(convert_shard, -1)
    try:
        slow.result(timeout=0.05)
        timed_out = False
    except TimeoutError:
        timed_out = True
    still_running_after_timeout = slow.running()
    gate.set()
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
# The timeout bounds **your wait, not the work**: when `result(timeout)` raises, nothing is
# sent to the worker. Look at the first printed line: the job was still running after the
# timeout, and finished once the gate opened. A job that raises does not crash the worker either: the
# exception is stored in the future, `exception()` returns it, and `result()` raises that
# same object again in the caller.
#
# :::
#
# ## Cancelling a future
#
# `future.cancel()` asks the pool to drop a job and returns `True` if the future is now
# cancelled. Below, one
# worker has picked up the first job, and the second waits in the queue behind it.
#
# **Predict.** We call `cancel()` on both. Which of the two calls returns `True`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
gate = threading.Event()
first_started = threading.Event()
with ThreadPoolExecutor(max_workers=1, thread_name_prefix="one-worker") as pool:
    running_job = pool.submit(wait_at_gate, "running")
    queued_job = pool.submit(wait_at_gate, "queued")
    first_started.wait(timeout=2)  # until the worker has picked up the first job
    cancel_running, cancel_queued = running_job.cancel(), queued_job.cancel()
    gate.set()


def outcome_of(job) -> str:
    """What result() gives: the value, or the type of what it raised."""
    try:
        return repr(job.result(timeout=2))
    except Exception as exc:  # whatever comes out, its type is shown
        return type(exc).__name__


running_outcome, queued_outcome = outcome_of(running_job), outcome_of(queued_job)
print(f"cancel() on the running job: {cancel_running}, on the queued: {cancel_queued}")
print(f"result() of the running job: {running_outcome}, "
      f"of the queued job: {queued_outcome}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: only-a-queued-future-can-be-cancelled
assert (cancel_running, cancel_queued) == (False, True), (
    "cancel() should refuse the running job and take the queued one; "
    f"got {cancel_running} and {cancel_queued}")
assert running_outcome == "'running done'" and queued_outcome == CancelledError.__name__
print("✓ cancel() refused the running job and cancelled the queued one")

# %% [markdown]
# :::{dropdown} Why
#
# `cancel()` works only while the job waits in the queue; once a worker has picked it up,
# `cancel()` returns `False` and changes nothing: Python has no supported way to interrupt a
# thread from outside (chapter 09), and the pool does not try. So in the first printed line
# only the queued job's `cancel()` returned `True`, and the running job still gave its
# result. A cancelled future raises `CancelledError` from `result()`.
#
# :::

# %% [markdown]
# ## Predict: what happens to queued jobs after `shutdown(wait=False)`?
#
# `pool.shutdown(wait=False)` returns at once. One worker, three conversion jobs of 0.1 s
# each; we call `shutdown(wait=False)` while the first is running, then `wait(jobs, timeout=3)`
# (from `concurrent.futures`: it returns once every job is done, or after `timeout` seconds).
# **Predict.** How many of the three jobs finish?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()  # the course's stopwatch (chapter 01): tl.mark notes a moment
started = threading.Event()
# `release` keeps job 0 running until the next cell has called shutdown.
release = threading.Event()


def convert_in_steps(shard: int) -> int:
    tl.mark(f"job {shard} started")
    started.set()
    if not release.wait(timeout=5):
        raise TimeoutError("never released")
    for _ in range(5):
        time.sleep(0.02)
    tl.mark(f"job {shard} finished")
    return shard


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="no-wait")
jobs = [pool.submit(convert_in_steps, shard) for shard in range(3)]
started.wait(timeout=2)  # job 0 is running
pool.shutdown(wait=False)
tl.mark("shutdown(wait=False) returned")
release.set()
wait(jobs, timeout=3)
print([state_of(job) for job in jobs])
print(tl.names())

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: shutdown-without-wait-still-runs-queued-jobs
# tl.order(a, b, ...) holds when the moments were marked in that order.
pool.shutdown(wait=True)  # joins the worker thread; safe to call a second time
states = [state_of(job) for job in jobs]
assert states == ["finished"] * 3, f"every job, queued ones too, should run; got {states}"
assert [job.result() for job in jobs] == [0, 1, 2]
assert tl.order("job 0 started", "shutdown(wait=False) returned", "job 0 finished",
                "job 2 finished")
print("✓ after shutdown(wait=False) returned, job 0 ran on and the two queued jobs still ran")

# %% [markdown]
# :::{dropdown} Why
#
# Calling `shutdown(wait=False)` makes the pool refuse new `submit` calls and returns without
# waiting, and that is all it does. Running jobs run to the end, and queued jobs **still start** afterwards:
# in the printed names, jobs 1 and 2 start after "shutdown(wait=False) returned", and all
# three end finished.
#
# :::
#
# ## Measure: six jobs on two workers, then `shutdown(cancel_futures=True)`
#
# Two workers, six jobs submitted in order (job 0 takes 0.05 s, job 1 0.15 s, the rest 0.1 s).
# Each job is `timed_job(shard, seconds)`, defined in the folded cell: it sleeps `seconds` and
# draws its own lane. 0.07 s after the submits, the cell calls
# `shutdown(wait=False, cancel_futures=True)`. The chart is a `Timeline` whose bars are
# coloured by state, the same colours in every chapter.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the instruments"}
# A job that runs draws its own lane: waiting from its submit mark until a worker picks it
# up, then running.
tl = Timeline()


def clock_at(name: str) -> float:
    """A mark's raw clock reading (Timeline.add takes raw readings)."""
    return tl.t0 + next(e.at for e in tl.events if e.name == name)


def timed_job(shard: int, seconds: float) -> None:
    tl.add(f"job {shard}", clock_at(f"job {shard} submitted"), time.monotonic(),
           state="waiting")
    with tl.span(f"job {shard}"):
        time.sleep(seconds)


def draw_jobs() -> None:
    """Plot the six lanes; a cancelled job, which never ran, is drawn from the marks."""
    for shard, job in enumerate(measured):
        if job.cancelled():  # queued until the request, then a grey mark, wide enough to see
            tl.add(f"job {shard}", clock_at(f"job {shard} submitted"),
                   clock_at("shutdown requested"), state="waiting")
            tl.add(f"job {shard}", clock_at("shutdown requested"),
                   clock_at("shutdown requested") + 0.004, state="cancelled")
    fig = tl.plot("Six jobs on two workers, shutdown(cancel_futures=True) after 0.07 s",
                  lanes=[f"job {shard}" for shard in range(6)])
    # the moment shutdown was requested: a dashed vertical line across every lane
    shutdown_at = clock_at("shutdown requested") - tl.t0
    fig.axes[0].axvline(shutdown_at, color="black", linestyle="--", linewidth=1)


# %% [markdown]
# **Predict.** Which of the six jobs run to the end, and which are dropped? (Work out which
# job each worker holds 0.07 s after the submits.)

# %%
pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="measured")
measured = []
for shard, seconds in enumerate([0.05, 0.15, 0.1, 0.1, 0.1, 0.1]):
    tl.mark(f"job {shard} submitted")
    measured.append(pool.submit(timed_job, shard, seconds))
time.sleep(0.07)
tl.mark("shutdown requested")
pool.shutdown(wait=False, cancel_futures=True)
pool.shutdown(wait=True)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the answer"}
ran = {shard for shard in range(6)
       if any(s.state == "running" for s in tl.spans_of(f"job {shard}"))}
cancelled = {shard for shard, job in enumerate(measured) if job.cancelled()}
print(f"ran to the end: {sorted(ran)}, cancelled in the queue: {sorted(cancelled)}")
draw_jobs()

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: cancel-futures-drops-the-queued-jobs
requested = clock_at("shutdown requested") - tl.t0
started_before = {shard for shard in ran
                  if next(s for s in tl.spans_of(f"job {shard}") if s.state == "running").start
                  < requested}
assert ran | cancelled == set(range(6)) and not ran & cancelled, (ran, cancelled)
assert ran == started_before and cancelled, (
    "every job started before the request should finish, every job still queued be dropped: "
    f"ran {ran}, of which started before the request {started_before}; cancelled {cancelled}")
assert tl.max_overlap("running") <= 2
print("✓ every job started before the request finished; the jobs still queued were cancelled")

# %% [markdown]
# :::{dropdown} Why
#
# A running thread cannot be stopped from outside, and `cancel_futures` drops only what is
# still in the queue. When shutdown was requested (the dashed line), a worker had already
# picked job 2 up, the one job 0 freed at 0.05 s: its lane is blue to the end, like jobs 0
# and 1, while the jobs still queued wait (light green) up to the line and end there with a
# grey mark, cancelled without ever running. The rule holds whatever the timing: a job that had started finished, and a job
# that had not started was cancelled (a cancelled job never runs, so its lane is drawn from
# the marks).
#
# :::
#
# ## Completion order: `as_completed`
#
# Waiting on futures in the order you submitted them makes a fast job wait behind a slow
# one. `as_completed(futures, timeout)` is an iterator over the futures that hands each one
# out when it is done. Below, three jobs sleep 0.18 s ("slow"), 0.12 s ("medium") and
# 0.06 s ("fast"), submitted in that order on three workers; each returns its seconds. The
# cell prints the order in which `as_completed` hands them out, and the results read from the
# futures in submission order.

# %%
def convert_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


with ThreadPoolExecutor(max_workers=3, thread_name_prefix="as-completed") as pool:
    futures = {pool.submit(convert_for, seconds): name
               for name, seconds in [("slow", 0.18), ("medium", 0.12), ("fast", 0.06)]}
    completion_order = [futures[f] for f in as_completed(futures, timeout=3)]
    input_order = [f.result() for f in futures]

print("as_completed:", completion_order,
      "| results read in submission order (seconds):", input_order)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: as-completed-yields-in-finishing-order
assert completion_order == ["fast", "medium", "slow"], (
    f"as_completed should yield each job as it finishes; got {completion_order}")
assert input_order == [0.18, 0.12, 0.06]
print("✓ as_completed yielded fast, medium, slow; the dict still gives submission order")

# %% [markdown]
# `as_completed` hands out each future the moment it is done, whatever its place in the
# submission, so its list follows the finishing order, fast first. Reading the futures in the
# order you submitted them gives the results back in input order, slow one first: keep the futures
# in a list or dict, and you get both orders.
#
# ## What leaving a `with` block waits for
#
# Most pools in real code live in a `with ThreadPoolExecutor() as pool:` block. Below, four
# jobs go to two workers inside such a block; they are `convert_in_steps` from the shutdown
# experiment, with its gate opened from the start, so each takes 0.1 s. The cell marks the
# last `submit` and the line after the block, then lists the pool's worker threads still
# there.

# %%
tl = Timeline()
release.set()  # open convert_in_steps's gate: the jobs run straight through
with ThreadPoolExecutor(max_workers=2, thread_name_prefix="with-block") as pool:
    for shard in range(4):
        pool.submit(convert_in_steps, shard)
    tl.mark("last submit returned")
tl.mark("with block exited")
workers_left = [t.name for t in threading.enumerate()
                if t.name.startswith("with-block")]
print(tl.names())
print("worker threads left:", workers_left)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert tl.order("last submit returned", "job 3 finished", "with block exited")
assert all(tl.order(f"job {shard} finished", "with block exited") for shard in range(4))
assert workers_left == [], workers_left
print("✓ the block exited after all four jobs had finished and both workers had ended")

# %% [markdown]
# On the way out, `with ThreadPoolExecutor() as pool:` calls `pool.shutdown(wait=True)`, so
# the line after the block runs only when every submitted job has finished and every worker
# thread has ended: "with block exited" is the very last mark, after the last job's
# "finished", and no worker thread is left. It is the simplest correct way to use a pool whose
# work fits in one block.
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
with ThreadPoolExecutor(max_workers=2, thread_name_prefix="map") as pool:
    squares = pool.map(square, counted(1000))
    taken_before_reading = len(taken)
    first_square = next(squares)
print(f"items taken before the first result was read: {taken_before_reading} of 1000")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: map-submits-the-whole-input-at-once
assert taken_before_reading == 1000 and first_square == 0
print("✓ pool.map submitted all 1000 items before the first result was read")

# %% [markdown]
# :::{dropdown} Why
#
# `pool.map(fn, items)` submits **every** item before it returns, so the printed count is the
# whole input, 1000 of 1000, and a long input fills
# memory with queued jobs and their arguments.
#
# :::
#
# You can bound it yourself, with a deque of
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
# 4. if a job raises or a wait times out, cancel the futures still outstanding and let the
#    exception out, without submitting anything more.
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
# slime's weight tools use both ways of collecting results. When slime syncs changed weights
# to disk, its delta encoder (`_encode_delta`, the first quote) runs a diff-and-compress job
# per tensor on a thread pool and bounds the jobs in flight as Exercise 17.1 does. The
# checkpoint converter in `tools/` (`save_tensors`, the second quote) takes the other path:
# one job per parameter inside a `with` block, handled in completion order. More pools are
# listed in the [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("17")

# %% [markdown]
# The quote above ends in a `finally` that calls a plain `shutdown()`. The cell below runs
# the same shape on a model: two workers, at most `2 * NUM_WORKERS` jobs in flight, and
# job 0 raises at once while the others take 0.2 s each. It marks when each job finishes
# and when the error reaches the caller. Predict: does the error reach the caller before
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
                inflight.popleft().result()
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
# compressed (the failed one is not among them) for a sync that has already failed; `shutdown(cancel_futures=True)` in the
# `finally` would drop the queued ones, as the shutdown section showed.
#
# :::


# %% [markdown]
# The converter in the second quote (below) hands each parameter to a worker that logs any
# `Exception` and returns an empty list. The same shape on a model of three parameters, of
# which `layer.1` cannot be converted:

# %%
def convert(name: str) -> list[str]:
    if name == "layer.1":
        raise ValueError("unsupported shape")
    return [f"hf.{name}"]


def convert_or_log(name: str) -> list[str]:
    try:
        return convert(name)
    except Exception as exc:
        print(f"log: {name}: {exc}")
        return []


written: list[str] = []
with ThreadPoolExecutor(max_workers=2) as pool:
    params = ["layer.0", "layer.1", "layer.2"]
    jobs = {pool.submit(convert_or_log, name): name for name in params}
    for job in as_completed(jobs, timeout=5):
        written.extend(job.result())
print(f"no error raised; {len(written)} of {len(jobs)} written: {sorted(written)}")


# %% tags=["remove-input"]
show_call_site("17b")
