# %% [markdown]
# # 24 · CPU-bound work inside an async service
# *异步服务里的 CPU 密集型工作*
#
# **The question.** A rollout service scores responses and tokenizes prompts: pure-Python CPU
# work, called from coroutines. What does that work do to the event loop, what do
# `asyncio.to_thread` and a process pool through `loop.run_in_executor` change, and what does
# each cost?
#
# **You will**
# 1. measure the event loop's heartbeat while scoring runs on the loop, for a small text and a
#    large one;
# 2. move the work to a thread and measure what changes for the loop and for the work;
# 3. move it to a process pool and measure what a call costs beyond the work (pickling, pipes),
#    to find when a process pool pays off;
# 4. find out whether a `SIGALRM` timeout around scoring survives the move to a thread;
# 5. route each piece of work to the loop or to a process pool by its size.
#
# **Needs** chapters 08 (thread pools, the heartbeat) and 12 (process pools, the GIL) · about
# 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. In the first cell, `figure_style()` only sets how the plots look.
#
# **Timings.** Every time on this page is the best of a few interleaved runs. A busy machine
# changes the numbers, not the conclusions; where it could change what you see, a fold next to
# the answer prints the machine's load average and says what the load changes.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context

# CountingExecutor: for the exercise's hidden test, which counts the calls that reach the pool
from lab_snippets.cpu_work import CountingExecutor, payload_size, score, timed_score
from lab_snippets.loopwatch import LoopWatch, borrowed_default_executor
from lab_snippets.proc_workers import burn
from lab_snippets.timeline import Timeline, figure_style

figure_style()
SMALL, LARGE = "a" * 10_000, "a" * 40_000  # scoring LARGE costs four times SMALL

# %% [markdown]
# `score(text)` (in `lab_snippets.cpu_work`, its source in the fold) stands for a rule-based
# reward or a tokenizer: a pure-Python loop over the text, so its cost grows with the text; it
# returns the pid of the process that ran it. A coroutine can call it directly or hand it to a
# thread:

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show the source of score"}
from lab_snippets.showcode import show_source

show_source(score)


# %%
async def score_on_loop(text: str) -> tuple[int, int]:
    return score(text)  # the coroutine calls the scorer directly


async def score_in_thread(text: str) -> tuple[int, int]:
    return await asyncio.to_thread(score, text)


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helper that measures the loop's longest silence"}
async def max_gap_while(runner, text: str) -> tuple[float, float]:
    """(longest heartbeat gap, duration of the work) while `runner(text)` runs."""
    with borrowed_default_executor():  # to_thread's pool, shut down after (chapter 08)
        async with LoopWatch(interval=0.002) as watch:
            start = time.monotonic()
            await asyncio.wait_for(runner(text), timeout=30)
            took = time.monotonic() - start
    return watch.max_gap, took


# %% [markdown]
# `max_gap_while(runner, text)` (folded above) awaits `runner(text)` under a `LoopWatch`
# (chapter 02: a task that wakes every 2 ms) and returns the loop's longest silence with the
# time the work took.
#
# ## Predict: how long is the loop silent while a coroutine scores?
#
# A coroutine scores a text directly, as `async def` reward functions often do. We score a text
# and then one four times as long. How long is the loop's longest silence each time, compared
# with the time the scoring took?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
runner = score_on_loop
measured = {"small": [], "large": []}
for _ in range(3):  # interleaved, best of three
    for label, text in (("small", SMALL), ("large", LARGE)):
        measured[label].append(await max_gap_while(runner, text))
(gap_small, took_small) = min(measured["small"])
(gap_large, took_large) = min(measured["large"])
print(f"small text: longest gap {gap_small * 1000:.0f} ms",
      f"for {took_small * 1000:.0f} ms of scoring")
print(f"large text: longest gap {gap_large * 1000:.0f} ms",
      f"for {took_large * 1000:.0f} ms of scoring")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: loop-gap-grows-with-work
assert gap_small >= 0.8 * took_small and gap_large >= 0.8 * took_large, (
    "the loop was silent for the whole work")
assert gap_large >= 2 * gap_small, "four times the work, a much longer silence"
print("✓ the loop was silent for the whole scoring, and four times the work silenced it longer")

# %% [markdown]
# :::{dropdown} Why
#
# A coroutine runs until its next `await`, and `score` has none: the loop was silent for the
# whole scoring, and the silence grows with the text. The gap can come out a little longer than
# the scoring, because it also holds the wait for the heartbeat's next 2 ms wake-up. In a service, every request,
# heartbeat and timeout on that loop waits that long, once per sample scored.
#
# :::
#
# ## `to_thread`: does the loop answer, and is the work faster?
#
# `asyncio.to_thread(score, text)` runs the call in the loop's default thread pool and awaits
# its result. `burn(300)` (chapter 12) is the same kind of pure-Python loop, 300 rounds of
# 2,000 steps; it returns the CPU time its own thread used (`time.thread_time()`) and its pid.
# Predict: with the scoring in a thread, is the loop's longest silence still the whole scoring?
# And do two calls in two threads take the wall time of one call's CPU, or of both added up?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
gap_thread, took_thread = min(
    [await max_gap_while(score_in_thread, LARGE) for _ in range(2)])
print(f"in a thread: longest gap {gap_thread * 1000:.0f} ms",
      f"during {took_thread * 1000:.0f} ms of scoring",
      f"(switch interval {sys.getswitchinterval() * 1000:.0f} ms)")

loop = asyncio.get_running_loop()
with ThreadPoolExecutor(2, thread_name_prefix="scorer") as two_threads:
    start = time.monotonic()
    reports = await asyncio.gather(
        *(loop.run_in_executor(two_threads, burn, 300) for _ in range(2)))
    wall = time.monotonic() - start
cpu_sum = sum(r["cpu"] for r in reports)
print(f"two calls in two threads: {wall * 1000:.0f} ms of wall time",
      f"for {cpu_sum * 1000:.0f} ms of CPU")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: thread-frees-the-loop-not-the-cpu
