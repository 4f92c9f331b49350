# %% [markdown]
# # 13 · Future, callbacks and a cross-thread event loop
# *Future、回调与跨线程事件循环*
#
# **The question.** Synchronous code (a training loop, a Ray actor method) needs the result
# of a coroutine, and it cannot `await`. How does synchronous code hand a coroutine to an event loop running in another thread, wait for it
# with a bound, and stop that loop without leaving work behind?
#
# **You will**
# 1. resolve an `asyncio.Future` from a callback and see when its done-callbacks run;
# 2. find out where synchronous code can call `asyncio.run`, and what each new `asyncio.run` costs;
# 3. run one event loop forever in a background thread, submit coroutines to it with
#    `run_coroutine_threadsafe`, and wait with `result(timeout)` or `await wrap_future(...)`;
# 4. stop it with `call_soon_threadsafe`, join the thread with a timeout and close the loop;
# 5. find out what a loop method does when you call it from the wrong thread.
#
# **Needs** chapters 03, 08 and 09 · about 75 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. In the first cell, `figure_style()` only sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import concurrent.futures
import sys
import threading
import time

from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## A Future is a box that a callback fills
#
# An `asyncio.Future` holds no work. It is a box: someone calls `set_result` on it, and
# whoever awaits it wakes up with the value. Here a timer callback fills it after 0.05 s, and
# a done-callback was added to it beforehand. `Timeline` is the course's recorder: `tl.mark`
# notes a moment, `tl.order` checks their order. Which is noted first: `set_result returned`
# or `done-callback ran`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
loop = asyncio.get_running_loop()
weights_ready = loop.create_future()
weights_ready.add_done_callback(lambda fut: tl.mark("done-callback ran"))


def publish_weights() -> None:
    weights_ready.set_result("weights v2")
    tl.mark("set_result returned")


loop.call_later(0.05, publish_weights)
tl.mark("awaiting the future")
version = await weights_ready
tl.mark("awaiter resumed")
print(version, tl.names())

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert version == "weights v2"
assert tl.order("awaiting the future", "set_result returned", "done-callback ran")
assert tl.order("set_result returned", "awaiter resumed")
print("✓ the done-callback ran after set_result had returned, on the loop's next turn")

# %% [markdown]
# :::{dropdown} Why
#
# A Future's done-callbacks are not called inside `set_result`: the loop schedules them to run
# on its next turn, in the order they were added. So `set_result returned` is noted first, and
# the callback runs only when the timer callback has returned to the loop. The awaiting task
# wakes up the same way: its `await` added a done-callback of its own when it began to wait,
# after ours, so `awaiter resumed` comes last.
#
# :::
#
# ## `asyncio.run` refuses inside a running loop
#
# `asyncio.run(main())` is how every asyncio tutorial starts a program. Chapter 01 said that a
# notebook cell already runs inside an {term}`event loop`, and a thread runs only one loop at a
# time. So `asyncio.run`, called from a notebook cell to get the result of `fetch_reward(1)`,
# refuses; the cell below shows how.

# %%
async def fetch_reward(sample_id: int) -> float:
    await asyncio.sleep(0.01)
    return sample_id / 10


coro = fetch_reward(1)
try:
    outcome = asyncio.run(coro)
except Exception as exc:
    outcome = exc
finally:
    coro.close()  # never started: close it, or Python warns "never awaited"

print(f"asyncio.run(fetch_reward(1)) from this cell: {outcome!r}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert isinstance(outcome, RuntimeError) and asyncio.get_running_loop().is_running(), outcome
print("✓ asyncio.run refused: this thread already runs the notebook's loop")

# %% [markdown]
# The same happens in any function called, however deeply, from a coroutine. In a thread with
# no running loop, `asyncio.run` works. The next experiment uses one `asyncio.Event`, `gate`,
# made once in the cell below, and a coroutine that waits briefly on it.

# %%
gate = asyncio.Event()


async def wait_briefly_at_gate() -> str:
    try:
        async with asyncio.timeout(0.01):
            await gate.wait()
    except TimeoutError:
        pass
    return "ok"


# %% [markdown]
# ## Predict: one `asyncio.Event`, two `asyncio.run` calls
#
# A thread with no loop calls `asyncio.run` twice, and each run waits briefly on `gate`, which
# is never set. The Event was made once, and making it binds it to no loop; each
# `asyncio.run` makes a loop of its own and closes it at the end. Predict: what does each
# run give, `"ok"` or an error?


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
outcomes: list[str] = []


def two_asyncio_runs() -> None:
    for _ in range(2):
        try:
            outcomes.append(asyncio.run(wait_briefly_at_gate()))
        except Exception as exc:
            outcomes.append(f"{type(exc).__name__}: {exc}")


runner_thread = threading.Thread(target=two_asyncio_runs, name="two-asyncio-runs")
runner_thread.start()
runner_thread.join(timeout=3)
print(outcomes)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: each-asyncio-run-makes-a-new-loop
assert not runner_thread.is_alive(), "the thread with the two asyncio.run calls did not end"
assert outcomes[0] == "ok"
assert len(outcomes) == 2 and outcomes[1].startswith("RuntimeError: "), (
    f"the second asyncio.run should make a new loop, which the Event refuses: {outcomes}")
print("✓ the second asyncio.run made a new loop; the Event was bound to the first one")

# %% [markdown]
# :::{dropdown} Why
#
# asyncio's `Event`, `Lock`, `Semaphore`, `Condition` and `Queue` are made without a loop,
# and each binds itself to the running loop the first time it has to wait (a `wait()` on an
# Event that is not set, a `get()` on an empty Queue); from then on it belongs to that loop.
# The reason is the future underneath: a wait that blocks sleeps on a future, and a future is
# made by, and belongs to, the running loop.
# The first run's `wait()` had to block, so it bound `gate` to the first run's loop. A
# `wait()` on an Event that is already set returns at once and binds nothing. The second run
# waited under a new loop, and the Event refused it with `RuntimeError`. Anything that
# attaches itself to a loop (asyncio locks, events and queues once they are waited on, HTTP
# client sessions, connection pools) breaks the same way on the next `asyncio.run`.
#
# :::

# %% [markdown]
# ## One loop, forever, in its own thread
#
# The pattern slime uses: start **one** event loop in a background thread and keep it running
# (`run_forever`). Synchronous code submits coroutines to it with
# `asyncio.run_coroutine_threadsafe(coro, loop)`, which returns a
# `concurrent.futures.Future`, the thread-safe kind from chapter 08, and waits on it with
# `result()`. Every coroutine
# then runs on the same loop, so loop-bound objects keep working across calls.
#
# The core of the pattern is eight statements: make a loop, run it forever in a thread,
# submit a coroutine, wait for its result with a timeout, and at the end stop the loop from
# outside, join the thread and close the loop (only once the thread has ended: closing a
# running loop raises). The cell prints the name of the thread the coroutine ran on, and of
# the thread that called it.

# %%
async def which_thread() -> str:
    await asyncio.sleep(0.01)
    return threading.current_thread().name


core_loop = asyncio.new_event_loop()
core_thread = threading.Thread(target=core_loop.run_forever, name="core-loop")
core_thread.start()
future = asyncio.run_coroutine_threadsafe(which_thread(), core_loop)
print("ran on:", future.result(timeout=2))
print("called from:", threading.current_thread().name)

core_loop.call_soon_threadsafe(core_loop.stop)  # from this thread: the thread-safe call
core_thread.join(timeout=2)
if not core_thread.is_alive():
    core_loop.close()

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert future.result(timeout=0) == "core-loop" != threading.current_thread().name
assert not core_thread.is_alive() and core_loop.is_closed(), "the loop thread ended, loop closed"
print("✓ the coroutine ran on the loop thread; the thread ended and its loop is closed")

# %% [markdown]
# The coroutine ran on `core-loop`, the thread that runs the loop it was submitted to;
# `result()` only waited for it on the calling thread.
#
# `LoopThread` below grows that core into a class:
#
# - `submit()` hands a coroutine to the loop and returns its future at once.
# - `run()` hands it over and waits for its result, with a timeout.
# - The thread runs `serve_forever` (in the fold): the loop runs until stopped, then closes.
# - The thread is a daemon, so it does not keep the interpreter from exiting.
# - `__init__` returns only once the loop runs: the loop's first callback sets an Event,
#   `started`, and `__init__` waits for it. A loop that cannot start fails right there.
#
# `stop()` and its helper `_cancel_other_tasks` (in the fold) get their own section,
# *Stopping the loop thread*.

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the loop thread's body and its shutdown helper"}
def serve_forever(loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
    """The loop thread's body: run the loop until it is stopped, then close it."""
    asyncio.set_event_loop(loop)
    loop.call_soon(started.set)  # runs once the loop is running
    try:
        loop.run_forever()
    finally:
        loop.close()


async def _cancel_other_tasks() -> None:
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
    # close async generators left open on this loop, as asyncio.run does at its end
    await asyncio.get_running_loop().shutdown_asyncgens()


# %%
class LoopThread:
    """An event loop running forever in a background thread, for synchronous callers."""

    def __init__(self, name: str = "loop-thread") -> None:
        self.loop, started = asyncio.new_event_loop(), threading.Event()
        self.thread = threading.Thread(target=serve_forever, args=(self.loop, started),
                                       name=name, daemon=True)
        self.thread.start()
        if not started.wait(timeout=2):
            raise RuntimeError("the loop thread did not start")

    def submit(self, coro) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro, timeout: float):
        """Run `coro` on the loop thread; wait at most `timeout` s for its result."""
        return self.submit(coro).result(timeout=timeout)

    def stop(self, timeout: float = 2.0) -> None:
        if self.thread.is_alive():  # a stopped loop thread needs nothing more
            self.run(_cancel_other_tasks(), timeout=timeout)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout)
        if self.thread.is_alive() or not self.loop.is_closed():
            raise RuntimeError("the loop thread did not stop and close its loop")


