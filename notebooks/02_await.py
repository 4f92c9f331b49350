# %% [markdown]
# # 02 · await: waiting for a result is not automatic concurrency
# *await：等待结果，不等于自动并发*
#
# **The question.** A coroutine awaits one request and then another. Does the second start
# while the first is still waiting, and what does the rest of the program do during the wait?
#
# **You will**
# 1. predict, then measure, how long two awaits in a row take;
# 2. find out at which `await` the {term}`event loop` gets control back, and what
#    `await asyncio.sleep(0)` is for;
# 3. measure with a heartbeat what a blocking `time.sleep` inside a coroutine does to the rest of
#    the program;
# 4. find out what asyncio's debug mode, which logs slow callbacks, tells you about a blocking call.
#
# **Needs** chapter 01 (coroutine function, coroutine object, Task) · about 60 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The first cell, folded, imports what the page uses; its
# `figure_style()` only sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import dataclasses
import sys
import time

from lab_snippets.loopwatch import LoopWatch, slow_callback_log
from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## A request that waits
#
# The experiments use one small coroutine in place of a network request. It spends its time
# in `await asyncio.sleep(...)`, which is what a real HTTP call does while the bytes travel:
# the coroutine is suspended and the event loop is free. A `Timeline` writes down when each
# request starts and ends.

# %%
async def fake_request(name: str, seconds: float, tl: Timeline) -> str:
    tl.mark(f"{name} starts")
    with tl.span(name, state="waiting"):
        await asyncio.sleep(seconds)
    tl.mark(f"{name} ends")
    return f"reply to {name}"


# %% [markdown]
# ## Predict: a slow request and a quick one: how long does each pair take, and which ends first?
#
# The cell below runs two requests twice: request A waits 0.2 s, request B 0.1 s. First it
# awaits them one line after the other, inside one coroutine. Then it starts them as two
# Tasks: `asyncio.create_task` wraps a coroutine in a Task and schedules it (chapter 03 is
# about Tasks), and `asyncio.gather` waits for both. Before you run it, write down a row for
# each way: how long the pair takes (0.1 s, 0.2 s or 0.3 s?), and which request ends first.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
A_TIME, B_TIME = 0.2, 0.1
in_a_row, as_tasks = Timeline(), Timeline()

started = time.monotonic()
reply_a = await fake_request("request A", A_TIME, in_a_row)
reply_b = await fake_request("request B", B_TIME, in_a_row)
in_a_row_elapsed = time.monotonic() - started

started = time.monotonic()
task_a = asyncio.create_task(fake_request("request A", A_TIME, as_tasks))
task_b = asyncio.create_task(fake_request("request B", B_TIME, as_tasks))
await asyncio.gather(task_a, task_b)
as_tasks_elapsed = time.monotonic() - started