assert gap_thread < 0.5 * took_thread, "the loop answered while the thread scored"
gil = getattr(sys, "_is_gil_enabled", lambda: True)()
if gil:
    assert wall >= 0.9 * cpu_sum, "with the GIL, two threads' CPU time adds up: no parallelism"
    print("✓ the loop answered during the thread's work; two threads' CPU times added up")
else:
    print("free-threaded build without the GIL: the two threads may run at the same time")

# %% [markdown]
# :::{dropdown} Why
#
# Pure-Python code holds the GIL (the interpreter's global lock, on the usual build) while it
# runs, and the interpreter asks the running thread to let go of it every
# `sys.getswitchinterval()` seconds (5 ms by default): a thread that wants the GIL waits one
# interval, then asks the holder to drop it. So the loop's thread gets turns, and its longest
# silence is a part of the work, not all of it (compare the printed gap with the scoring's time).
# The printed gap is a few intervals, not one, because one heartbeat needs the GIL twice: to
# come back from its wait on the selector, and again after the loop's next pass, which polls the
# selector once more (with a timeout of 0, but the poll still releases the GIL) before the step
# that records the heartbeat runs. Each time the scoring thread may hold it for up to an interval.
#
# Is the work faster? No. The scoring is the same Python code under the same GIL, so in a thread
# it needs the same CPU time as on the loop: compare the first line's scoring time with the
# large text's in the first section. They come out about equal, either one a few milliseconds
# shorter, since they were measured at different moments. A thread can only make it slower:
# each time the loop's thread takes its turn the scoring stops, and each handover of the GIL
# waits for the operating system to wake the other thread, a wait that grows when the machine
# is busy.
#
# The same turns explain the second line: two calls in two threads took at least as long as
# their CPU times added up. The wall time can be well over that sum, because it also counts the moments when
# neither of them ran: while the GIL passed between them and the loop's thread, or while other
# processes had the CPUs. `to_thread` moves the *waiting* off the loop; it does not add CPU. For
# throughput, scoring needs other processes.
#
# And the loop's turns are short and seldom: each time the loop wants to run, it first waits
# for the GIL, up to a switch interval; the three-ways figure further down shows it.
#
# :::
#
# :::{dropdown} Going further: free-threaded builds
#
# Python 3.13 and 3.14 also come as a separate "free-threaded" build
# (`python3.13t`, PEP 703) that can run without the GIL; `sys._is_gil_enabled()` (3.13+) tells
# which you have. There, threads run Python code in parallel and `to_thread` does add CPU. This
# course runs on the usual builds; on a free-threaded one the check above skips its comparison
# of the two threads' times.
#
# :::
#
# ## A process pool: how much parallelism, and at what price per call?
#
# `loop.run_in_executor(pool, score, text)` with a `ProcessPoolExecutor` sends the call to
# another process and awaits its result there. We use a spawn-based pool of two workers (spawn,
# because forking a process that has threads is unsafe) and warm it up first.

# %%
process_pool = ProcessPoolExecutor(2, mp_context=get_context("spawn"))


async def score_in_pool(text: str) -> tuple[int, int]:
    return await loop.run_in_executor(process_pool, score, text)


# %% tags=["remove-cell"]
# Warm the pool up (both workers started). two_calls: used only by a later cell, which the page
# does not show either (the exercise's grading runs both).
await asyncio.wait_for(asyncio.gather(*(score_in_pool("warm") for _ in range(2))), timeout=30)


async def two_calls(pool) -> tuple[float, float, set]:
    """Two burn(300) calls at once in `pool`: (wall time, their CPU times summed, their pids)."""
    start = time.monotonic()
    reports = await asyncio.wait_for(asyncio.gather(
        *(loop.run_in_executor(pool, burn, 300) for _ in range(2))), timeout=60)
    return time.monotonic() - start, sum(r["cpu"] for r in reports), {r["pid"] for r in reports}


# %% [markdown]
# First the parallelism. Two `burn(1200)` calls (four times the `to_thread` section's) run at
# once, first in two threads, then in two processes, each process pinned to a CPU of its own as
# in chapter 12. Predict, for a machine with two idle CPUs: how many CPUs does each pair keep
# busy on average, and are its two calls ever executing at the same instant?
#
# For each pair the answer prints the share of the time during which **both** calls were
# executing (each `burn` notes when it was executing) and the CPUs the pair kept busy.

# %% tags=["remove-cell", "needs-cores"]
# Not shown: a first, plain run of CPU seconds per second (the exercise's grading runs this cell
# as set-up, so it stays as it was). The table the page shows comes from the next cells.
cpu_per_second = {"two threads": [], "two processes": []}
with ThreadPoolExecutor(2, thread_name_prefix="scorer") as two_threads:
    for _ in range(3):  # interleaved, best of three
        for label, pool in (("two threads", two_threads),
                            ("two processes", process_pool)):
            wall_2, cpu_2, pids = await two_calls(pool)
            cpu_per_second[label].append(cpu_2 / wall_2)
for label, values in cpu_per_second.items():
    print(f"{label:<14} {max(values):.2f} CPU seconds per second of wall time")
load = os.getloadavg()[0]
print(f"load average of this machine meanwhile: {load:.1f} on {os.cpu_count()} CPUs")

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers: CPU pinning, a pool of their own, two calls timed"}
from threading import Thread

# chapter 12's instruments
from lab_snippets.proc_workers import RUN_GAP, overlap_seconds, pid_after

CHUNKS = 1200  # each call: burn(1200)
# pins: on Linux, burn(chunks, cpu) first pins its process to that CPU, so that the two
# processes cannot share one core, as in chapter 12 (None: no pinning).
CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
pins = CPUS[:2] if len(CPUS) >= 2 and hasattr(os, "sched_setaffinity") else [None, None]