# %% [markdown]
# Two calls through one `LoopThread`: both coroutines run on the loop's thread, not the
# caller's, and one `asyncio.Event`, the kind that broke across two `asyncio.run` calls,
# now serves both.

# %%
background = LoopThread("rollout-loop")
# A new Event: the earlier `gate` is bound to the first asyncio.run's loop, closed now.
# This one binds to the loop thread's loop at its first wait().
rollout_gate = asyncio.Event()


async def where_and_gate() -> tuple[threading.Thread, str]:
    try:
        async with asyncio.timeout(0.01):
            await rollout_gate.wait()
    except TimeoutError:
        pass
    return threading.current_thread(), "ok"


calls = [background.run(where_and_gate(), timeout=2) for _ in range(2)]
print([(thread.name, status) for thread, status in calls],
      "caller thread:", threading.current_thread().name)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert all(thread is background.thread is not threading.current_thread() for thread, _ in calls)
assert [status for _, status in calls] == ["ok", "ok"]
print("✓ both calls ran on the loop thread, and the one Event served both")

# %% [markdown]
# ## Measure: heartbeats while waiting in `result()` and in `wrap_future`
#
# There are two ways to wait for the submitted coroutine. Synchronous code calls
# `future.result(timeout)`. Code that is itself running on a loop (the notebook is) can
# instead `await asyncio.wrap_future(future)`, which turns the thread-safe Future into one its
# own loop can await.
#
# The notebook waits twice for a job of 0.12 s on the loop thread: once in `result()`, once
# under `await wrap_future`.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the instruments"}
# The instruments: the timeline, a job that draws its own span, and the notebook's wait.
from lab_snippets.loopwatch import LoopWatch

tl = Timeline()


async def slow_job(label: str) -> str:
    with tl.span(f"loop thread: {label}", state="waiting"):  # the job only awaits
        await asyncio.sleep(0.12)
    return label


def notebook_wait(how: str):
    """A span for the notebook's wait, on the heartbeat's timeline."""
    return tl.span(f"notebook: {how}", state="waiting")


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_waits(watch: LoopWatch) -> None:
    """Colour each wait by what the heartbeat measured in it, draw each heartbeat, and plot."""
    from dataclasses import replace

    def silent(span) -> bool:
        return not any(span.start < t < span.end for t in ticks)

    tl.spans[:] = [replace(s, state="blocked") if s.label.startswith("notebook: ") and silent(s)
                   else s for s in tl.spans]
    for beat in watch.beats:  # one thin bar per heartbeat of the notebook's loop
        tl.add("notebook's event loop: heartbeats", beat, beat + 0.002, state="running")
    tl.plot("Waiting for a coroutine on another thread's loop: block or await",
            lanes=["loop thread: job A", "notebook: result()", "loop thread: job B",
                   "notebook: await wrap_future", "notebook's event loop: heartbeats"])


# %% [markdown]
# A heartbeat on the notebook's own loop ticks every 0.01 s (the reading guide's `LoopWatch`),
# and the cell counts the ticks inside each wait. Predict: how many heartbeats land while the
# notebook waits in `result()`, and how many while it awaits `wrap_future`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async with LoopWatch(interval=0.01) as watch:  # a heartbeat every 0.01 s
    await asyncio.sleep(0.03)
    with notebook_wait("result()"):  # notebook_wait: a span for this wait
        background.run(slow_job("job A"), timeout=2)  # slow_job: sleeps 0.12 s
    await asyncio.sleep(0.03)
    with notebook_wait("await wrap_future"):
        await asyncio.wrap_future(background.submit(slow_job("job B")))
    await asyncio.sleep(0.03)