print(f"{'':20} {'the pair took':>13}   first to end")
for how, tl, elapsed in [("two awaits in a row", in_a_row, in_a_row_elapsed),
                         ("two Tasks + gather", as_tasks, as_tasks_elapsed)]:
    first = "request B" if tl.order("request B ends", "request A ends") else "request A"
    print(f"{how:20} {elapsed:>11.3f} s   {first}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: sequential-awaits-do-not-overlap
assert in_a_row.order("request A starts", "request A ends", "request B starts", "request B ends"), \
    "B starts only after A has ended"
print("✓ in a row, B started only after A had ended")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: two-tasks-overlap
assert as_tasks.order("request A starts", "request B starts", "request B ends", "request A ends"), \
    "B starts while A waits, and the quicker B ends first"
print("✓ as two Tasks, B started while A was still waiting and ended first")

# %% [markdown]
# :::{dropdown} Why
#
# The line after `await x` runs only when `x` has a result; until then this coroutine does
# nothing else. So in a row, B starts only once A has ended, A ends first although it is the
# slower one, and the pair takes the sum of the two waits, 0.3 s. Writing `async` and `await`
# changes *who* may run during the wait, not the order of your own lines.
#
# Overlap needs two pieces of work that the loop can run side by side: two Tasks. While task
# A is suspended at its `await`, the loop has another Task to run, so B starts at once; the
# two waits run side by side, B ends first, after its 0.1 s, and the pair takes as long as
# the longer wait, 0.2 s, not the sum. Compare the two rows' times.
#
# :::
#
# ## Does every `await` hand over control?
#
# In the Tasks row, B ran while A was at its `await`. Does every `await` give the other
# Tasks a turn? Chapter 01 said that `await` on a coroutine object runs its body in the caller
# until the body reaches a real wait. Here that is put to the test, along with a borderline
# case: is a sleep of zero seconds a real wait?
#
# The experiment starts a *bystander* Task that writes three entries in a log, then the
# current coroutine awaits three steps that write theirs. In the first version each step only
# appends to the log. In the second version each step then awaits `asyncio.sleep(0)`, a sleep
# of zero seconds. Predict where the bystander's entries fall in each version's log.

# %%
async def step_a(log: list[str], i: int) -> None:
    log.append(f"step {i}")


async def step_b(log: list[str], i: int) -> None:
    log.append(f"step {i}")
    await asyncio.sleep(0)


async def bystander(log: list[str]) -> None:
    for i in range(3):
        log.append(f"bystander {i}")
        await asyncio.sleep(0)


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def three_steps(step) -> list[str]:
    log: list[str] = []
    other = asyncio.create_task(bystander(log))
    for i in range(3):
        await step(log, i)
    await other
    return log


first_log = await three_steps(step_a)
second_log = await three_steps(step_b)
print("first version (step_a): ", first_log)
print("second version (step_b):", second_log)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: switch-only-where-it-suspends
assert first_log[:3] == ["step 0", "step 1", "step 2"], "no suspension, no turn for the bystander"
assert second_log[:4] == ["step 0", "bystander 0", "step 1", "bystander 1"]
print("✓ the bystander ran only where a step suspended")

# %% [markdown]
# :::{dropdown} Why
#
# The hand-over does not happen at the word `await`: it happens where the awaited code
# *suspends*, giving the loop control: when it waits for something not ready yet, or yields
# on purpose, as `asyncio.sleep(0)` does. Awaiting
# a coroutine that never suspends runs it to the end on the spot, like a plain function call:
# in the first log all three steps come before the bystander's first entry, which ran only at
# `await other`. With `asyncio.sleep(0)` the two alternate: it suspends for exactly one pass
# of the loop. The event loop is *cooperative*: it can only switch where the running
# coroutine suspends.
#
# :::
#
# ## Going further: does `await response.aread()` suspend?
#
# This section applies the rule to a library call, and the slime quote at the end of the
# chapter relies on its answer. That slime helper awaits an HTTP POST with httpx,
# `await client.post(...)`, and then awaits `response.aread()`, which returns the
# response's body. Does the second `await` suspend?
#
# The experiment asks a local server (`LatencyServer`, 50 ms per answer, a 100 kB body)
# twice: once with a plain `client.post`, as slime does, and once with a *streaming* request
# (`client.send(request, stream=True)`). Meanwhile a bystander task, `count_turns`, adds one to
# `counter["turns"]` each time the loop gives it a turn. Predict, for each of the two
# requests: does the bystander get any turns during `aread()`, none or some?

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the bystander that counts its turns"}
import httpx

from lab_snippets.loopback_http import LatencyServer


async def count_turns(counter: dict[str, int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        counter["turns"] += 1
        await asyncio.sleep(0)


# %%
async def post_then_read(client: httpx.AsyncClient, url: str, counter: dict[str, int],
                         stream: bool):
    before = counter["turns"]
    if stream:
        request = client.build_request("POST", url, json={"prompt": "hi"})
        response = await client.send(request, stream=True)
    else:
        response = await client.post(url, json={"prompt": "hi"})
    after_request = counter["turns"]
    body = await response.aread()
    after_read = counter["turns"]
    await response.aclose()
    return {"turns during the request": after_request - before,
            "turns during aread()": after_read - after_request, "body bytes": len(body)}


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
counter, stop = {"turns": 0}, asyncio.Event()
async with LatencyServer(latency=0.05, body=b"x" * 100_000) as server:
    async with httpx.AsyncClient(timeout=5) as client:
        watcher = asyncio.create_task(count_turns(counter, stop))
        try:
            plain = await post_then_read(client, server.url, counter, stream=False)
            streamed = await post_then_read(client, server.url, counter, stream=True)
        finally:
            stop.set()
            await watcher
for kind, turns in [("plain post", plain), ("streaming", streamed)]:
    ran_while_waiting = turns["turns during the request"] > 0
    during_read = "some" if turns["turns during aread()"] else "none"
    print(f"{kind:10}  bystander turns during aread(): {during_read}",
          f"  (it ran while the request waited: {ran_while_waiting})")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: read-after-post-does-not-suspend
assert plain["turns during the request"] > 0 and streamed["turns during the request"] > 0, (
    "waiting for the server gave the bystander turns in both cases")
assert plain["turns during aread()"] == 0, (
    "after a non-streaming post, aread() returned the stored body without suspending")
assert streamed["turns during aread()"] > 0, (
    "a streaming response's aread() read through the connection and suspended")
assert plain["body bytes"] == streamed["body bytes"] == 100_000, "both read the whole body"
print("✓ after a plain post, aread() did not suspend; a streaming one's aread() did")

# %% [markdown]
# :::{dropdown} Why
#
# One fact about httpx decides it. A plain `client.post` (like `requests.post`) returns only
# after the whole body has arrived, and keeps the body on the response. A streaming request
# returns as soon as the response's headers are in, and leaves the body on the connection
# for `aread()` to read.
#
# So the plain version's `aread()` only hands back bytes already stored on the response: it
# gave the bystander no turn at all. The streaming `aread()` still had the body to read
# through the connection, and gave it some. Both requests gave it turns while
# they waited for the server. An `await`
# suspends only when the awaited coroutine reaches a point that yields to the loop: something
# not ready yet, or a deliberate yield such as `asyncio.sleep(0)`.
#
# :::
#
# :::{dropdown} Going further: how many turns the streaming read gives
#
# The page prints only "some" for the streaming row, because the number of turns is not a
# count of waits for the network. httpx's async client reads the connection through anyio, an
# async I/O library that runs on top of asyncio, and each of anyio's reads gives the loop a
# turn, even when the bytes have already arrived.
#
# :::

# %% [markdown]
# ## Measure: what does a `time.sleep` inside a coroutine do to the other tasks?
#
# What if a coroutine calls something that takes its time without any `await`: a
# `time.sleep`, a synchronous HTTP client, a long computation?
#
# To see, we measure the loop's **heartbeat**. `LoopWatch` (in `lab_snippets.loopwatch`)
# runs a small task that sleeps 5 ms, wakes up and writes down the time, over and over. While
# the loop is free, wake-ups come every few milliseconds.
#
# We run two coroutines that both "wait 0.15 s": one with `await asyncio.sleep`, one with
# `time.sleep`. The answer prints the heartbeats inside each wait, then the number of beats in
# the whole run, the longest gap between two of them, and how many gaps were longer than
# 50 ms. Predict how many heartbeats fall inside each wait.

# %%
WAIT = 0.15


async def wait_with_asyncio_sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def wait_with_time_sleep(seconds: float) -> None:
    time.sleep(seconds)


# %% [markdown]
# The folded cell below holds `report_two_waits`, which prints the counts of the answer and
# draws the run on a timeline.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show report_two_waits: the heartbeat counts and the timeline"}
def draw_two_waits(tl: Timeline, watch: LoopWatch) -> None:
    def state_of(span) -> str:  # the colour of a wait comes from the heartbeats measured inside it
        inside = [b for b in watch.beats if tl.t0 + span.start < b < tl.t0 + span.end]
        return "waiting" if inside else "blocked"
    tl.spans[:] = [dataclasses.replace(s, state=state_of(s)) for s in tl.spans]
    watch.add_to(tl, label="event loop heartbeat", threshold=0.05)
    tl.plot("Two waits of 0.15 s and the event loop's heartbeat",
            lanes=["await asyncio.sleep(0.15)", "time.sleep(0.15) in a coroutine", "event loop heartbeat"],
            meanings={"running": "answering its heartbeat on time"})


def report_two_waits(tl: Timeline, watch: LoopWatch) -> None:
    for lane in ["await asyncio.sleep(0.15)", "time.sleep(0.15) in a coroutine"]:
        span = tl.spans_of(lane)[0]
        start, end = tl.t0 + span.start, tl.t0 + span.end
        inside = [beat for beat in watch.beats if start < beat < end]
        print(f"heartbeats during {lane}: {len(inside)}")
    print(f"{len(watch.beats)} beats (a 5 ms sleep between them), longest gap "
          f"{watch.max_gap * 1000:.0f} ms, {len(watch.gaps_over(0.05))} gap(s) over 50 ms")
    draw_two_waits(tl, watch)


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
async with LoopWatch(interval=0.005) as watch:
    with tl.span("await asyncio.sleep(0.15)"):
        await wait_with_asyncio_sleep(WAIT)
    await asyncio.sleep(0.02)
    with tl.span("time.sleep(0.15) in a coroutine"):
        await wait_with_time_sleep(WAIT)
    await asyncio.sleep(0.02)
report_two_waits(tl, watch)  # folded above: beats inside each wait, and the timeline

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: time-sleep-freezes-the-loop
polite = tl.spans_of("await asyncio.sleep(0.15)")[0]
rude = tl.spans_of("time.sleep(0.15) in a coroutine")[0]


def beats_inside(span) -> list[float]:
    return [b for b in watch.beats if tl.t0 + span.start < b < tl.t0 + span.end]


def longest_gap_inside(span) -> float:
    return max((b - a for a, b in zip(watch.beats, watch.beats[1:], strict=False) if a >= tl.t0 + span.start
                and b <= tl.t0 + span.end), default=0.0)


print(f"heartbeats during await asyncio.sleep: {len(beats_inside(polite))}, during time.sleep: "
      f"{len(beats_inside(rude))}")
covering = [(a, b) for a, b in watch.stalls(threshold=0.5 * WAIT)
            if a <= tl.t0 + rude.start and b >= tl.t0 + rude.end]
assert beats_inside(rude) == [], "no other task ran while time.sleep held the loop"
assert len(beats_inside(polite)) >= 5, "the loop kept serving others during the await"
assert len(covering) == 1, "one gap between heartbeats covers the whole time.sleep"
(stall_start, stall_end), = covering
assert longest_gap_inside(polite) <= 0.5 * (stall_end - stall_start)
frozen_segments = [s for s in tl.spans_of("event loop heartbeat") if s.state == "blocked"]
assert any(s.start <= rude.start and s.end >= rude.end for s in frozen_segments)
print("✓ the heartbeat kept beating through the await and stopped for the whole time.sleep")

# %% [markdown]
# :::{dropdown} Why
#
# A blocking call never reaches a suspension point, so the loop cannot run anything else until
# it returns: every other task, every timer, every network callback waits. Compare the two
# heartbeat counts in the answer, and the longest gap in its last line with the 0.15 s of the
# sleep. Both coroutines took the same time; only one let the program live.
#
# In the chart under the answer the heartbeat lane is blue while the loop answers and red
# where the gap between wake-ups is longer than 50 ms. A red stretch runs from the last
# wake-up before the block to the first one after it, so it starts a few milliseconds before
# the `time.sleep` bar and ends just after it. Inside the `await` there are fewer
# than the 30 wake-ups a perfect 5 ms clock would give, because each 5 ms sleep ends a little
# late.
#
# :::
#
# ## Debug mode: which coroutine held the loop?
#
# A heartbeat tells you *that* the loop froze, not what froze it. asyncio has a **debug
# mode** for that: with `loop.set_debug(True)`, the loop logs a warning
# `Executing <Task ...> took N seconds` for work that took longer than
# `loop.slow_callback_duration` (0.1 s by default). You can switch it on for a whole program
# with `PYTHONASYNCIODEBUG=1` or `asyncio.run(main(), debug=True)`.
#
# Here `slow_callback_log` (also in `lab_snippets.loopwatch`) switches debug mode on for a
# block and collects the warnings. Each wait runs in its own Task, created inside the block.
# Debug mode names the Task in its warning, so the warning names our coroutine, not the
# cell's own task.
# Besides the two waits of 0.15 s from the heartbeat experiment, a third coroutine,
# `three_short_blocks`, calls `time.sleep(0.04)` three
# times with an `await asyncio.sleep(0)` between the calls: it holds the thread for 0.12 s in
# all. The threshold is 0.08 s. Predict which of the three debug mode reports.

# %%
async def three_short_blocks() -> None:
    for _ in range(3):
        time.sleep(0.04)
        await asyncio.sleep(0)


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show shorten(), which trims each warning to the coroutine's name"}
import re


def shorten(message: str) -> str:
    """'Executing <Task ... coro=<name() ...> ... took 0.151 seconds'
    becomes 'name took 0.151 seconds'."""
    coroutine = re.search(r"coro=<(\w+)", message)
    name = coroutine.group(1) if coroutine else "<Task ...>"
    return name + " " + message[message.rfind("took"):]


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
with slow_callback_log(threshold=0.08) as warnings_logged:
    await asyncio.create_task(wait_with_asyncio_sleep(WAIT))
    await asyncio.create_task(wait_with_time_sleep(WAIT))
    await asyncio.create_task(three_short_blocks())

for message in warnings_logged:
    print("Executing", shorten(message))  # shorten: keeps the coroutine's name and time

# %% [markdown]
# :::{dropdown} Why
#
# Debug mode times every callback and each *step* of every task, the stretch of code between
# two suspensions, not the coroutine's whole life. So it reports only `wait_with_time_sleep`,
# which spent its 0.15 s inside one step. `wait_with_asyncio_sleep` spent its 0.15 s suspended,
# and each of its steps took a few microseconds. `three_short_blocks` held the loop for 0.12 s,
# but in three steps of 0.04 s, each under the threshold, so debug mode stays silent about it.
# A long `await` costs the loop nothing; a long step between two awaits holds it; and a freeze
# cut into short steps slips under the threshold, which the heartbeat would still show.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert any("wait_with_time_sleep" in m and "took" in m for m in warnings_logged), (
    "debug mode names the blocking coroutine")
assert not any("wait_with_asyncio_sleep" in m for m in warnings_logged), "a suspended coroutine holds nothing"
assert not any("three_short_blocks" in m for m in warnings_logged), "each 0.04 s step is under 0.08 s"
print("✓ debug mode named the coroutine that blocked in one long step, and only that one")

# %% [markdown]
# :::{dropdown} Going further: asking a task where it is waiting
#
# Before Python 3.14 asyncio has no ready-made answer to "which `await` is this task stuck
# at?": `task.get_stack()` returns frames of the task's coroutine, and
# `task.get_coro().cr_await` is the coroutine it awaits, and so on down. Chapter 23 measures
# how much of a stuck request each of them shows.
#
# Python 3.14 adds `asyncio.format_call_graph(task)`, and `python -m asyncio ps PID` /
# `pstree PID` from outside the process: they print the whole chain of awaits a suspended task
# is stuck in, across Tasks too.
#
# :::

# %% tags=["remove-cell"]
async def outer_request(tl: Timeline) -> str:
    return await fake_request("slow request", 0.05, tl)


tl = Timeline()
waiting_task = asyncio.create_task(outer_request(tl), name="request in flight")
await asyncio.sleep(0.01)  # let it start and suspend in the sleep
if sys.version_info >= (3, 14):
    graph = asyncio.format_call_graph(waiting_task)
    print(graph)
    assert "request in flight" in graph
else:
    frames = waiting_task.get_stack()
    print("Python < 3.14 has no format_call_graph; task.get_stack() names:")
    for frame in frames:
        print(f"  {frame.f_code.co_name} at line {frame.f_lineno}")
slow_reply = await waiting_task

# %% tags=["remove-cell"]
assert slow_reply == "reply to slow request"
if sys.version_info < (3, 14):
    assert [frame.f_code.co_name for frame in frames] == ["outer_request"], (
        "get_stack() gives the outermost frame only, not the fake_request inside it")
    print("✓ get_stack() named outer_request only")

# %% [markdown]
# ## Exercise 2.1 · Poll without freezing the loop
#
# Servers often poll for a condition: check, and if it is not true yet, wait a
# little and check again. Implement `wait_until(is_ready, interval, timeout)`:
#
# 1. call `is_ready()` at once; if it returns `True`, return the number of checks made so far;
# 2. otherwise wait `interval` seconds after the check has answered, **without blocking the
#    event loop** (and without spinning), and check again;
# 3. never sleep past the deadline (`timeout` seconds after the start): end the last wait at
#    the deadline, check once more, and raise `TimeoutError` if still not ready;
# 4. let an error from `is_ready()`, or a cancellation, come out at once, leaving no task
#    running (no extra task needed).
#
# The condition usually turns true in *another task*, which a blocking `wait_until` never
# lets run.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (an `interval` shorter or longer than `timeout`; a condition
# that holds at the first check, after a few checks, once another task sets it, or never; an
# `is_ready()` that takes a while to answer, or that raises; a caller that cancels the call; one
# to three callers at once):
#
# **Checks, the loop and spacing**
#
# - **checks**: the first check comes before any wait; a check that sees `True` returns the
#   number of checks made so far at once;
# - **the loop stays free** for the whole call: another task runs every few milliseconds,
#   never frozen for anything like an `interval`;
# - **spacing**: a wait of `interval` after each check has answered, never less (so checks
#   are `interval` plus the time `is_ready()` takes apart, not on a fixed grid), except a
#   last check at the deadline; no spinning;
#
# **Timeout, errors and cancellation**
#
# - **timeout**: `TimeoutError` once `timeout` seconds of real time have passed, not before
#   and not later: not a whole `interval` late when `interval` is longer than `timeout`, and
#   not late when `is_ready()` itself takes time (never sleep past the deadline);
# - **errors**: an exception from `is_ready()` comes out of `wait_until` at once, unchanged;
# - **cancellation**: a caller that cancels the call gets `CancelledError` at once;
#
# **Beside other callers**
#
# - **several callers at once**: each counts its own checks, none holds up another, and no
#   call leaves a task running when it ends.
#
# :::
#
# :::{dropdown} Hint: how to keep the deadline
#
# Fix the deadline once, before the first check, as `time.monotonic()` plus `timeout`; after
# each check, the time left is the deadline minus `time.monotonic()`. When nothing is left,
# raise `TimeoutError`; otherwise sleep the *smaller* of `interval` and the time left, so the
# last sleep ends at the deadline and not an interval after it. Errors and cancellation need
# no code of yours: without a `try`, both come out of `wait_until` unchanged.
#
# :::
#
# The visible test follows the solution.

# %%
class Flag:
    """A condition another task can make true."""

    def __init__(self) -> None:
        self.is_set = False

    def ready(self) -> bool:
        return self.is_set


async def set_after(flag: Flag, seconds: float) -> None:
    await asyncio.sleep(seconds)
    flag.is_set = True


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def wait_until(is_ready, interval: float, timeout: float) -> int:
    """Check `is_ready()` every `interval` seconds until it is true; return how many checks it took.

    Raise TimeoutError if it is still false after `timeout` seconds. Never block the event loop.
    """
    ### BEGIN SOLUTION
    deadline = time.monotonic() + timeout
    checks = 0
    while True:
        checks += 1
        if is_ready():
            return checks
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"not ready after {timeout} s ({checks} checks)")
        await asyncio.sleep(min(interval, left))
    ### END SOLUTION


# %% tags=["tests"]
visible_flag = Flag()
visible_setter = asyncio.create_task(set_after(visible_flag, 0.05))
try:
    visible_checks = await asyncio.wait_for(
        wait_until(visible_flag.ready, 0.01, timeout=1), timeout=2)
finally:
    visible_setter.cancel()
assert visible_flag.is_set, (
    "wait_until returned before another task set the flag: "
    "return only once is_ready() returns True")
assert visible_checks >= 2, (
    "the flag is set after 0.05 s, so checking every 0.01 s takes at least 2 checks; "
    f"got {visible_checks!r}")
visible_at_once = await asyncio.wait_for(
    wait_until(lambda: True, 0.01, timeout=1), timeout=2)
assert visible_at_once == 1, (
    "a condition that already holds is seen at the first check: 1 expected, "
    f"got {visible_at_once!r}")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
class _Runaway(Exception):
    """Raised by the probe when a poller checks far more often than its interval allows."""


class _Probe:
    """A readiness check that records the order of events and stops a runaway poller."""

    def __init__(self, max_checks: int) -> None:
        self.events: list[str] = []
        self.flag = Flag()
        self.max_checks = max_checks
        self.checks = 0

    def ready(self) -> bool:
        self.checks += 1
        self.events.append("checked")
        if self.checks > self.max_checks:
            raise _Runaway(self.checks)
        return self.flag.is_set

    async def set_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        self.events.append("another task set the flag")
        self.flag.is_set = True


async def _stop(task: asyncio.Task) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


# 1. The loop stays free while polling: the longest heartbeat gap during the call stays well
#    under the interval (a `time.sleep(interval)` freezes the loop for an interval at every wait,
#    even if an `await asyncio.sleep(0)` follows it).
from lab_snippets.measure import ReferenceWait as _ReferenceWait

_probe = _Probe(max_checks=100)
_setter = asyncio.create_task(_probe.set_after(0.45))
_outcome: object = None
try:
    _frozen = _ReferenceWait(0.7 * 0.2)  # a plain wait of 0.14 s beside the call (long woken when read)
    async with LoopWatch(interval=0.005) as _watch:
        try:
            async with asyncio.timeout(3):
                _outcome = await wait_until(_probe.ready, 0.2, timeout=1.0)
        except (_Runaway, TimeoutError) as exc:
            _outcome = exc
    _gap_during_call = _watch.max_gap  # read after the exit, which waits for one more beat
finally:
    await _stop(_setter)
assert not isinstance(_outcome, _Runaway), (
    f"wait_until checked {_probe.checks} times in about 0.45 s with a 0.2 s interval: wait `interval` "
    "seconds between checks with `await asyncio.sleep(interval)`, do not spin (chapter 02)")
assert _gap_during_call < _frozen.seconds, (
    f"the event loop was blocked while wait_until waited: no other task ran for {_gap_during_call:.3f} s "
    "at a stretch, with a 0.2 s interval. Wait with `await asyncio.sleep(interval)`, never `time.sleep` "
    "(chapter 02)")
assert _outcome == _probe.checks, (
    f"wait_until returned {_outcome!r}, but the condition was checked {_probe.checks} times: "
    "return the number of checks (chapter 02)")

# 2. The flag is set by another task: only a poller that frees the loop can see it.
_probe = _Probe(max_checks=60)
_setter = asyncio.create_task(_probe.set_after(0.06))
try:
    async with asyncio.timeout(3):
        _n = await wait_until(_probe.ready, 0.01, timeout=1.0)
    _probe.events.append("wait_until returned")
finally:
    await _stop(_setter)
assert _probe.events[-3:] == ["another task set the flag", "checked", "wait_until returned"], (
    "wait_until must return at the first check after another task made the condition true (chapter 02)")
assert _n == _probe.checks and 2 <= _n <= 30, (
    f"wait_until returned {_n} after {_probe.checks} checks, every 10 ms for about 60 ms: "
    "return the number of checks (chapter 02)")

# 3. Never ready: TimeoutError, after a number of checks that matches interval and timeout.
_probe = _Probe(max_checks=40)
try:
    async with asyncio.timeout(3):
        _result = await wait_until(_probe.ready, 0.02, timeout=0.1)
except TimeoutError as exc:
    _result = exc
except _Runaway:
    raise AssertionError(
        f"still polling after {_probe.checks} checks of a 0.1 s timeout every 0.02 s: fix the deadline "
        "once, before the loop; a deadline restarted on every wake-up never comes (chapter 02)") from None
assert isinstance(_result, TimeoutError), (
    f"wait_until returned {_result!r}: it must raise TimeoutError when the condition never holds "
    "(chapter 02)")
# bound-not-claim: a count of checks in a fixed time, not a time: a sleep never ends early, so a busy
# machine only lowers it; the bound catches a poller that does not sleep its interval
assert _probe.checks <= 12, (
    f"{_probe.checks} checks before TimeoutError, for a 0.1 s timeout every 0.02 s: about timeout / "
    "interval checks expected (chapter 02)")

# 4. Already ready: the first check comes before the first sleep (no other task runs before it).
_probe = _Probe(max_checks=60)
_probe.flag.is_set = True


async def _other_task() -> None:
    _probe.events.append("another task ran")


_witness = asyncio.create_task(_other_task())
try:
    async with asyncio.timeout(3):
        _n = await wait_until(_probe.ready, 0.05, timeout=1.0)
finally:
    await _stop(_witness)
assert _probe.events[0] == "checked" and _n == 1, (
    "a condition that already holds must be seen at once: check before the first sleep, and "
    "return 1 (chapter 02)")


# 5. The deadline is real time, and never slept past. An interval longer than the timeout must
#    not push TimeoutError to a whole interval later; nor may a check that takes time (a
#    blocking probe) when the elapsed time is counted as the sum of the requested sleeps.
async def _time_to_timeout(is_ready, interval: float, timeout: float) -> float:
    start = time.monotonic()
    try:
        async with asyncio.timeout(5):
            got = await wait_until(is_ready, interval, timeout=timeout)
    except TimeoutError:
        return time.monotonic() - start
    raise AssertionError(f"wait_until returned {got!r} for a condition that never holds: it must raise "
                         "TimeoutError (chapter 02)")


_limit = _ReferenceWait(0.3)  # a plain wait of 0.3 s, started beside the call
_late = await _time_to_timeout(lambda: False, 0.6, timeout=0.1)
assert _late < _limit.seconds, (
    f"raise TimeoutError once `timeout` has passed: a 0.1 s timeout with a 0.6 s interval raised after "
    f"{_late:.2f} s. Never sleep past the deadline: wait min(interval, time left) (chapter 02)")


def _slow_check() -> bool:
    time.sleep(0.03)  # a probe that takes 30 ms to answer
    return False


_limit = _ReferenceWait(0.6)
_late = await _time_to_timeout(_slow_check, 0.01, timeout=0.3)
assert _late < _limit.seconds, (
    f"raise TimeoutError once `timeout` has passed in real time: checks that take 30 ms, every 0.01 s, "
    f"with a 0.3 s timeout raised after {_late:.2f} s. Measure the time with time.monotonic(), "
    "not by adding up the sleeps you asked for (chapter 02)")

# Generated scenarios (issue 37): the same callers through wait_until and the reference, on
# virtual time (lab_snippets.scenarios explains the pattern). While a scenario's loop runs,
# time.monotonic, perf_counter and time read its virtual clock, in its thread only, and
# time.sleep moves that clock on without letting any task run: a blocking sleep freezes the
# loop for as long as it would on a real clock, and a deadline counted in real time is exact.
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "wait_until")
_REAL = {_name: getattr(time, _name) for _name in ("monotonic", "perf_counter", "time", "sleep")}