async def both_at_once(pool, cpus=(None, None)) -> dict:
    """Two burn(CHUNKS) calls at once in `pool`, the n-th pinned to cpus[n]. Over
    their span (the first call's start to the last one's end): the share during which
    both were executing, each one's share, their CPU seconds per second, whether the
    shared time is within the clock's sampling (one RUN_GAP per running interval), and
    their pids."""
    reports = await asyncio.wait_for(asyncio.gather(
        *(loop.run_in_executor(pool, burn, CHUNKS, cpu) for cpu in cpus)), timeout=60)
    span = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    together = overlap_seconds(reports[0]["intervals"], reports[1]["intervals"])
    resolution = RUN_GAP * sum(len(r["intervals"]) for r in reports)
    each = [sum(end - start for start, end in r["intervals"]) / span for r in reports]
    return {"both": together / span, "cpu": sum(r["cpu"] for r in reports) / span,
            "each": each, "within sampling": together <= resolution,
            "pids": {r["pid"] for r in reports}}


def what_this_run_saw(pair: dict) -> str:
    """What this run let the pinned processes do, in one line: their own shares, no verdict."""
    first, second = pair["each"]
    if len(CPUS) < 2:
        return "→ this run: one CPU only, so the processes too could only take turns"
    return (f"→ this run: the two processes were executing {first:.0%} and {second:.0%} of "
            f"the time (waiting for their CPUs the rest), both at once {pair['both']:.0%}")


def shut_down_within(pool, seconds: float = 10) -> bool:
    """pool.shutdown(), waiting at most `seconds` for its workers to end; True if so."""
    closer = Thread(target=pool.shutdown, kwargs={"cancel_futures": True}, daemon=True)
    closer.start()
    closer.join(timeout=seconds)
    return not closer.is_alive()


async def compare_threads_and_processes() -> dict[str, list[dict]]:
    """Two threads and two pinned processes, interleaved, three times each. The
    processes are a pool of their own, so that pinning leaves `process_pool` alone."""
    runs = {"two threads": [], "two processes": []}
    pinned_pool = ProcessPoolExecutor(2, mp_context=get_context("spawn"))
    try:  # both workers started first, so that their start-up is not timed
        warm_up = (loop.run_in_executor(pinned_pool, pid_after, 0.1) for _ in range(2))
        await asyncio.wait_for(asyncio.gather(*warm_up), timeout=30)
        with ThreadPoolExecutor(2, thread_name_prefix="scorer") as threads:
            for _ in range(3):
                runs["two threads"].append(await both_at_once(threads))
                runs["two processes"].append(await both_at_once(pinned_pool, pins))
    finally:
        assert shut_down_within(pinned_pool), "the pinned pool's workers did not end"
    return runs


# %% tags=["hide-output", "needs-cores"] mystnb={"code_prompt_show": "Show the answer"}
side_by_side = await compare_threads_and_processes()  # folded: 3 rounds each
best_pair = max(side_by_side["two processes"], key=lambda r: r["both"])
for kind, runs in side_by_side.items():
    both = max(r["both"] for r in runs)  # best of three
    cpu = max(r["cpu"] for r in runs)
    print(f"{kind:<14} both executing at once: {both:4.0%} of the time",
          f"· {cpu:.2f} CPUs busy on average (CPU seconds per second)")
load_side_by_side = os.getloadavg()[0]  # printed in the load fold below the Why

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
if gil:
    assert all(r["within sampling"] for r in side_by_side["two threads"]), (
        "with the GIL, two threads never execute Python at once")
    # resolution: a ratio, not a time: the GIL caps two threads at one core's worth; 0.1 is the CPU clocks' sampling
    assert max(r["cpu"] for r in side_by_side["two threads"]) <= 1.1, (
        "with the GIL, two threads get one CPU at most")
    print("✓ the two threads never executed at once (the GIL),"
          " and kept one CPU busy at most")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: pinned-processes-run-at-once
process_1, process_2 = best_pair["each"]
processes_both = best_pair["both"]
if len(CPUS) < 2:
    print("Only one CPU is available here:",
          "processes cannot run at the same instant either.")
else:
    # Compared with the chance product of the shares this run measured, however small a busy
    # machine made them: processes that took turns would score 0 on any load.
    assert processes_both >= 0.1 * process_1 * process_2, (
        f"two processes should run at the same instant: both ran {processes_both:.1%} of the "
        f"time, less than a tenth of {process_1:.0%} × {process_2:.0%}")
    process_pids = set().union(*(r["pids"] for r in side_by_side["two processes"]))
    assert len(process_pids) == 2 and os.getpid() not in process_pids, (
        "the process calls ran in two other processes")
    print(f"✓ the two processes ran at the same instant {processes_both:.0%} of the time "
          f"(each ran {process_1:.0%} and {process_2:.0%} of it)")

# %% [markdown]
# :::{dropdown} Why
#
# Two processes run at once; two threads never do. The GIL lets one thread run Python code at a
# time (the `to_thread` section), on any machine, so two threads keep one CPU busy at most. Two
# processes each have their own interpreter and GIL, and here a CPU each: with two idle CPUs
# both execute nearly all the time, and the pair keeps close to 2 CPUs busy.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show this run's load: each process's share, the load average"}
print(what_this_run_saw(best_pair))
print(f"load average of this machine meanwhile: {load_side_by_side:.1f}",
      f"on {os.cpu_count()} CPUs")

# %% [markdown]
# :::{dropdown} Going further: when the machine is busy
#
# When more programs want a CPU than there are CPUs (the load average, in the fold above: how
# many wanted one, on average, over the last minute), each process waits for its turns: the
# fold's first line gives the share of the time each one was executing. Then both numbers fall,
# and the CPU seconds per second can come out no higher than the threads'. The first column
# still tells the two apart: two processes that each execute part of the time overlap about as
# often as chance has them meet, and threads never do (the check asks for at least a tenth of
# the product of the two shares). The rest of the chapter uses `process_pool`, whose workers
# are not pinned: the same load moves the crossover of the price table below, and it puts holes
# in the process pool's lanes of the heartbeat figure further down. (A free-threaded build is
# another matter: see the note on it in the `to_thread` section's Why.)
#
# :::

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers that time each call"}
# The instruments for the price table below.
async def round_trip(pool, fn, arg) -> float:
    start = time.perf_counter()
    await asyncio.wait_for(loop.run_in_executor(pool, fn, arg), timeout=10)
    return time.perf_counter() - start