ticks = [beat - tl.t0 for beat in watch.beats]  # on the timeline's clock
for waiting_lane in ("notebook: result()", "notebook: await wrap_future"):
    waited = tl.spans_of(waiting_lane)[0]
    beats = sum(waited.start < t < waited.end for t in ticks)  # ticks: heartbeat times
    print(f"heartbeats during {waiting_lane!r}: {beats}")
draw_waits(watch)  # the run on a timeline (its code is folded above the run)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: result-blocks-the-loop-wrap-future-does-not
blocked_span = tl.spans_of("notebook: result()")[0]
awaiting_span = tl.spans_of("notebook: await wrap_future")[0]
ticks_while_blocked = sum(blocked_span.start < t < blocked_span.end for t in ticks)
ticks_while_awaiting = sum(awaiting_span.start < t < awaiting_span.end for t in ticks)
print(f"heartbeats while blocked in result(): {ticks_while_blocked}; "
      f"while awaiting wrap_future: {ticks_while_awaiting}")
assert ticks_while_blocked == 0, (
    f"blocked in result(), the notebook's loop should not tick: {ticks_while_blocked} ticks")
assert ticks_while_awaiting >= 2, (
    f"awaiting wrap_future, the notebook's loop should keep ticking: {ticks_while_awaiting}")
print("✓ no heartbeat while result() blocked; the heartbeat went on under await wrap_future")

# %% [markdown]
# :::{dropdown} Why
#
# While the notebook waits in `result()`, the heartbeat stops for as long as job A runs,
# because `result()` blocks the notebook's thread, and the notebook's loop runs on that
# thread. Under `await wrap_future` the ticks go on: the notebook's loop is free while job B
# runs on the other thread.
#
# On the timeline, the jobs only await `asyncio.sleep` on the loop thread, so their bars are
# light green (waiting). A wait of the notebook in which no heartbeat landed is drawn red
# (blocked), and that is the one in `result()`. The bottom lane draws each heartbeat of the
# notebook's loop as a thin blue bar: there is a gap under the wait in `result()`, and none
# under `await wrap_future`.
#
# :::

# %% [markdown]
# ## Calling a loop from the wrong thread
#
# **Where we are.** `background`, the `LoopThread` made in *One loop, forever, in its own
# thread*, is still running, with nothing to do: the jobs of the Measure have ended. The next
# three sections use it, and *Stopping the loop thread* ends it.
#
# Most loop and future methods (`call_soon`, `create_task`, `call_later`, a Future's
# `set_result`) are not thread-safe. From the notebook's thread, the cell below calls `background.loop.call_soon(callback)` and
# waits 0.2 s. Predict: does the callback run within those 0.2 s, does `call_soon`
# raise, or neither?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
ran = threading.Event()


def note_callback() -> None:
    tl.mark("callback ran")
    ran.set()


background.loop.call_soon(note_callback)  # from the notebook's thread, not the loop's
tl.mark("call_soon returned")
ran_in_time = ran.wait(timeout=0.2)
tl.mark("waited 0.2 s")
print("callback ran within the 0.2 s:", ran_in_time)
print(tl.names())

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: call-soon-from-another-thread-does-not-wake-the-loop
assert not ran_in_time, "the idle loop should not notice a callback from call_soon"
print("✓ 0.2 s after call_soon returned, the callback had still not run")

# %% [markdown]
# :::{dropdown} Why
#
# An idle loop is asleep in the operating system, waiting for I/O. `call_soon` from another
# thread puts the callback on the loop's list but does not wake the loop. So the call did not
# fail, and the callback did not run within the 0.2 s: it waits until something else wakes the
# loop. To wake it, `call_soon_threadsafe` writes a byte to a socket the loop watches
# (asyncio's selector loop, the Unix default, and the proactor loop on Windows alike).
# Once awake, the loop runs every callback on its list, the stranded one included.
#
# :::
#
# The callback is still waiting on the loop's list. The cell below wakes the loop the
# thread-safe way, with a callback that does nothing, and the stranded callback runs with it.

# %%
background.loop.call_soon_threadsafe(lambda: None)  # wakes the idle loop
print("the stranded callback ran:", ran.wait(timeout=2))
print(tl.names())

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert ran.is_set(), "the woken loop should have run the callback"
assert tl.order("call_soon returned", "waited 0.2 s", "callback ran")
print("✓ the callback ran only once call_soon_threadsafe woke the loop")

# %% [markdown]
# asyncio has a debug mode (`loop.set_debug(True)` or `PYTHONASYNCIODEBUG=1`). The cell below
# turns it on for the background loop and makes the same `call_soon` from the notebook's
# thread. Predict: does the callback stall again, or does something change?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
background.loop.set_debug(True)
try:
    outcome = background.loop.call_soon(note_callback)
except Exception as exc:
    outcome = exc
finally:
    background.loop.set_debug(False)