class _ProbeFailed(Exception):
    """What a stand-in is_ready() that fails raises."""


def _scenario_loop():
    """The running virtual loop of this thread, unless the caller is the virtual loop's own code."""
    loop = asyncio._get_running_loop()
    if isinstance(loop, _sc.VirtualTimeLoop) and sys._getframe(2).f_globals.get("__name__") != _sc.__name__:
        return loop
    return None


def _virtual_clock(name: str):
    real = _REAL[name]

    def read() -> float:
        loop = _scenario_loop()
        return real() if loop is None else 1000.0 + loop.time()
    return read


def _virtual_sleep(seconds: float) -> None:
    loop = _scenario_loop()
    if loop is None:
        return _REAL["sleep"](seconds)
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    loop._virtual_now[0] += seconds  # the loop is blocked: no task runs while the clock moves on


@_dc.dataclass(frozen=True)
class _Scenario:
    interval: float
    timeout: float
    ready_check: int | None = None   # is_ready() is true from this check on
    set_at: float | None = None      # another task sets the flag then
    raise_check: int | None = None   # is_ready() raises _ProbeFailed at this check
    cost: float = 0                  # seconds each is_ready() blocks before it answers
    cancel_at: float | None = None
    callers: int = 1

    def describe(self) -> str:
        who, cancel = _sc.callers_phrase(self.callers, self.cancel_at)
        if self.raise_check is not None:
            cond = f"raises _ProbeFailed at check {self.raise_check}"
        elif self.ready_check is not None:
            cond = f"is True from check {self.ready_check} on"
        elif self.set_at is not None:
            cond = f"is True once another task sets the flag at {_sc.fmt(self.set_at)}"
        else:
            cond = "is never True"
        slow = f"takes {_sc.fmt(self.cost)} (blocking) to answer and " if self.cost else ""
        return (f"{who} calls wait_until(is_ready, interval={self.interval:g}, timeout={self.timeout:g})"
                f"{cancel}; is_ready() {slow}{cond}")