async def trip_and_work(pool, text: str) -> tuple[float, float]:
    """(round trip, the work's own time in the worker): their difference is what the trip cost."""
    start = time.perf_counter()
    worked = await asyncio.wait_for(loop.run_in_executor(pool, timed_score, text), timeout=10)
    return time.perf_counter() - start, worked


def inline_time(text: str) -> float:
    start = time.perf_counter()
    score(text)
    return time.perf_counter() - start


# %% [markdown]
# Then the price. A call through the pool costs the work plus a trip: pickling the call, the
# pipe there and back, waking the worker and then the caller. Predict two things before you
# open the answers. At about what text length does the trip cost as much as the work: about 10
# characters, about 300, about 3,000 or about 30,000? And does a call that does no work but
# sends 8 MB cost about as much as one that sends 8 bytes, or many times more?
#
# The first answer times each size directly (`inline_time`, the work) and through the pool
# (`trip_and_work`, which also returns the work's own time inside the worker: the trip is the
# difference); its comments say how the crossover is worked out. The second sends
# `payload_size`, the course's function that only returns the size of what it was sent.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
SIZES = [10, 1_000, 10_000]  # characters
runs = {size: [] for size in SIZES}
for _ in range(5):  # five rounds, each timing every size both ways; best of five
    for size in SIZES:
        text = "a" * size
        runs[size].append((inline_time(text), *await trip_and_work(process_pool, text)))
table = {}  # size: (the work on the loop, a pool call, the trip alone)
for size, rounds in runs.items():
    table[size] = (min(r[0] for r in rounds), min(r[1] for r in rounds),
                   min(r[1] - r[2] for r in rounds))
for size, (inline, _, trip) in table.items():
    print(f"{size:>6} chars: the work {inline * 1000:6.2f} ms",
          f"· the trip {trip * 1000:5.2f} ms · trip / work = {trip / inline:6.2f}")
# The crossover: how many characters of work cost as much as the 10-character trip.
per_char = table[10_000][0] / 10_000  # the work's cost per character
crossover = table[10][2] / per_char
print(f"the trip costs as much as the work at about {crossover:,.0f} characters")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert table[10][2] > 5 * table[10][0], "for tiny work, the trip costs far more than the work"
# The trip's share, not its size: a busy machine adds the same wake-up wait to both trips.
share = {size: trip / inline for size, (inline, _, trip) in table.items()}
assert share[10_000] < 0.1 * share[10], (
    "for large work, the trip is a far smaller share of the work than for tiny work")
print("✓ for 10 characters the trip costs more than 5 × the work; for 10,000 its share of the"
      " work is under a tenth of that")

# %% [markdown]
# :::{dropdown} Why
#
# From the first row to the last, the work grows a thousandfold with the text. The trip stays
# about the same: for texts of a few kilobytes it varies by a few tenths of a millisecond from
# run to run, so a longer text's trip can even come out shorter, and it grows only with large
# arguments (the 8 MB call below). So the trip / work column falls. A pool call costs the sum
# of a row's first two numbers: for tiny texts many times the work itself (you pay for the
# trip, not the scoring), for large texts a small extra on top of it.
#
# The crossover, where the trip costs as much as the work, is the answer's last line, worked
# out from the 10-character trip; longer texts' trips are a little longer, so the true one
# comes a little later. Near it a pool call still costs about twice the work, so route well
# above it: the exercise's visible test draws the line at 1,000 characters. Shorter texts stay
# on the loop, each holding it for less than the 1,000-character row's time, and longer ones
# go to the pool. The crossover belongs to this scorer on this machine: another scorer, with
# another cost per character, has its own.
#
# :::

# %% [markdown]
# The second prediction: the size of what you send. `round_trip(pool, fn, arg)` (in the
# helpers' fold above the price table) times one call of `payload_size(arg)` through the pool,
# for 8 bytes and for 8 MB.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
payload_pool = process_pool
big, tiny = bytes(8_000_000), bytes(8)
trips = {"8 B": [], "8 MB": []}
for _ in range(5):  # interleaved, best of five
    trips["8 B"].append(await round_trip(payload_pool, payload_size, tiny))
    trips["8 MB"].append(await round_trip(payload_pool, payload_size, big))
best = {label: min(times) for label, times in trips.items()}
print({label: f"{seconds * 1000:.2f} ms" for label, seconds in best.items()},
      "for a call that does no work")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: pickling-cost-grows-with-payload
assert best["8 MB"] > 3 * best["8 B"], (
    "sending 8 MB of arguments costs far more than the call itself")
print("✓ the same empty call costs more than 3 × as much with 8 MB of arguments")

# %% [markdown]
# :::{dropdown} Why
#
# Arguments and results travel by pickle through a pipe: each argument is pickled, copied
# through the pipe and unpickled in the worker, and each of
# those steps grows with the bytes: compare the two times, where sending 8 MB costs many times
# the empty call. A real service sends prompts and responses
# (kilobytes), so its trip cost is the fixed part, but a function that takes a whole batch, a
# tensor or a tokenizer object as an argument pays for copying it on every call. Send small
# arguments; let the worker load big, fixed things once (an `initializer`, or a module-level
# cache in the worker).
#
# :::

# %% [markdown]
# ## Measure: the loop's heartbeat during one piece of CPU work, three ways
#
# One piece of CPU work three ways, one run each: on the loop, in a thread, and in the process
# pool. The work is `burn(1200)`, the same kind of loop as `score`, four times `burn(300)`
# above and so about four times as long as the large scoring; it also reports when it ran,
# read where it ran (in the thread, or in the worker process). Each way gets a heartbeat lane,
# blue while the loop answered its 2 ms heartbeat, red wherever it did not answer for over
# 20 ms (ten missed heartbeats), and a work lane.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the code that runs the three and draws them"}
import statistics
from functools import partial