print(f"call_soon in debug mode: {outcome!r}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert isinstance(outcome, RuntimeError), outcome
print("✓ in debug mode, call_soon from another thread raised RuntimeError")

# %% [markdown]
# :::{dropdown} Why
#
# Debug mode adds checks to the loop's methods: `call_soon` first checks which thread is
# calling it, so the mistake shows up at the call that makes it: `RuntimeError` instead of a callback left waiting. Turn debug mode
# on while developing threaded code.
#
# :::
#
# ## Waiting on the loop from the loop's own thread
#
# In the Measure above, the wait in `background.run` was on the notebook's thread, so the
# notebook's loop, which runs on that thread, did not tick until the wait ended. Now the wait
# moves onto the loop thread itself. `marked_reward(5)` marks the timeline when it starts,
# then returns `fetch_reward(5)`: 0.5, after a sleep of 0.01 s.

# %%
async def marked_reward(sample_id: int) -> float:
    tl.mark("handed-in coroutine started")
    return await fetch_reward(sample_id)


async def run_from_the_loop_thread() -> str:  # runs on the loop thread
    tl.mark("wait began, on the loop thread")
    try:
        return repr(background.run(marked_reward(5), timeout=0.3))
    except Exception as exc:
        return type(exc).__name__
    finally:
        tl.mark("wait ended")


# %% [markdown]
# Who waits where, in the cell below:
#
# 1. the notebook's thread calls `background.run(run_from_the_loop_thread())` and waits in
#    `result()` (up to 3 s);
# 2. the loop thread runs `run_from_the_loop_thread()`;
# 3. which calls `background.run(marked_reward(5))`: it submits `marked_reward(5)` to the
#    same loop and waits in `result()` (up to 0.3 s), on the loop thread.
#
# Then the cell gives the loop 0.05 s more before it prints the marks. Predict: does the wait
# in step 3 get `0.5`, and when does `marked_reward` start?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
# From the notebook's thread: deliver the experiment to the loop, then give the loop
# 0.05 s more before reading the marks.
inside_outcome = background.run(run_from_the_loop_thread(), timeout=3)
background.run(asyncio.sleep(0.05), timeout=2)
print("the call on the loop thread gave:", inside_outcome)
print(tl.names())

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-wait-on-the-loop-thread-holds-its-own-work
assert inside_outcome == "TimeoutError", f"the wait should run out: {inside_outcome}"
assert tl.order("wait began, on the loop thread", "wait ended", "handed-in coroutine started")
print("✓ the handed-in coroutine started only after the wait on its loop's thread gave up")

# %% [markdown]
# :::{dropdown} Why
#
# `result()` held the loop's thread, the only thread that can run the handed-in coroutine, so
# the loop could not turn until the wait gave up: `TimeoutError`, and only then did the
# coroutine start, with nobody left to hear its result. Without a timeout this is a deadlock,
# and no error ever says so. A helper that waits on a loop thread should therefore check the
# thread first: called on the loop's own thread, it refuses at once and closes the coroutine
# instead of scheduling it. You will write such a helper in the exercise at the end.
#
# :::
#
# ## A timeout does not cancel: `future.cancel()` does
#
# `result(timeout)` bounds only the caller's wait. The coroutine goes on running on the loop
# after the `TimeoutError`, unless the caller cancels it. The `concurrent.futures.Future` that
# `run_coroutine_threadsafe` returned is chained to the task on the loop: `future.cancel()`,
# called from the caller's thread, has the loop cancel that task (asyncio passes the cancel
# on with `call_soon_threadsafe`). The cell below waits 0.05 s for a coroutine that needs
# 30 s, then cancels it; the coroutine's `finally` sets a `threading.Event` on the loop thread.

# %%
slow_reward_cleaned_up = threading.Event()


async def slow_reward() -> float:
    try:
        await asyncio.sleep(30)
        return 1.0
    finally:
        slow_reward_cleaned_up.set()


reward_future = background.submit(slow_reward())
try:
    reward_future.result(timeout=0.05)
except TimeoutError:
    print("TimeoutError; still running on the loop:", not reward_future.done())
reward_future.cancel()
print("after future.cancel(), its finally ran:", slow_reward_cleaned_up.wait(timeout=2))
try:
    reward_future.result(timeout=0)
except concurrent.futures.CancelledError as exc:
    print("and result() on the cancelled future raises", type(exc).__name__)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert reward_future.cancelled() and slow_reward_cleaned_up.is_set()
print("✓ the timeout left the coroutine running; future.cancel() cancelled it on its loop")

# %% [markdown]
# ## Stopping the loop thread
#
# `background`, the `LoopThread` from *One loop, forever*, is still running; this section
# stops it for good.
#
# A long-lived loop often has work still pending when the program wants to stop. Below, a
# poll that would sleep for 30 s is still running on the loop when the notebook calls
# `background.stop()`, the method of `LoopThread` above: it has to end the loop and join the
# thread, and a loop stopped while a task is suspended on it never resumes that task. The
# poll marks the timeline in its `finally`. Here are `stop()` and its helper, as the page
# runs them (read from the `LoopThread` cell and the fold above it):

# %% tags=["remove-input"]
from IPython.display import Markdown, display

from lab_snippets.showcode import source_lines

display(Markdown("```python\n" + "\n".join(
    source_lines(LoopThread.stop) + [""] + source_lines(_cancel_other_tasks)) + "\n```"))

# %% [markdown]
# **Predict.** `stop()` cancels the other tasks *before* it stops the loop. Why that order:
# had it called `loop.stop` first, would the poll's `finally` ever run? And in the run below,
# in which order do the marks `stop requested`, `pending task cleaned up` and `loop thread
# stopped` come?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()


async def long_poll() -> None:
    try:
        await asyncio.sleep(30)
    finally:
        tl.mark("pending task cleaned up")


pending_poll = background.submit(long_poll())
await asyncio.sleep(0.02)
tl.mark("stop requested")
background.stop(timeout=2)
tl.mark("loop thread stopped")

print(tl.names())
print("thread alive:", background.thread.is_alive(),
      "· loop closed:", background.loop.is_closed())

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: stop-cancels-pending-work-first
assert pending_poll.cancelled(), "stop() should cancel the pending coroutine"
assert tl.order("stop requested", "pending task cleaned up", "loop thread stopped")
assert not background.thread.is_alive() and background.loop.is_closed()
print("✓ stop() cancelled the pending poll (its finally ran), then stopped and closed the loop")

# %% [markdown]
# :::{dropdown} Why
#
# `stop()` first runs its helper `_cancel_other_tasks` on the loop and waits for it: the
# helper cancels every other task on the loop, waits for them with `gather`, and closes the
# async generators left open. So the poll's `finally` runs there, before anything else; only
# then does `stop()` stop the loop from outside with
# `call_soon_threadsafe(loop.stop)` (most of a loop's methods are not thread-safe;
# `call_soon_threadsafe` is the exception: it schedules a callback from another thread and
# wakes the loop), joins the thread with a bound and
# checks that the loop is closed.
# Stopping the loop first would leave the poll suspended on a loop that no longer runs.
#
# :::
#
# ## Going further: `asyncio.Runner` and `loop_factory`
#
# Optional: the exercise and the rest of this chapter do not use it, so you can skip ahead.
#
# **`asyncio.Runner`** (Python 3.11+) keeps one loop across several `run` calls in one
# thread, and closes it when the `with` block ends. That fixes the "new loop per
# `asyncio.run`" problem without a loop thread; but the loop runs only during each `run`
# call, so nothing proceeds in the background between calls. The folded cell runs the
# `Event` experiment again on one `Runner`: both runs work.

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment: two runs on one Runner"}
runner_outcomes: list[str] = []


def two_runs_one_loop() -> None:
    with asyncio.Runner() as runner:
        for _ in range(2):
            runner_outcomes.append(runner.run(wait_briefly_at_gate()))


gate = asyncio.Event()
runner_thread = threading.Thread(target=two_runs_one_loop, name="runner")
runner_thread.start()
runner_thread.join(timeout=3)
print("asyncio.Runner, two runs on one loop:", runner_outcomes)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: runner-keeps-one-loop-across-runs
assert not runner_thread.is_alive(), "the thread with the Runner did not end"
assert runner_outcomes == ["ok", "ok"], (
    f"both runs should use the same loop, which the Event accepts: {runner_outcomes}")
print("✓ both runs of one Runner used one loop: the Event worked twice")

# %% [markdown]
# **`loop_factory`** lets a thread choose the loop it gets, for example one in debug mode
# that catches the wrong-thread calls shown above. `asyncio.run` takes it from Python 3.12;
# on 3.11 only `asyncio.Runner(loop_factory=...)` does. The folded cell runs such a loop.

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment: a loop in debug mode"}
def make_debug_loop() -> asyncio.AbstractEventLoop:
    debug_loop = asyncio.new_event_loop()
    debug_loop.set_debug(True)
    return debug_loop


async def running_in_debug_mode() -> bool:
    return asyncio.get_running_loop().get_debug()


debug_flags: list[bool] = []


def run_in_debug_mode() -> None:
    if sys.version_info >= (3, 12):
        flag = asyncio.run(running_in_debug_mode(), loop_factory=make_debug_loop)
    else:  # Python 3.11: asyncio.run has no loop_factory; asyncio.Runner has one
        with asyncio.Runner(loop_factory=make_debug_loop) as runner:
            flag = runner.run(running_in_debug_mode())
    debug_flags.append(flag)


debug_thread = threading.Thread(target=run_in_debug_mode)
debug_thread.start()
debug_thread.join(timeout=3)
print("the loop was in debug mode:", debug_flags)
assert not debug_thread.is_alive()
assert debug_flags == [True], debug_flags

# %% [markdown]
# ## Exercise 13.1 · Call a coroutine on a loop thread, with a deadline
#
# Implement `call_with_deadline(loop_thread, coro, timeout)` for synchronous callers. In
# short: submit `coro` to the loop thread and wait for its result with a bound; on timeout,
# cancel it on the loop and raise `TimeoutError`; called on the loop thread itself, refuse at
# once. In detail:
#
# 1. run `coro` on `loop_thread.loop` and hand back its result, or its own exception as it
#    is, as soon as it ends;
# 2. wait at most `timeout` seconds, then **cancel the coroutine on the loop** and raise
#    `TimeoutError` at once, without waiting for its cleanup;
# 3. called on the loop thread itself, raise `RuntimeError` at once and close `coro` unrun;
#    any other thread, even one running its own loop, is served;
# 4. leave the loop and other callers' coroutines alone.
#
# :::{dropdown} Hint: which `TimeoutError`
#
# `result(timeout)` raises `concurrent.futures.TimeoutError` at the deadline; since Python
# 3.11 that is the builtin `TimeoutError` itself, so `except TimeoutError` catches it (older
# tutorials name the `concurrent.futures` one, a different class before 3.11).
#
# :::
#
# :::{dropdown} Hint: cancelling the coroutine from the caller's thread
#
# Look at `future.cancel()` in *A timeout does not cancel*, above.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (one to three synchronous callers at once, each in its own
# thread, sharing one loop thread; coroutines that return a value (`0` and `None` included),
# raise (a `TimeoutError` of their own too), or outlast the deadline, some slow to clean up;
# calls made on the loop thread itself):
#
# - **where**: the coroutine runs on the loop thread;
# - **result**: its result, or its own exception unchanged, reaches the caller when it ends.
# - **no polling**: the coroutine's end wakes the caller; a polling wait fails this.
# - **deadline**: `TimeoutError` exactly at the deadline, even if cleanup is slow.
# - **what is left**: the timed-out coroutine is cancelled on its loop; nothing else is.
# - **on the loop thread**: `RuntimeError` at once; the coroutine is closed, never run.
#
# The cancelled coroutine's cleanup may still be running when `TimeoutError` reaches the
# caller; once it ends, no task is left pending. After a refusal the loop goes on serving
# the other threads.
#
# :::
#
# The visible test below shows one run.

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
def call_with_deadline(loop_thread: LoopThread, coro, timeout: float):
    """Run `coro` on the loop thread; on timeout cancel it there and raise TimeoutError."""
    ### BEGIN SOLUTION
    if threading.current_thread() is loop_thread.thread:
        # Waiting here would hold the only thread that can run `coro`: refuse, as asyncio.run
        # refuses inside a running loop, and close the coroutine that will never run.
        coro.close()
        raise RuntimeError("call_with_deadline called on its loop's own thread: it would block that loop")
    future = asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)
    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        future.cancel()
        raise
    ### END SOLUTION