@_st.composite
def _scenarios(draw):
    # Checks fall at multiples of half a second (plus 0.1 s a check when is_ready takes time), the
    # flag is set at a quarter past, the deadline at three quarters past, a cancel at 0.4 past: no
    # outcome hangs on two events at one instant.
    interval = draw(_st.sampled_from([1, 0.5, 2, 3]))
    timeout = draw(_st.sampled_from([2.75, 0.75, 4.75, 7.75]))
    how = draw(_st.sampled_from(["check", "set", "never", "raises"]))
    n = draw(_st.integers(1, 6))
    callers = draw(_st.sampled_from([1, 1, 2, 3]))
    if callers == 1 and how in ("check", "never") and draw(_st.booleans()):
        # a slow is_ready: checks drift by its time, so the deadline is what is graded
        return _Scenario(interval, 7.75 if how == "check" else timeout,
                         ready_check=min(n, 2) if how == "check" else None, cost=0.1)
    return _Scenario(interval, timeout, ready_check=n if how == "check" else None,
                     set_at=draw(_st.sampled_from([1.25, 0.25, 2.25, 3.25, 5.25])) if how == "set" else None,
                     raise_check=n if how == "raises" else None,
                     cancel_at=draw(_st.sampled_from([None, None, 0.4, 1.4, 3.4])), callers=callers)