WORK = partial(burn, 1200, gap=0.006)  # its running intervals: holes over 6 ms are holes
RED = 0.020  # a heartbeat gap over 20 ms is drawn red


async def burn_on_loop() -> dict:
    return WORK()


async def three_ways():
    tl = Timeline()
    silence = {}  # the loop's longest gap, as a fraction of the work's duration
    longest = {}  # the loop's longest gap, in seconds
    answers = {}  # heartbeats the loop answered while the work ran
    spacing = {}  # the median time between two of those answers, in seconds
    ticks = {}  # when the loop answered, while the work ran
    ran = {}  # the share of the work's span during which it had a CPU
    for label, runner in (("on the loop", burn_on_loop),
                          ("to_thread", lambda: asyncio.to_thread(WORK)),
                          ("process pool", lambda: loop.run_in_executor(process_pool, WORK))):
        with borrowed_default_executor():
            async with LoopWatch(interval=0.002) as watch:
                report = await asyncio.wait_for(runner(), timeout=10)
        for start, end in report["intervals"]:
            tl.add(f"{label} · work", start, end, state="running")
        watch.add_to(tl, f"{label} · event loop", threshold=RED)
        span = report["end"] - report["start"]
        silence[label] = watch.max_gap / span
        longest[label] = watch.max_gap
        during = [b for b in watch.beats if report["start"] <= b <= report["end"]]
        answers[label], ticks[label] = len(during), during
        steps = [b - a for a, b in zip(during, during[1:], strict=False)]
        spacing[label] = statistics.median(steps) if steps else None
        ran[label] = sum(end - start for start, end in report["intervals"]) / span
    return tl, silence, longest, answers, spacing, ran, ticks


def draw_three_ways(tl, ticks):
    fig = tl.plot("One piece of CPU work three ways: when the loop answered, when the work ran",
                  lanes=["on the loop · event loop", "on the loop · work", "to_thread · event loop",
                         "to_thread · work", "process pool · event loop", "process pool · work"],
                  meanings={"running": "answering / working", "blocked": "loop did not answer for over 20 ms"})
    for beat in ticks["to_thread"]:  # a thin tick at each heartbeat answered
        fig.axes[0].plot([beat] * 2, [2 - 0.42, 2 + 0.42], color="black", linewidth=0.6)
    return fig


def draw_thread_zoom(tl, ticks, width=0.05):
    """The two to_thread lanes again, `width` seconds from the middle of the work, with a tick
    at each heartbeat the loop answered (where one gap ends, the next starts)."""
    work = tl.spans_of("to_thread · work")
    middle = (work[0].start + work[-1].end) / 2
    fig = tl.plot("to_thread, 50 ms of it: a tick for each heartbeat the loop answered",
                  lanes=["to_thread · event loop", "to_thread · work"],
                  meanings={"running": "answering / working", "blocked": "loop did not answer for over 20 ms"})
    ax = fig.axes[0]
    for beat in ticks["to_thread"]:
        ax.plot([beat] * 2, [-0.42, 0.42], color="black", linewidth=2)
    ax.set_xlim(middle, middle + width)
    return fig


# %% [markdown]
# Predict: for each of the three, while the work runs, does the loop stop answering its 2 ms
# heartbeat altogether, answer but less often, or answer as often as when idle?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl, silence, longest, answers, spacing, ran, ticks = await three_ways()  # folded
print(f"{'':<13} {'longest silence':>15} {'answers meanwhile':>18}",
      f"{'typical spacing':>16}")
for label in silence:
    typical = "-" if spacing[label] is None else f"{spacing[label] * 1000:.0f} ms"
    print(f"{label:<13} {longest[label] * 1000:>12.0f} ms {answers[label]:>18}",
          f"{typical:>16}")
load_three_ways = os.getloadavg()[0]  # printed in the fold with the other numbers
fig = draw_three_ways(tl, ticks)  # the first figure: all six lanes
zoom = draw_thread_zoom(tl, ticks)  # the second: 50 ms of the to_thread lanes

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# One run each, not interleaved: only the side a load cannot flip is asserted here
# (blocking the loop silences it for the whole work, however busy the machine). The
# thread and pool shares are measured best of two in the claims above; in this one-off
# drawing a busy machine can stretch them.
assert silence["on the loop"] >= 0.8, (
    "scoring on the loop silenced it for the whole work")
print("✓ scoring on the loop silenced it for most of the work (at least 0.8 of it)")

# %% [markdown]
# :::{dropdown} Why
#
# Each way has two lanes: the heartbeat lane (blue while the loop answered, red for a silence of
# over 20 ms) and the work lane (blue while the work had a CPU). Three findings, one per way:
#
# - **On the loop: one long silence.** The heartbeat lane is one red stretch as long as the
#   work, and the loop answers no heartbeat meanwhile: its only thread is busy with the work.
# - **In a thread: answers, but seldom.** The longest silence shrinks to a few milliseconds, but
#   the loop answers about every 8 ms instead of every 2 ms (the ticks in the zoom). Each time
#   the loop comes back to run a callback, it first waits for the GIL, up to a switch interval
#   (5 ms), so a request that needs ten steps of the loop (each `await` that suspends is one)
#   waits ten times, where an idle loop needs microseconds. Chapter 08's `to_thread` lane had
#   no such waits: there the thread *slept*, which releases the GIL; here it runs Python code.
# - **In the process pool: free.** The work holds none of this process's GIL, so the loop
#   answers about every 2 ms, as when idle.
#
# The three work bars are the same work, the same CPU time.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the numbers on load: the work's CPU share, the load average"}
for label in silence:
    print(f"{label:<13} the work had a CPU {ran[label]:.0%} of its time")
print(f"load average meanwhile: {load_three_ways:.1f} on {os.cpu_count()} CPUs")