# %% tags=["tests"]
def call_outcome(coro, timeout: float) -> str:
    try:
        return repr(call_with_deadline(exercise_loop, coro, timeout=timeout))
    except (RuntimeError, TimeoutError) as exc:
        return type(exc).__name__


async def from_the_loop_thread() -> str:  # runs on exercise_loop, and calls it
    return call_outcome(fetch_reward(4), timeout=1)


exercise_loop = LoopThread("exercise-loop")
try:
    visible_reward = call_with_deadline(exercise_loop, fetch_reward(3), timeout=2)
    assert visible_reward == 0.3, (
        "a coroutine that ends before the deadline returns its result: 0.3 expected, "
        f"got {visible_reward!r}")
    assert call_outcome(asyncio.sleep(5), timeout=0.05) == "TimeoutError", (
        "a coroutine slower than the deadline must raise TimeoutError")
    from_inside = exercise_loop.run(from_the_loop_thread(), timeout=5)
    assert from_inside == "RuntimeError", (
        "called on the loop thread itself, call_with_deadline raises RuntimeError at "
        f"once: it gave {from_inside}")
finally:
    exercise_loop.stop(timeout=2)

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets import grading as _grading

_loop_thread = LoopThread("hidden-13")
_cleaned = threading.Event()
_stuck_ended = threading.Event()
_seen_threads: list[int] = []
async def _probe(value: int) -> int:
    _seen_threads.append(threading.get_ident())
    await asyncio.sleep(0.01)
    return value
async def _stuck() -> None:
    try:
        await asyncio.sleep(3)
    except asyncio.CancelledError:
        _cleaned.set()
        raise
    _stuck_ended.set()
async def _count_other_tasks() -> int:
    return len([t for t in asyncio.all_tasks() if t is not asyncio.current_task()])