class _Stand:
    """The is_ready() of one caller: notes the time of each check; may block, raise, or hold."""

    def __init__(self, s: _Scenario, flag: list, loop) -> None:
        self.s, self.flag, self.loop, self.checks = s, flag, loop, []

    def ready(self) -> bool:
        self.checks.append(self.loop.time())
        self.loop._virtual_now[0] += self.s.cost
        n = len(self.checks)
        if self.s.raise_check == n:
            raise _ProbeFailed(f"check {n} failed")
        return n >= self.s.ready_check if self.s.ready_check is not None else self.flag[0]


def _observe(fn, s: _Scenario) -> dict:
    async def main() -> dict:
        loop, flag, gap = asyncio.get_running_loop(), [False], [0.0]

        async def beat() -> None:  # another task on the loop: the longest it waited for its turn
            while True:
                before = loop.time()
                await asyncio.sleep(0.05)
                gap[0] = max(gap[0], loop.time() - before - 0.05)

        async def setter() -> None:
            await asyncio.sleep(s.set_at)
            flag[0] = True

        async def one() -> dict:
            stand = _Stand(s, flag, loop)
            seen = await _sc.call_once(lambda: fn(stand.ready, s.interval, s.timeout), _sc.Recorder(),
                                       s.cancel_at, limit=60)
            return {**seen, "checks": stand.checks}

        helpers = [asyncio.create_task(beat())]
        if s.set_at is not None:
            helpers.append(asyncio.create_task(setter()))
        try:
            return {"callers": await asyncio.gather(*(one() for _ in range(s.callers))), "gap": gap[0]}
        finally:
            for helper in helpers:
                helper.cancel()

    run = _sc.run_virtual(main, limit=120)
    if run.value is None:
        what = "spun without ever letting time pass" if run.spinning else f"failed: {run.error!r}"
        return {"broken": f"wait_until {what}"}
    return run.value