# %% [markdown]
# :::{dropdown} Going further: what a busy machine changes in these lanes
#
# These are single runs, one way after the other. When more programs want a CPU than there are
# CPUs (the load average in the fold above), the operating system gives each of them turns, the
# worker and the loop's thread included. Then a work bar comes out longer than the others, with
# holes where the work waited for a CPU (holes over 6 ms are drawn; shorter ones merge into the
# bar), and the pool's heartbeat lane gets short red gaps of its own: what kept the loop waiting
# then was another program on the CPU, not this process's GIL. The check above asserts only what
# no load can change: on the loop, the loop is silent for the whole work. (Handing the call to
# the pool also runs briefly in this process, in the pool's manager thread and the queue's
# feeder thread that pickles the call into the pipe.)
#
# :::

# %% [markdown]
# ## `SIGALRM` timeouts and threads
#
# Some scoring code bounds a slow verification with `signal.alarm` (or `setitimer`) and a
# `SIGALRM` handler that raises `TimeoutError`. `alarm_timeout` in `lab_snippets.cpu_work` is
# such a timeout: on entry it installs a `SIGALRM` handler that raises `TimeoutError` and arms
# the alarm (its source is in the last fold of this section). The command `alarm-timeout` runs 3 s of scoring
# inside `with alarm_timeout(0.05):`, in the main thread or in a worker thread of a child
# process, and prints what happened.
#
# Moving scoring to `to_thread` let the loop answer above. Predict: does the same 0.05 s timeout
# still cut the 3 s of scoring short when it runs in a worker thread?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
CPU_WORK = [sys.executable, "-m", "lab_snippets.cpu_work", "alarm-timeout", "0.05"]
outcomes = {}
for where, flags in (("main thread", []), ("worker thread", ["--in-thread"])):
    run = subprocess.run(CPU_WORK + flags, capture_output=True, timeout=10)
    outcomes[where] = run.stdout.decode().strip()
    print(f"{where:<14} {outcomes[where]}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: sigalrm-only-in-main-thread
assert outcomes["main thread"].startswith("timed-out"), (
    "in the main thread the alarm cut the work short")
# The type, not the message: CPython words the ValueError differently across versions.
assert outcomes["worker thread"].startswith("refused ValueError"), (
    "in a worker thread, installing the SIGALRM handler is refused before any work")
print("✓ the alarm cut the work short in the main thread and was refused in a worker thread")

# %% [markdown]
# :::{dropdown} Why
#
# Python's `signal` module runs handlers only in the **main thread** of the main interpreter,
# and `signal.signal` raises `ValueError` when called from any other thread. So in the worker
# thread the timeout never started: installing the handler failed first, and the caller got a
# `ValueError` instead of a score. Code that catches every exception around such a call would
# silently score the sample as wrong. The comment on the `signal.signal` line of
# `alarm_timeout` (its source is in the last fold of this section) marks the spot. The same
# timeout works in a process pool's worker, where the worker's own main thread runs the call.
#
# :::

# %% [markdown]
# Two more limits of any `SIGALRM` timeout: `signal.alarm` counts whole seconds (use
# `signal.setitimer` for less), and a Python signal handler runs only between bytecodes, so a
# long call into C code that does not check for signals itself (for example `zlib.compress` of
# a large buffer) is interrupted only when it returns. A timeout that needs no signal: run the
# work in a process and stop waiting for it (`asyncio.wait_for` around the executor call), or
# kill the process. Stopping the wait frees only the caller: `wait_for` cancels the awaiting,
# not a call that has started, so the pool's worker runs on to the end of the work and takes no
# other call meanwhile. To stop the work itself, kill the process that runs it: a process of
# its own, since a pool that loses a worker breaks (`BrokenProcessPool`) for every caller.

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show the source of alarm_timeout and its caller"}
from lab_snippets.cpu_work import alarm_timeout, score_with_alarm

show_source(alarm_timeout)
show_source(score_with_alarm)

# %% [markdown]
# ## Exercise 24.1 · Route scoring by size
#
# Implement `score_all(texts, pool, inline_below)`:
#
# 1. return the list of `score(text)` results, in the order of `texts`;
# 2. score texts shorter than `inline_below` characters directly in the coroutine (the trip to
#    a pool costs more than their work);
# 3. send every other text to the process pool `pool` with `loop.run_in_executor`, all of them
#    at once (the pool has several workers), and await them together.
#
# :::{dropdown} Hint: submit all, then await all, in order
#
# `loop.run_in_executor(pool, score, text)` hands the call to the pool at once and returns a
# future without waiting; only `await` waits. So call it for every long text first, keeping each
# future beside its text's position, then `await asyncio.gather(*futures)`: `gather` returns the
# results in the order it was given the futures, whatever order they finish in (the to_thread
# section's answer gathers two `run_in_executor` calls this way).
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on the chapter's process pool and on many generated runs with a stand-in pool
# (from no text to six; repeated texts, empty ones, texts that are not ASCII; `inline_below`
# from 0 up, so that a text may be exactly `inline_below` long):
#
# - **results**: one per text, in the order of `texts`, a repeated text scored each time;
# - **where**: texts shorter than `inline_below` characters (characters, not bytes) scored
#   directly in the coroutine, on the loop's own thread (not in a thread of their own, which costs
#   a trip too), every other text in the pool, each exactly once;
# - **at once**: the long texts all handed to the pool before the first of them is awaited;
# - **loop free**: the event loop keeps running while the pool works (no blocking wait inside
#   `score_all`); `score` itself never raises.
#
# :::

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def score_all(texts: list[str], pool, inline_below: int) -> list[tuple[int, int]]:
    """score(text) for each text, in order: short texts on the loop, the rest in `pool`, concurrently."""
    ### BEGIN SOLUTION
    loop = asyncio.get_running_loop()
    results: list = [None] * len(texts)
    pending = {}
    for index, text in enumerate(texts):
        if len(text) < inline_below:
            results[index] = score(text)
        else:
            pending[index] = loop.run_in_executor(pool, score, text)
    for index, result in zip(pending, await asyncio.gather(*pending.values()), strict=True):
        results[index] = result
    return results
    ### END SOLUTION


# %% tags=["tests"]
texts = ["short answer", "a" * 20_000, "b" * 20_000, "x"]
got = await asyncio.wait_for(score_all(texts, process_pool, inline_below=1_000),
                             timeout=30)
print([(checksum, "here" if pid == os.getpid() else "pool") for checksum, pid in got])
assert [checksum for checksum, _ in got] == [score(t)[0] for t in texts], (
    "results in the order of texts")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
_texts = ["ok", "c" * 15_000, "yes", "d" * 15_000, "e" * 15_000, "f" * 15_000, "no"]
_counting = CountingExecutor(process_pool)
_got = await asyncio.wait_for(score_all(_texts, _counting, inline_below=500), timeout=60)
assert [_c for _c, _ in _got] == [score(_t)[0] for _t in _texts], (
    "the results must be in the order of texts (gather keeps it; as_completed does not)")
_here = os.getpid()
for _text, (_, _pid) in zip(_texts, _got, strict=True):
    if len(_text) >= 500:
        assert _pid != _here, (
            "a long text was scored in the service's own process (on the loop or in a thread, which shares "
            "the GIL): send it to the process pool with run_in_executor")
    else:
        assert _pid == _here, (
            "a short text was sent to the pool, where pickling and the trip cost more than its work: "
            "score it directly")
assert _counting.submitted == 4, f"{_counting.submitted} calls reached the pool for 4 long texts"
assert _counting.peak >= 2, (
    "the long texts went to the pool one at a time: submit them all, then await them together (gather)")

# A text of exactly inline_below characters is not shorter than inline_below: it goes to the pool.
_edge = await asyncio.wait_for(score_all(["m" * 500, "n"], process_pool, inline_below=500), timeout=30)
assert _edge[0][1] != os.getpid() and _edge[1][1] == os.getpid(), (
    "a text of exactly inline_below characters was scored in the service's process: only texts shorter than "
    "inline_below are scored directly (len(text) < inline_below)")

# The loop stays free while the pool works: the longest heartbeat gap during score_all must be
# shorter than one long text's scoring (measured just before and just after, the slower of the
# two, so a neighbour that slows the machine meanwhile slows the yardstick too); a blocking wait
# on the pool lasts about two of them (four texts, two workers), a free loop answers every few ms.
from lab_snippets import grading as _grading

_long = ["g" * 60_000, "h" * 60_000, "i" * 60_000, "j" * 60_000]
_before = min(_grading.call(score, _long[0]).seconds for _ in range(2))
_seen = await _grading.observe(score_all(_long, process_pool, inline_below=500), timeout=60, heartbeat=0.005)
_after = min(_grading.call(score, _long[0]).seconds for _ in range(2))
_one = max(_before, _after)
_grading.check_finished(_seen, "score_all", within=60)
assert [_c for _c, _ in _seen.value] == [score(_t)[0] for _t in _long], "the results must be in the order of texts"
_grading.check_loop_free(
    _seen, _one, "score_all",
    hint="waiting on the pool's futures with .result() (or any blocking wait) holds the loop while the workers "
         "run; await run_in_executor's futures (gather) instead (chapter 24)")

# Generated scenarios (issue 37): the same texts through score_all and the reference, with a
# stand-in pool of threads, compared on the results and on where each text was scored
# (lab_snippets.scenarios explains the pattern). `score` reaches each copy as a stand-in that
# notes where it ran (scenarios_services.rebind). The stand-in pool holds every job until all the
# long texts have been handed to it (0.3 s at most), so "all at once" is a count, not a race, and
# each job asks the loop to answer before it finishes (1 s at most): a blocked loop cannot.
import concurrent.futures as _cf
import dataclasses as _dc
import threading as _threading

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc
from lab_snippets.scenarios_services import rebind as _rebind

_reference = _sc.reference(globals(), "score_all")


@_dc.dataclass(frozen=True)
class _Scenario:
    texts: tuple
    inline_below: int

    def describe(self) -> str:
        return f"score_all({list(self.texts)!r}, pool, inline_below={self.inline_below})"


@_st.composite
def _scenarios(draw):
    text = _st.one_of(_st.sampled_from(["ok", "", "é中é中é", "aaaa"]), _st.text(alphabet="ab é中", max_size=8))
    return _Scenario(tuple(draw(_st.lists(text, max_size=6))), draw(_st.integers(0, 8)))


class _Pool(_cf.Executor):
    """A pool of threads that counts what it holds and checks the loop answers while it works."""

    def __init__(self, expected: int, loop: asyncio.AbstractEventLoop) -> None:
        self.expected, self.loop, self.lock = expected, loop, _threading.Lock()
        self.submitted = self.held = self.peak = self.unanswered = 0
        self.all_in = _threading.Event()
        if expected == 0:
            self.all_in.set()
        self.workers = _cf.ThreadPoolExecutor(max_workers=8, thread_name_prefix="stand-in-pool")

    def submit(self, fn, /, *args, **kwargs):
        with self.lock:
            self.submitted += 1
            self.held += 1
            self.peak = max(self.peak, self.held)
            if self.submitted >= self.expected:
                self.all_in.set()
        return self.workers.submit(self._run, fn, args, kwargs)

    def _run(self, fn, args, kwargs):
        try:
            self.all_in.wait(0.3)
            answered = _threading.Event()
            self.loop.call_soon_threadsafe(answered.set)
            if not answered.wait(1.0):
                with self.lock:
                    self.unanswered += 1
            return fn(*args, **kwargs)
        finally:
            with self.lock:
                self.held -= 1


def _observe(fn, s: _Scenario) -> dict:
    scored: list = []

    loop_thread = _threading.current_thread()  # the loop below runs in this thread

    def stand_in(text, *args, **kwargs):
        here = _threading.current_thread()
        scored.append((text, "pool" if here.name.startswith("stand-in-pool") else
                       "loop" if here is loop_thread else "thread"))
        return score(text, *args, **kwargs)

    copy = _rebind(fn, {"score": stand_in})
    loop = asyncio.new_event_loop()
    pool = _Pool(sum(len(t) >= s.inline_below for t in s.texts), loop)

    async def main():
        async with asyncio.timeout(10):
            return await copy(list(s.texts), pool, s.inline_below)

    try:
        value, error = loop.run_until_complete(main()), None
    except Exception as exc:  # noqa: BLE001 - what came out is the observation
        value, error = None, _sc.kind_of(exc)
    finally:
        pool.workers.shutdown(wait=True, cancel_futures=True)
        loop.close()
    return {"value": value, "error": error, "scored": sorted(scored), "peak": pool.peak,
            "unanswered": pool.unanswered}


def _compare(me: dict, it: dict, s: _Scenario) -> str | None:
    if me["error"]:
        return f"score_all {me['error']} (no text makes score raise)"
    if not isinstance(me["value"], list) or len(me["value"]) != len(it["value"]):
        got = len(me["value"]) if isinstance(me["value"], list | tuple) else repr(me["value"])
        return (f"returned {got} results for {len(s.texts)} texts: one result per text, a repeated text too, in a "
                "list")
    if me["value"] != it["value"]:
        return ("the results must be in the order of texts (gather keeps it; as_completed does not): result i is "
                "score(texts[i])")
    for text, where in sorted(set(me["scored"]) - set(it["scored"])):
        if where == "pool":
            return (f"a short text ({text!r}, {len(text)} characters, inline_below={s.inline_below}) was sent to the "
                    "pool, where pickling and the trip cost more than its work: score it directly (len counts "
                    "characters)")
        if len(text) < s.inline_below:  # a short text in a thread of the service (asyncio.to_thread)
            return (f"a short text ({text!r}, {len(text)} characters, inline_below={s.inline_below}) was scored in a "
                    "thread, not on the loop: score texts shorter than `inline_below` characters directly in the "
                    "coroutine (a trip to a thread, like one to the pool, costs more than their work)")
        return (f"a long text ({text!r}, {len(text)} characters, inline_below={s.inline_below}) was scored in the "
                "service's own process (on the loop or in a thread, which shares the GIL): send it to the process "
                "pool with run_in_executor")
    if me["scored"] != it["scored"]:
        return "a text was scored more than once, or not at all: score each text exactly once"
    if me["peak"] < it["peak"]:
        return (f"the long texts went to the pool {me['peak']} at a time where {it['peak']} could go at once: "
                "submit them all, then await them together (gather)")
    if me["unanswered"]:
        return ("the event loop was blocked while the pool worked: await run_in_executor's futures (gather) instead "
                "of waiting on them with .result() or any blocking wait (chapter 24)")
    return None


_sc.differential(score_all, _reference, _scenarios(), _observe, _compare, what="score_all",
                 examples=25, hint="chapter 24")
### END HIDDEN TESTS

# %% [markdown]
# The page is done with the process pool: shutting it down ends its worker processes, so none
# outlives the chapter.

# %%
process_pool.shutdown(wait=True, cancel_futures=True)

# %% [markdown]
# ## Summary
#
# - CPU work in a coroutine holds the event loop for its whole duration; the loop's silence grows
#   with the work.
# - For CPU work, `to_thread` turns one long silence of the loop into many short ones: on the
#   usual (GIL) build, threads running Python code take turns, and add no CPU. (A thread that
#   *waits*, as in chapter 08, frees the loop fully.)
# - A process pool through `run_in_executor` frees the loop and adds CPU, at a price per call
#   (pickling, pipes) that grows with the arguments. For tiny work the price exceeds the work:
#   route by size.
# - `SIGALRM` timeouts work only in the main thread; moved to a thread, one that installs its
#   handler on entry fails with `ValueError` before any work is done. One whose handler was
#   installed in the main thread and that only arms the alarm in the worker fails worse: the
#   `TimeoutError` is raised in the main thread, wherever it happens to be.
#
# **What's next.** Chapter 25 finds the concurrency limits hidden in each layer of a service:
# connection pools, executors and actors.
#
# ## In slime
#
# Rule-based rewards in slime are computed inside `async_rm`, an `async def` that the rollout
# awaits for each sample (or `batched_async_rm` gathers for a group). Two of this chapter's
# questions apply to it: where does the scoring run, and would a `SIGALRM` timeout work there?
# Other executor and signal sites are in the [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("24")

# %% [markdown]
# Beside the DAPO scorer, slime has a `SIGALRM` timeout like `alarm_timeout` (quoted after the
# run). What would the first reward to use it from the rollout's loop get? The run, on this
# chapter's model: a reward coroutine that wraps its scoring in `alarm_timeout` and turns any
# exception into DAPO's score for a wrong answer, -1.0. It runs on an event loop in a daemon
# thread, where slime runs its rollout (chapter 13), and scores a text that deserves 1.0.

# %%
import threading

reward_errors: list[str] = []
rewards: list[float] = []


async def reward_with_alarm(text: str) -> float:
    try:
        with alarm_timeout(1):
            score(text)
        return 1.0
    except Exception as exc:  # the reward's own catch-all
        reward_errors.append(type(exc).__name__)
        return -1.0


rollout_thread = threading.Thread(
    target=lambda: rewards.append(asyncio.run(reward_with_alarm(SMALL))), daemon=True)
rollout_thread.start()
rollout_thread.join(timeout=10)
print("reward:", rewards, "· exceptions caught:", reward_errors)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: alarm-in-the-rollout-thread-scores-minus-one
assert not rollout_thread.is_alive(), "the rollout thread finished"
assert rewards == [-1.0] and reward_errors == ["ValueError"], (
    "installing the SIGALRM handler failed in the thread, and the catch-all scored the text -1.0")
print("✓ in the rollout's thread the timeout raised ValueError before any scoring: reward -1.0")

# %% [markdown]
# The timeout in slime. At the pinned commit nothing calls it yet, so the run above is a
# what-if: the first reward to use it from the rollout's loop, with a catch-all like the run's,
# would score every sample -1.0.

# %% tags=["remove-input"]
show_call_site("24b")