try:
    try:
        _halfway = _grading.ReferenceWait(0.01 + (2 - 0.01) / 2)  # a plain wait, beside the call
        _probe_seen = _grading.call(call_with_deadline, _loop_thread, _probe(7), timeout=2)
        if isinstance(_probe_seen.error, RuntimeError):
            raise AssertionError(
                "only the loop thread itself is refused: called from the notebook's thread, which runs a "
                "loop of its own but not loop_thread's, call_with_deadline raised "
                f"RuntimeError: {_probe_seen.error}; compare the calling thread with loop_thread.thread "
                "(chapter 13)")
        if _probe_seen.error is not None:
            raise _probe_seen.error
        _value = _probe_seen.value
    except TimeoutError:
        raise AssertionError(
            "the coroutine never ran on the loop, although the loop was idle: a loop sleeping in "
            "another thread only wakes up for run_coroutine_threadsafe or call_soon_threadsafe, "
            "not for call_soon (chapter 13)") from None
    assert _value == 7, f"returned {_value!r}, not the coroutine's result"
    _grading.check_returns_early(
        _probe_seen, work=0.01, budget=2, by=_halfway.seconds, what="call_with_deadline",
        hint="wait on the future with result(timeout=...), which returns as soon as the coroutine ends; "
             "time.sleep(timeout) waits out the deadline (chapter 13)")
    _failing_seen = _grading.call(call_with_deadline, _loop_thread, _grading.failing_job(0.01)(), timeout=2)
    _grading.check_raises(_failing_seen, _grading.JobFailed, "call_with_deadline, when the coroutine raises,",
                          hint="only a timeout becomes TimeoutError; the coroutine's own error reaches the caller "
                               "as it is (future.result() re-raises it, chapter 13)")
    assert _seen_threads == [_loop_thread.thread.ident], (
        "the coroutine ran outside the loop thread it was given: submit it to loop_thread.loop "
        "with run_coroutine_threadsafe (chapter 13)")
    _raised = False
    _t0 = time.monotonic()
    try:
        _returned = call_with_deadline(_loop_thread, _stuck(), timeout=0.1)
    except TimeoutError:
        _raised = True
    _waited = time.monotonic() - _t0
    _ended_first = _stuck_ended.is_set()
    assert _raised and not _ended_first, (
        "TimeoutError must reach the caller at the deadline, while the coroutine is still running; "
        + (f"the call waited {_waited:.1f} s, for the coroutine to end" if _ended_first
           else f"it returned {_returned!r}")
        + ": wait with result(timeout=...) and let the TimeoutError propagate (chapter 13)")
    assert _cleaned.wait(timeout=2), (
        "the coroutine was not cancelled on its loop after the timeout: a timeout on the waiting "
        "side does not stop the work; cancel the future you waited on (chapters 08 and 13)")
    _left = _loop_thread.run(_count_other_tasks(), timeout=2)
    assert _left == 0, f"{_left} task(s) still pending on the loop after the timeout (chapter 13)"

    # The caller's wait is bounded on the caller's side: a coroutine slow to end once cancelled
    # (a one-second cleanup) must not hold the caller past its deadline.
    _slow_end = threading.Event()

    async def _slow_to_cancel() -> None:
        try:
            await asyncio.sleep(5)
        finally:
            await asyncio.sleep(1)  # a cleanup that outlasts the caller's deadline
            _slow_end.set()

    _limit = _grading.ReferenceWait(0.2 + 0.4)  # a plain wait of the deadline and 0.4 s of slack
    _slow_seen = _grading.call(call_with_deadline, _loop_thread, _slow_to_cancel(), timeout=0.2)
    _grading.check_raises(_slow_seen, TimeoutError, "call_with_deadline, past its deadline,")
    _grading.check_within(
        _slow_seen, budget=_limit.seconds, slack=0,
        what="call_with_deadline (timeout 0.2 s, a coroutine with a 1 s cleanup)",
        hint="bound the wait on the caller's side, future.result(timeout=timeout); a deadline on the loop side "
             "(wait_for) waits for the coroutine's cleanup too (chapter 13)")
    _slow_end.wait(timeout=3)
finally:
    _loop_thread.stop(timeout=5)
assert not _loop_thread.thread.is_alive()

# Generated scenarios (issue 37): one to three synchronous callers at once, each in a thread of
# its own, share one loop thread; each hands it a stand-in coroutine with drawn behaviour (returns
# a value, repeated or falsy ones included, after 0.02 s or 0.3 s; raises; or never ends before
# its deadline, and needs 0.2 s to clean up once cancelled, or none). call_with_deadline and the
# reference run side by side on real threads (the chapter's point), each on a loop thread of its
# own, compared on the contract's facts (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc
import functools as _functools

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc
from lab_snippets import scenarios_threads as _sth

_reference = _sc.reference(globals(), "call_with_deadline")


@_dc.dataclass(frozen=True)
class _Call:
    seconds: float    # how long the coroutine works
    timeout: float    # the caller's deadline
    value: object = 1
    raises: str = ""      # "JobFailed", or "TimeoutError": its own (a deadline of its own on the loop)
    cleanup: float = 0.0  # once cancelled

    def describe(self) -> str:
        what = (f"raises {self.raises}" if self.raises else f"returns {self.value!r}") if self.seconds < 3 else "never ends"
        slow = f", needs {self.cleanup:g} s to clean up once cancelled" if self.cleanup else ""
        return f"call_with_deadline(loop_thread, a coroutine that {what} after {self.seconds:g} s{slow}, " \
               f"timeout={self.timeout:g})"


@_dc.dataclass(frozen=True)
class _Scenario:
    calls: tuple

    def describe(self) -> str:
        who = f"{len(self.calls)} threads at once share one loop thread; " if len(self.calls) > 1 else ""
        return who + "; ".join(f"caller {k}: {c.describe()}" for k, c in enumerate(self.calls))


_values = _st.sampled_from([1, 0, None, 1, "a"])
_raises = _st.sampled_from(["", "JobFailed", "TimeoutError"])
_call = _st.one_of(
    _st.builds(_Call, seconds=_st.just(0.02), timeout=_st.just(0.15), value=_values, raises=_raises),
    _st.builds(_Call, seconds=_st.just(3.0), timeout=_st.just(0.15), cleanup=_st.sampled_from([0.0, 0.2])),
    _st.builds(_Call, seconds=_st.just(0.3), timeout=_st.just(1.0), value=_values, raises=_raises))
_scenarios = _st.builds(_Scenario, _st.lists(_call, min_size=1, max_size=3).map(tuple))


async def _stand_in(c: _Call, notes: dict) -> object:
    notes["thread"] = threading.get_ident()
    try:
        await asyncio.sleep(c.seconds)
        if c.raises == "TimeoutError":
            raise TimeoutError(f"its own deadline on the loop, after {c.seconds:g} s")
        if c.raises:
            raise _grading.JobFailed("this coroutine fails on purpose")
        return c.value
    except asyncio.CancelledError:
        notes["cancelled"] = True
        await asyncio.sleep(c.cleanup)
        raise
    finally:
        notes["ended"].set()


def _one(fn, loop_thread, c: _Call) -> dict:
    notes = {"thread": None, "cancelled": False, "ended": threading.Event()}
    seen = _sth.timed_wakeups(fn, loop_thread, _stand_in(c, notes), timeout=c.timeout)
    notes["ended"].wait(timeout=c.cleanup + 1.0)  # a cancel reaches the loop a little later
    return {**seen, "on_loop": notes["thread"] == loop_thread.thread.ident, "cancelled": notes["cancelled"]}