def _spacing(me: dict, s: _Scenario) -> str | None:
    checks = me["checks"]
    if not checks or checks[0] > 0:
        first = f"at {_sc.fmt(checks[0])}" if checks else "never"
        return (f"the first check came {first}, not at once: call is_ready() before the first wait, "
                "it may already hold")
    for a, b in zip(checks, checks[1:], strict=False):
        answered = a + s.cost  # is_ready() blocks for s.cost: the wait starts when it has answered
        if b - answered < min(s.interval, s.timeout - answered) - 1e-6:
            return (f"checked again {_sc.fmt(round(b - answered, 6))} after the check at {_sc.fmt(a)} had "
                    f"answered, before the {_sc.fmt(s.interval)} interval had passed: wait `interval` after "
                    "each check, not until a fixed grid's next point (only the deadline may come sooner)")
        if b - a > s.interval + s.cost + 1e-6:
            return (f"waited {_sc.fmt(round(b - a, 6))} between the checks at {_sc.fmt(a)} and {_sc.fmt(b)}, "
                    f"more than the {_sc.fmt(s.interval)} interval: check again once `interval` has passed")
    return None


def _outcome(me: dict, it: dict, s: _Scenario) -> str | None:
    allowed = {it["kind"]}
    if it["kind"] in ("returned", "raised _ProbeFailed") and it["checks"][-1] >= s.timeout - 1e-6:
        allowed.add("raised TimeoutError")  # decided at a last check, at the deadline: one it need not make
    if me["kind"] in allowed:
        return None
    if it["kind"] == "cancelled":
        return (f"the caller cancelled wait_until at {_sc.fmt(s.cancel_at)}, but it {me['kind']}: let the "
                "CancelledError through at once")
    if it["kind"] == "raised _ProbeFailed":
        return (f"is_ready() raised _ProbeFailed at check {s.raise_check}, but wait_until {me['kind']}: an "
                "error from is_ready() must come out of wait_until at once, unchanged")
    if it["kind"] == "returned":
        return (f"the condition held at check {it['value']} ({_sc.fmt(it['at'])}), before the timeout, but "
                f"wait_until {me['kind']}")
    return (f"wait_until {me['kind']} where it must have {it['kind']} (the condition never held before the "
            f"{_sc.fmt(s.timeout)} timeout)")