def _observe(fn, s: _Scenario) -> list:
    loop_thread = LoopThread("scenario-loop")
    try:
        seen = _sth.at_once([_functools.partial(_one, fn, loop_thread, c) for c in s.calls], timeout=10)
        try:
            left = loop_thread.run(_count_other_tasks(), timeout=1) if loop_thread.thread.is_alive() else "no loop"
        except TimeoutError:
            left = "no loop"
    finally:
        if loop_thread.thread.is_alive():
            loop_thread.stop(timeout=3)
    return [{**one, "left": left} for one in seen]


def _compare_one(me: dict, it: dict, c: _Call) -> str | None:
    if me["kind"] == "raised RuntimeError" != it["kind"]:
        return (f"only the loop thread itself is refused: a caller in a thread of its own, with no loop, got "
                f"RuntimeError {me.get('message')!r}; compare the calling thread with loop_thread.thread")
    if (me["kind"], me.get("value")) != (it["kind"], it.get("value")):
        got = repr(me.get("value")) if me["kind"] == "returned" else me["kind"]
        want = f"returned {it.get('value')!r}" if it["kind"] == "returned" else it["kind"]
        return (f"its result, or its own exception, reaches the caller: got {got}, expected {want} (the "
                "coroutine's result, its own exception as it is, TimeoutError at the deadline; and other "
                "callers' coroutines untouched)")
    if c.raises and me["message"] != it["message"]:
        return (f"its own exception as it is reaches the caller: {me['kind']} {me['message']!r}, where the "
                f"coroutine raised {c.raises} {it['message']!r}; a TimeoutError of its own is not the deadline: "
                "let future.result() re-raise it, do not make a new one")
    if not me["on_loop"]:
        return "the coroutine runs on the loop thread: submit it to loop_thread.loop with run_coroutine_threadsafe"
    if me["cancelled"] != it["cancelled"]:
        return ("the coroutine cancelled on its loop: " + ("it ran on after the deadline; cancel the future"
                                                            if it["cancelled"] else "it was cancelled, though it "
                                                            "ended in time; cancel only your own call's future"))
    if me["kind"] == "raised TimeoutError" and not c.raises and me["seconds"] < c.timeout * 0.9:
        return f"TimeoutError at the deadline, not before: raised after {me['seconds']:.3f} s of {c.timeout:g} s"
    if me["seconds"] > it["seconds"] + 0.1:
        return (f"a return as soon as the coroutine ends, or at the deadline: {me['seconds']:.2f} s, where the "
                f"reference, run beside it, returned after {it['seconds']:.2f} s: wait on the caller's side with "
                "future.result(timeout=...), which neither sleeps out the deadline nor waits for a cleanup")
    if me["wakeups"] > it["wakeups"] + 3 or me["calls"] > 10 * it["calls"] + 1000:
        return (f"a wait woken by the coroutine's end, not a poll: the caller's thread woke {me['wakeups']} "
                f"time(s) and made {me['calls']} calls in {me['seconds']:.2f} s, where the reference, beside it, "
                f"woke {it['wakeups']} time(s) with {it['calls']} calls; block on future.result(timeout=...), "
                "which the result or the deadline wakes at once")
    if me["left"] != it["left"]:
        return (f"no task left pending on the loop: {me['left']} task(s) once every coroutine had ended "
                f"(the reference left {it['left']}): do not stop or block the shared loop thread")
    return None


_compare = _sth.per_item(_compare_one, lambda s: s.calls, "caller", "call_with_deadline")


_sc.differential(call_with_deadline, _reference, _scenarios, _sth.Beside(_observe, _reference), _compare,
                 what="call_with_deadline", examples=2, hint="chapter 13",
                 explicit=(_Scenario((_Call(3.0, 0.15, cleanup=0.2), _Call(0.3, 1.0, value=0),
                                      # a TimeoutError of its own, not the deadline's: too rare a draw
                                      # for two generated runs
                                      _Call(0.02, 0.15, raises="TimeoutError"))),
                           # a quick result under a long deadline: a caller that polls hears of it late
                           _Scenario((_Call(0.02, 2.0, value=1),))))

# The twist: called on the loop thread itself (by a coroutine, or a callback, running there), the
# call cannot wait: the loop would run the coroutine only once its own thread stopped waiting.
# RuntimeError at once, the coroutine handed in closed and never run, the loop free for the others.
import inspect as _inspect


@_dc.dataclass(frozen=True)
class _Inside:
    via: str       # "a coroutine" or "a callback", running on the loop thread
    work: _Call    # the coroutine it hands in, and its deadline
    others: tuple  # calls from threads of their own, made at the same time

    def describe(self) -> str:
        who = "; meanwhile, from threads of their own: " + "; ".join(
            c.describe() for c in self.others) if self.others else ""
        return f"{self.via} running on the loop thread calls {self.work.describe()}{who}"


def _observe_inside(fn, loop_thread, s: _Inside) -> dict:
    notes = {"thread": None, "cancelled": False, "ended": threading.Event()}
    coro = _stand_in(s.work, notes)
    seen: dict = {}
    called = threading.Event()

    def make_the_call() -> None:
        try:
            seen.update(_sth.timed(fn, loop_thread, coro, timeout=s.work.timeout))
        finally:
            called.set()

    async def from_a_coroutine() -> None:
        make_the_call()

    if s.via == "a coroutine":
        loop_thread.submit(from_a_coroutine())
    else:
        loop_thread.loop.call_soon_threadsafe(make_the_call)
    called.wait(timeout=s.work.timeout + 3)
    try:  # a few turns of the loop: a task cancelled before its first step closes its coroutine then
        loop_thread.run(asyncio.sleep(0.02), timeout=2)
    except TimeoutError:
        pass
    state = _inspect.getcoroutinestate(coro)
    coro.close()  # whatever the call did with it, the test leaves no coroutine behind
    return {**(seen or {"kind": "still running", "seconds": s.work.timeout + 3}),
            "ran": notes["thread"] is not None, "state": state}


def _inside_problem(me: dict, by: float) -> str | None:
    """What is wrong with a call made on the loop thread, or None; ``by`` is how long it may take."""
    if me["kind"] != "raised RuntimeError" or me["seconds"] > by:
        got = me["kind"] if me["kind"] != "returned" else f"returned {me.get('value')!r}"
        return (f"called on the loop thread itself, call_with_deadline raises RuntimeError at once: it {got} "
                f"after {me['seconds']:.2f} s; while that thread waits, its loop cannot run the coroutine, so "
                "check where you are called from before waiting, as asyncio.run refuses inside a running loop "
                "(chapter 13)")
    if me["ran"]:
        return ("called on the loop thread itself, the coroutine handed in is closed, never run: it ran "
                "anyway, with nobody to hear its result; close it instead of scheduling it")
    if me["state"] != _inspect.CORO_CLOSED:
        return ("called on the loop thread itself, the coroutine handed in is closed, never run: it was left "
                f"{me['state']} (Python warns 'coroutine ... was never awaited'); close it, as the chapter's "
                "asyncio.run cell does (chapter 13)")
    return None