def _ending(me: dict, it: dict, s: _Scenario) -> str | None:
    at, checks = me["at"], me["checks"]
    if me["kind"] == "returned":
        if me["value"] != len(checks):
            return f"returned {me['value']!r} after {len(checks)} checks: return the number of checks made"
        if at > checks[-1] + s.cost + 1e-6:
            return (f"returned at {_sc.fmt(at)}, though the check at {_sc.fmt(checks[-1])} saw True: return "
                    "at once")
        if it["kind"] == "returned" and not s.cost and me["value"] != it["value"]:
            return f"returned {me['value']!r}: the condition first held at check {it['value']}"
    if me["kind"] == "raised TimeoutError" and at < s.timeout - 1e-6:
        return (f"raised TimeoutError at {_sc.fmt(at)}, before the {_sc.fmt(s.timeout)} timeout had passed: "
                "keep checking until the deadline")
    if me["kind"] == "raised TimeoutError" and at > s.timeout + s.cost + 1e-6:
        return (f"raised TimeoutError at {_sc.fmt(at)}, after the {_sc.fmt(s.timeout)} timeout: never sleep "
                "past the deadline; wait min(interval, time left), the time measured with time.monotonic()")
    if me["kind"] in ("cancelled", "raised _ProbeFailed") and at > it["at"] + 1e-6:
        return f"wait_until {me['kind']} at {_sc.fmt(at)}, not at once (at {_sc.fmt(it['at'])})"
    if me["left"]:
        return f"{me['left']} task(s) left running when wait_until ended ({me['kind']})"
    return None