# A named check: a coroutine on the loop thread calls it with a deadline of 2 s.
_twist_loop = LoopThread("hidden-13-twist")
try:
    _soon = _grading.ReferenceWait(0.5)  # a plain wait beside the call: "at once" ends well before it
    _inside_seen = _observe_inside(call_with_deadline, _twist_loop,
                                   _Inside("a coroutine", _Call(0.02, 2.0, value=4), ()))
    _problem = _inside_problem(_inside_seen, by=_soon.seconds)
    assert _problem is None, _problem
    assert _twist_loop.thread.is_alive(), (
        "called on the loop thread itself, call_with_deadline stopped the loop thread: raise, and leave it running")
    _after = _grading.call(call_with_deadline, _twist_loop, _probe(8), timeout=2)
    assert _after.error is None and _after.value == 8, (
        "after a call made on the loop thread, the loop serves the next caller: "
        f"it gave {_after.error or _after.value!r}")
finally:
    _twist_loop.stop(timeout=5)


def _observe_twist(fn, s: _Inside) -> list:
    loop_thread = LoopThread("scenario-loop")
    try:
        seen = _sth.at_once([_functools.partial(_observe_inside, fn, loop_thread, s)]
                            + [_functools.partial(_one, fn, loop_thread, c) for c in s.others], timeout=10)
        try:
            left = loop_thread.run(_count_other_tasks(), timeout=1) if loop_thread.thread.is_alive() else "no loop"
        except TimeoutError:
            left = "no loop"
    finally:
        if loop_thread.thread.is_alive():
            loop_thread.stop(timeout=3)
    return [{**one, "left": left} for one in seen]


def _compare_twist(mine, ref, s: _Inside) -> str | None:
    if not isinstance(ref, list):
        return None
    if not isinstance(mine, list):
        return f"call_with_deadline: the scenario could not be run to its end ({mine.get('kind')})"
    problem = _inside_problem(mine[0], by=ref[0]["seconds"] + 0.1)
    if problem:
        return problem
    for k, (me, it, c) in enumerate(zip(mine[1:], ref[1:], s.others, strict=True)):
        problem = _compare_one(me, it, c)
        if problem:
            return f"while a call was refused on the loop thread, caller {k}: {problem}"
    if mine[0]["left"] != ref[0]["left"]:
        return (f"no task left pending on the loop: {mine[0]['left']} task(s) after a call refused on the loop "
                f"thread (the reference left {ref[0]['left']})")
    return None


_inside_calls = _st.builds(
    _Inside, via=_st.sampled_from(["a coroutine", "a callback"]),
    work=_st.one_of(_st.builds(_Call, seconds=_st.just(0.02), timeout=_st.sampled_from([0.15, 1.0]), value=_values),
                    _st.builds(_Call, seconds=_st.just(3.0), timeout=_st.just(0.15))),
    others=_st.lists(_st.builds(_Call, seconds=_st.just(0.02), timeout=_st.just(1.0), value=_values),
                     max_size=1).map(tuple))
_sc.differential(call_with_deadline, _reference, _inside_calls, _sth.Beside(_observe_twist, _reference),
                 _compare_twist, what="call_with_deadline", examples=2, hint="chapter 13",
                 explicit=(_Inside("a callback", _Call(0.02, 1.0, value=1), (_Call(0.02, 1.0, value=0),)),))
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - An `asyncio.Future` is filled by whoever calls `set_result`; its done-callbacks run on
#   the loop's next turn, not inside `set_result`.
# - `asyncio.run` refuses to run inside a running loop, and each call makes and closes a new
#   loop, which breaks objects tied to the old one.
# - A loop running forever in a background thread serves synchronous callers:
#   `run_coroutine_threadsafe` submits, `result(timeout)` waits with a bound, and a caller on
#   another loop awaits `asyncio.wrap_future(...)` instead of blocking.
# - To schedule work on a loop from another thread, use only `call_soon_threadsafe` (or
#   `run_coroutine_threadsafe`). Stop the loop with it, join the thread with a timeout, close the loop.
#
# **What's next.** [Part III](../book/parts/slime.md) is chapter 14, which goes back to slime
# and follows one agent task from creation to cleanup, using everything so far.
#
# ## In slime
#
# The first quote is slime's loop thread; the second stops a server that runs on another
# thread's loop. More sites are listed in the [source inventory](../book/reference/inventory.md).
#
# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("13")

# %% [markdown]
# The cell below makes the first quote's call, `run_coroutine_threadsafe(coro, loop).result()`,
# on a `LoopThread` of its own, from a caller thread, for a coroutine that waits on an event,
# as a reward server that does not answer would. `result()` has no timeout, so after 0.3 s
# the caller is still waiting and has reported nothing; the cell prints that, then calls
# `stop()`, the clean-up method this course wrote for `LoopThread`. Predict: what does the caller report
# after `stop()`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
slime_like = LoopThread("slime-like-loop")
caller_heard: list[str] = []


async def never_answers() -> None:
    await asyncio.Event().wait()


def slime_style_caller() -> None:
    try:  # slime's run
        caller_heard.append(repr(slime_like.submit(never_answers()).result()))
    except BaseException as exc:
        caller_heard.append(type(exc).__name__)


caller = threading.Thread(target=slime_style_caller, name="rollout caller")
caller.start()
caller.join(timeout=0.3)
caller_still_waiting = caller.is_alive()
heard_before_cleanup = list(caller_heard)
slime_like.stop(timeout=2)
caller.join(timeout=2)
print("caller still waiting after 0.3 s:", caller_still_waiting,
      "· what it had reported:", heard_before_cleanup)
print("after stop(), it reported:", caller_heard)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-result-without-timeout-waits-without-a-word
assert caller_still_waiting and heard_before_cleanup == [], (
    f"the caller should still be waiting, with nothing reported: {heard_before_cleanup}")
assert caller_heard == ["CancelledError"] and not caller.is_alive(), caller_heard
print("✓ the caller waited, silent, until the course's cleanup cancelled the coroutine")

# %% [markdown]
# :::{dropdown} Why
#
# `result()` with no timeout waits as long as the coroutine does. slime's helper neither
# stops its loop nor cancels the coroutine, so if the coroutine does not end, the rollout's
# caller waits for ever, with no message (chapter 27's hazard 5). Here it was the course's
# cleanup, `stop()`, that freed the caller: it cancelled the coroutine, and `result()`
# re-raised that as `CancelledError`. The exercise's `call_with_deadline` is the missing piece: it
# raises `TimeoutError` at its deadline and cancels the coroutine on the loop.
#
# :::


# %% tags=["remove-input"]
show_call_site("13c")