def _compare(mine: dict, ref: dict, s: _Scenario) -> str | None:
    if "broken" in mine:
        return mine["broken"]
    if mine["gap"] > ref["gap"] + 0.05 + 1e-6:
        return (f"the event loop was blocked for {_sc.fmt(round(mine['gap'], 6))} at a stretch while wait_until "
                "ran: wait with `await asyncio.sleep`, never `time.sleep`")
    for k, (me, it) in enumerate(zip(mine["callers"], ref["callers"], strict=True)):
        problem = _spacing(me, s) or _outcome(me, it, s) or _ending(me, it, s)
        if problem:
            return f"caller {k}: {problem}" if s.callers > 1 else problem
    return None


for _name in ("monotonic", "perf_counter", "time"):
    setattr(time, _name, _virtual_clock(_name))
time.sleep = _virtual_sleep
try:
    _sc.differential(wait_until, _reference, _scenarios(), _observe, _compare, what="wait_until",
                     examples=60, hint="chapter 02")
finally:
    for _name, _real in _REAL.items():
        setattr(time, _name, _real)
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - The line after `await x` runs only when `x` has a result; two awaits in a row run one after
#   the other and take the sum of their times.
# - Control passes to other tasks only where the awaited thing really suspends;
#   `await asyncio.sleep(0)` is the smallest hand-over. Awaiting a coroutine that never
#   suspends gives nobody else a turn.
# - A blocking call inside a coroutine (`time.sleep`, a synchronous client, heavy computation)
#   freezes every task on the loop. A heartbeat measures the freeze; debug mode
#   (`PYTHONASYNCIODEBUG=1`, `slow_callback_duration`) names the coroutine that caused it.
# - Overlap comes from several Tasks, not from the word `await`.
#
# **What's next.** Chapter 03 creates those Tasks: `create_task`, `gather` and `TaskGroup`,
# and what happens to a Task nobody keeps a reference to.
#
# ## In slime
#
# The default rollout sends its requests to an SGLang server through one small coroutine in its
# HTTP helpers, `_post` (quoted below). While one request waits for the server, the loop runs
# the other samples' requests: slime's throughput comes from the many Tasks that call this
# coroutine at the same time (chapters 03 and 04), not from the awaits inside it. The
# [source inventory](../book/reference/inventory.md) lists every `time.sleep` in slime; each one
# is worth a look: is it on a thread of its own, or inside a coroutine?

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("02")

# %% [markdown]
# The Megatron teacher server polls the way Exercise 2.1 asks in one respect:
# `_wait_until_idle` (the next quote) waits with `await asyncio.sleep(0.1)`, so the loop stays
# free. It misses another: it does not end its last sleep at the deadline (Exercise 2.1's
# third rule). Below is a
# model of it, written for this page, with a query that takes 0.01 s and answers "busy", and
# `timeout_s = 0.05`. Read its loop: where does it check the deadline, and how long does it
# sleep?
#
# Predict: how late does the `TimeoutError` come: about when, after its 0.05 s deadline?

# %%
async def poll_like_the_teacher_server(query, timeout_s: float,
                                       every: float = 0.1) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if await query():
            return
        if time.monotonic() >= deadline:
            raise TimeoutError
        await asyncio.sleep(every)


async def busy() -> bool:  # a query that takes 0.01 s and answers "busy"
    await asyncio.sleep(0.01)
    return False


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the stopwatch around the run"}
MARK = {"seconds": 0.1, "fired": False}  # for the check: a timer at deadline + half a sleep


async def time_the_raise(poller) -> float:
    """Seconds from the start until `poller` raises TimeoutError (bounded by 2 s). Also
    records whether a timer set for MARK["seconds"] had already fired by then."""
    late_mark = asyncio.create_task(asyncio.sleep(MARK["seconds"]))
    start = time.monotonic()
    try:
        await asyncio.wait_for(poller, timeout=2)
    except TimeoutError:
        raised_after, passed = time.monotonic() - start, late_mark.done()
    finally:
        late_mark.cancel()
        await asyncio.gather(late_mark, return_exceptions=True)
    MARK["fired"] = passed
    return raised_after


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
TIMEOUT_S, EVERY = 0.05, 0.1
poller = poll_like_the_teacher_server(busy, TIMEOUT_S, EVERY)
# time_the_raise (folded above): seconds until the TimeoutError, bounded by 2 s
raised_after = await time_the_raise(poller)
print(f"deadline at {TIMEOUT_S:.2f} s, TimeoutError at {raised_after:.2f} s")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: teacher-poller-overshoots-its-deadline
assert MARK["seconds"] == TIMEOUT_S + EVERY / 2
assert MARK["fired"], (
    "the whole 0.1 s sleep after a check before the deadline carries the TimeoutError past "
    "timeout_s + half a sleep")
print(f"✓ the TimeoutError was raised {raised_after - TIMEOUT_S:.2f} s after its deadline",
      f"(more than half a {EVERY} s sleep late)")

# %% [markdown]
# :::{dropdown} Why
#
# The `TimeoutError` came after a query, the whole 0.1 s sleep, and a query. The check at
# 0.01 s comes before the deadline. So the poller sleeps its whole 0.1 s and queries again
# before it finds the deadline passed, and its `TimeoutError` comes up to one sleep and one
# query late, which Exercise 2.1's grader fails. In slime a weight-update request's
# `timeout_s` is overshot the same way, by up to one 0.1 s sleep and one query. The server's
# `update_from_disk` handler, which called the poller, catches that `TimeoutError` and answers
# the client that asked for the update with HTTP status 503, "service unavailable". One more
# difference: slime's deadline is on `time.time()`, the wall clock, which a clock change
# would move; the model reads `time.monotonic()`.
#
# :::

# %% tags=["remove-input"]
show_call_site("02b")
