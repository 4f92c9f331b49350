# %% [markdown]
# # 25 · Hidden concurrency caps
# *隐藏的并发上限*
#
# **The question.** A rollout raises its semaphore well past what it needs, and its throughput
# does not move. Which other layers limit how many requests are in flight, what are their defaults,
# and how do you predict the throughput a limit allows? And is a rate limit the same tool as a
# concurrency limit?
#
# **You will**
# 1. count, at a loopback server, the caps that httpx's connection pool, aiohttp's connector
#    and asyncio's default thread pool put on work you started all at once;
# 2. find out what waiting for a pooled connection does to a request's total timeout;
# 3. predict from the server's latency, with Little's law, the throughput a cap allows;
# 4. tell a rate limit from a concurrency limit by what each does when the server slows down,
#    and write a token bucket.
#
# **Needs** chapters 06 (semaphores) and 08 (thread pools) · about 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share.
#
# The server, `lab_snippets.loopback_http.LatencyServer`, answers HTTP/1.1 on 127.0.0.1 after a
# known latency and counts the requests inside it. The set-up cell below only imports it and
# the course's other helpers.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import inspect
import math
import os
import sys
import threading
import time

import aiohttp
import httpx
import matplotlib.pyplot as plt

# InFlight: a context manager that counts how many are inside it now, at most, in all.
# LatencyServer: the loopback server above; VirtualClock: simulated time (exercise).
# borrowed_default_executor(): a fresh default thread pool for the loop, then shut down.
from lab_snippets.asyncio_tools import InFlight
from lab_snippets.loopback_http import LatencyServer, VirtualClock
from lab_snippets.loopwatch import borrowed_default_executor
from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% tags=["hide-input", "remove-output"] mystnb={"code_prompt_show": "Show the cell that reads the installed defaults"}
# The defaults of the installed libraries and of this Python, printed in the answer below.
httpx_default = inspect.signature(httpx.AsyncClient).parameters["limits"].default
aiohttp_default = inspect.signature(aiohttp.TCPConnector).parameters["limit"].default
cpus = os.process_cpu_count() if sys.version_info >= (3, 13) else os.cpu_count()
executor_default = min(32, (cpus or 1) + 4)  # ThreadPoolExecutor's default max_workers
print("httpx.AsyncClient():", httpx_default)
print("aiohttp.TCPConnector(): limit =", aiohttp_default)
print(f"default thread pool: min(32, {cpus} CPUs + 4) = {executor_default} threads")

# %% [markdown]
# ## Predict: 120 pieces of work at once, and no semaphore
#
# This chapter meets three layers that run work for you: httpx's and aiohttp's clients, and
# asyncio's default thread pool. Each is handed 120 pieces of work at once, with no
# {term}`semaphore` anywhere:
#
# - 120 GET requests through one `httpx.AsyncClient()` made with its defaults;
# - 120 GET requests through one `aiohttp.ClientSession()` made with its defaults;
# - 120 blocking calls (a 20 ms `time.sleep`) through `asyncio.to_thread`, on a fresh default
#   thread pool.
#
# Predict for each layer: are all 120 inside at once, or only a fixed number? And does any
# of the 120 fail, and would you be told?
#
# The loopback server holds every answer back and counts the most requests inside at once, so
# the count is what the client let through. The server sets no limit of its own: a client
# that let all 120 through would show 120. It holds the answers until the number the library
# documents has arrived, then 0.2 s more: waiting for that number only keeps the run short,
# and the 0.2 s after it would catch a 101st (the fold *how the server counts*, below). The
# answer is a table with a row per layer: how many were inside at once, and how many were done.

# %% tags=["hide-input", "remove-output"] mystnb={"code_prompt_show": "Show the instruments: how the server counts"}
OFFERED = 120
HOLD_UNTIL = {"httpx": httpx_default.max_connections, "aiohttp": aiohttp_default}


def installed_defaults() -> str:
    """The installed libraries' and this Python's default limits, as one line."""
    return (f"installed defaults: httpx {httpx_default}; "
            f"aiohttp TCPConnector(limit={aiohttp_default}); "
            f"default thread pool min(32, {cpus} CPUs + 4) = {executor_default}")


# To see a cap, requests must stay inside the server: one that answered at once would finish
# each request before the next arrived, and its count would say nothing about a limit. So the
# server holds every answer until `expected` requests are inside (or 5 s), waits 0.2 s for any
# more, then releases them all; the most it saw inside at once is the count. `expected` is the
# number the library documents for its default (HOLD_UNTIL): waiting for it only keeps the run
# short, and the 0.2 s more lets a client that lets in more than that still get counted. The
# server sets no limit of its own: a client that let all 120 through would show 120.
async def most_at_once(server: LatencyServer, requests, expected: int) -> tuple[int, int]:
    """Start every request; hold all answers until `expected` are inside (at most 5 s) and 0.2 s more."""
    server.reset()
    server.hold = asyncio.Event()
    tasks = [asyncio.ensure_future(request) for request in requests]
    for _ in range(500):
        if server.requests.now >= expected:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # room for more, if the client allowed more
    most = server.requests.peak
    server.hold.set()
    results = await asyncio.wait_for(asyncio.gather(*tasks), 20)
    server.hold = None
    return most, sum(result == 200 for result in results)


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
# OFFERED, most_at_once, HOLD_UNTIL: see the fold *how the server counts*, above
seen = {}
async with LatencyServer(latency=0.0) as server:
    async with httpx.AsyncClient() as client:
        async def httpx_get() -> int:
            return (await client.get(server.url)).status_code

        requests = [httpx_get() for _ in range(OFFERED)]
        most, done = await most_at_once(server, requests, HOLD_UNTIL["httpx"])
        seen["httpx.AsyncClient()"] = dict(at_once=most, done=done)
    async with aiohttp.ClientSession() as session:
        async def aiohttp_get() -> int:
            async with session.get(server.url) as response:
                await response.read()
                return response.status

        requests = [aiohttp_get() for _ in range(OFFERED)]
        most, done = await most_at_once(server, requests, HOLD_UNTIL["aiohttp"])
        seen["aiohttp.ClientSession()"] = dict(at_once=most, done=done)


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
threads_used: set[int] = set()
in_threads = InFlight()


def blocking_call() -> None:
    threads_used.add(threading.get_ident())
    with in_threads:
        time.sleep(0.02)


with borrowed_default_executor():  # a fresh default-sized pool, shut down after
    await asyncio.gather(*(asyncio.to_thread(blocking_call) for _ in range(OFFERED)))
seen["asyncio.to_thread"] = dict(at_once=in_threads.peak, threads=len(threads_used),
                                done=in_threads.entered)

# The clients' rows: requests inside the server at once. The thread pool's row: the
# most calls running at once, and the threads that ran them.
print(f"{'layer':<26}{'most at once':>14}{'threads':>9}{'done':>6}")
for layer, row in seen.items():
    threads = row.get("threads", "-")  # only the thread pool's row has threads
    print(f"{layer:<26}{row['at_once']:>14}{threads:>9}{row['done']:>6}")
print(installed_defaults())  # the libraries' and this Python's defaults (folded above)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: each-layer-has-its-own-cap
assert seen["httpx.AsyncClient()"]["at_once"] == httpx_default.max_connections < OFFERED
assert seen["aiohttp.ClientSession()"]["at_once"] == aiohttp_default < OFFERED
assert seen["asyncio.to_thread"]["threads"] == executor_default < OFFERED
assert in_threads.peak <= executor_default and all(row["done"] == OFFERED for row in seen.values()), (
    "never more calls running than threads, and every piece of work was done")
print("✓ each layer let through its own default, fewer than the 120 offered, and all were done")

# %% [markdown]
# :::{dropdown} Why
#
# **Nothing failed, and nothing told you.** The `done` column says all 120 were done, yet no
# layer let all 120 in: each lets a fixed number through and queues the rest. The defaults: httpx's pool (an
# `httpx.AsyncClient()`) holds 100 connections, aiohttp's connector 100, and asyncio's default
# thread pool, which `asyncio.to_thread` and `run_in_executor(None, ...)` use,
# min(32, CPUs + 4) threads, which the last printed line works out for this machine. So in
# each client 120 − 100 = 20 requests queued for a connection, and in the thread pool 120
# minus its threads queued for a thread. (httpx's `max_keepalive_connections=20`, in the
# printed line, is another number: how many idle connections it keeps open for later
# requests.) The extra work waited, invisibly, in a queue, and went through once a connection
# or a thread was free.
#
# Which cap binds is the smallest one on the path. A semaphore of 256 in front of a client
# with 100 connections is a limit of 100; a `to_thread(ray.get, ...)` per request is a limit
# of the thread pool's size ("In slime" shows where slime still does that).
#
# :::
#
# ## Ten requests, two connections, a 0.25 s budget
#
# A cap turns extra work into waiting. Ten requests go through an aiohttp session whose connector is limited to 2
# connections, to a server answering in 0.1 s, with `ClientTimeout(total=0.25)`. Predict: how
# many of the ten succeed, and how many reach the server at all?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async with LatencyServer(latency=0.1) as server:
    connector = aiohttp.TCPConnector(limit=2)
    total = aiohttp.ClientTimeout(total=0.25)
    async with aiohttp.ClientSession(connector=connector, timeout=total) as session:
        async def bounded_get() -> str:
            try:
                async with session.get(server.url) as response:
                    await response.read()
                    return "ok"
            except TimeoutError:
                return "timed out"

        outcomes = await asyncio.gather(*(bounded_get() for _ in range(10)))
    reached_server = server.requests.entered

print(f"ok: {outcomes.count('ok')}, timed out: {outcomes.count('timed out')},",
      f"requests that reached the server: {reached_server} of 10")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: pool-wait-counts-against-the-total-timeout
assert outcomes.count("timed out") >= 4, "the later requests ran out of time"
assert reached_server < 10, "some timed out while still queued for a connection: they were never sent"
print("✓ requests that waited for a connection spent their total timeout there, unsent")

# %% [markdown]
# :::{dropdown} Why
#
# aiohttp's total timeout covers the whole request, *including the wait for a free connection in
# the connector's pool*. With two connections and 0.1 s answers, two rounds of two fit into
# 0.25 s; the third round was sent at 0.2 s and cut off at 0.25 s, halfway through its 0.1 s,
# and the other requests spent their whole budget waiting for a connection and timed out
# without ever leaving the client. From the server's side nothing was wrong. A batch that is
# larger than the pool and a total timeout sized for one request is a combination to look for.
#
# :::
#
# ## Measure: the throughput of a pool of 1, 3 and 6 connections
#
# For any system that work enters and leaves, averaged over a long enough window, Little's law
# says
#
# > average number in flight = throughput × average time in the system.
#
# We send 12 requests through `httpx` clients whose pool holds c connections, for c = 1, 3
# and 6, to a server that answers in W = 30 ms. `run_with_cap` measures a run from the
# server's side: `server.spans` holds each request's arrival and answer times.
#
# Predict: with 6 connections, so 6 requests always in flight, each taking W, how many
# requests per second does the law give? Is that figure
# a ceiling on the measured throughput, a floor, or what a run reaches exactly?

# %%
LATENCY, N_REQUESTS = 0.03, 12
CAPS = [1, 3, 6]


async def run_with_cap(server: LatencyServer, cap: int) -> dict:
    server.reset()
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=cap)) as client:
        await asyncio.gather(*(client.get(server.url) for _ in range(N_REQUESTS)))
    start, end = min(s for s, _ in server.spans), max(e for _, e in server.spans)
    return {"cap": cap, "throughput": N_REQUESTS / (end - start),
            "peak": server.requests.peak, "spans": list(server.spans)}


# %% [markdown]
# The answer prints a row per cap: the most requests the server saw at once (peak), the
# measured throughput, the law's figure for that cap, and their ratio (share).

# %% tags=["hide-input", "remove-output"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_pool_runs():
    """The best cap-3 run as the server saw it, and the throughput of each cap beside its bound."""
    tl = Timeline()
    tl.t0 = min(start for start, _ in best[3]["spans"])  # the spans were measured before this Timeline
    lanes_free_at: list[float] = []
    for start, end in sorted(best[3]["spans"]):
        lane = next((i for i, free in enumerate(lanes_free_at) if free <= start), len(lanes_free_at))
        if lane == len(lanes_free_at):
            lanes_free_at.append(end)
        lanes_free_at[lane] = end
        tl.add(f"server slot {lane + 1}", start, end)
    fig, (ax_tl, ax_curve) = plt.subplots(1, 2, figsize=(11, 3.4), layout="constrained")
    tl.plot("12 requests, a pool of 3 connections", ax=ax_tl,
            lanes=[f"server slot {i + 1}" for i in range(3)])
    ax_curve.plot(CAPS, [best[c]["throughput"] for c in CAPS], "o-", label="measured")
    ax_curve.plot(CAPS, [c / LATENCY for c in CAPS], "s--", color="grey",
                  label="bound: cap ÷ W")
    ax_curve.set_xlabel("the pool's cap (max_connections)")
    ax_curve.set_ylabel("requests per second")
    ax_curve.set_title("Throughput against the pool's cap (W = 30 ms)")
    ax_curve.legend()
    assert len(lanes_free_at) <= 3
    return fig


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
best: dict[int, dict] = {}
async with LatencyServer(latency=LATENCY) as server:
    for _ in range(2):  # twice each, interleaved; the check keeps the faster run
        for cap in CAPS:
            run = await run_with_cap(server, cap)
            if cap not in best or run["throughput"] > best[cap]["throughput"]:
                best[cap] = run

print("cap  peak  throughput   cap ÷ W  share")
for cap in CAPS:
    r = best[cap]
    share = r["throughput"] * LATENCY / cap
    print(f"{cap:>3}{r['peak']:>6}{r['throughput']:>10.1f}/s{cap / LATENCY:>8.1f}/s",
          f"{share:>5.0%}")
gain = best[6]["throughput"] / best[1]["throughput"]
print(f"6 connections gave {gain:.1f} times the throughput of 1")
fig = draw_pool_runs()  # folded above

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check and why it holds on a busy machine"}
# claim: throughput-follows-in-flight-over-latency
# Why the check holds on a busy machine: each cap ran twice, interleaved (1, 3, 6, 1, 3, 6),
# and the faster run is kept, since a burst of load can only make a run slower; the 5 % margin
# is for the edges of the measuring window; and a busy client cannot keep 6 requests in
# flight, so the check asks only for "more in flight, more throughput", not for six times.
assert all(best[c]["peak"] <= c for c in CAPS), "the pool is the cap"
assert best[6]["throughput"] >= 1.5 * best[1]["throughput"], "more requests in flight, more throughput"
for cap in CAPS:
    allowed = cap / LATENCY  # c connections, each held at least W: at most c requests per W
    assert best[cap]["throughput"] <= 1.05 * allowed, (
        f"cap {cap}: {best[cap]['throughput']:.1f}/s, above the {allowed:.1f}/s that cap ÷ W allows")
print("✓ the pool capped in-flight requests, and no run beat cap ÷ latency")

# %% [markdown]
# :::{dropdown} Why
#
# Put c in flight and W in the law, and throughput = c ÷ W: 6 ÷ 0.03 = 200 requests per second
# for six connections (about 33 and 100 for one and three). It is a ceiling. Each request holds
# its connection for at least W, so c connections finish at most c requests per W, and no run
# went past it. All runs fell a little short (every share is under 100%), because fewer than c
# requests were inside the server on average: after each answer a connection stays idle for a
# moment while the client reads the answer and sends the next request, and at the start and
# the end of the run not every connection is in use.
#
# The figure's left panel shows the best cap-3 run as the server saw it: each request is a bar,
# placed in the first free lane; three lanes are enough, whatever the number of requests. The
# right panel draws the measured throughput under the bound cap ÷ W (grey): the gap in requests
# per second grows with the cap because the bound does, while the share stays close.
#
# :::

# %% [markdown]
# ## Back to the opening question: a bigger semaphore in front of the pool
#
# The chapter began with a rollout that raised its semaphore well past what it needed and saw
# its throughput stay where it was. Here it is, scaled down so that it runs in a second: 60
# requests, each behind an `asyncio.Semaphore` of 5, 20 or 80 permits, through one httpx
# client whose pool holds 10 connections (the default's 100, scaled down), to a server that
# answers in 50 ms. Predict, with Little's law: what throughput does each semaphore get?

# %%
POOL, SLOW, SENT = 10, 0.05, 60  # connections, the server's latency, requests per run


async def run_behind(server: LatencyServer, permits: int) -> dict:
    server.reset()
    semaphore = asyncio.Semaphore(permits)
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=POOL)) as client:
        async def one() -> None:
            async with semaphore:
                await client.get(server.url)

        await asyncio.gather(*(one() for _ in range(SENT)))
    start, end = min(s for s, _ in server.spans), max(e for _, e in server.spans)
    return {"peak": server.requests.peak, "throughput": SENT / (end - start)}


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
behind: dict[int, dict] = {}
async with LatencyServer(latency=SLOW) as server:
    for permits in (5, 20, 80):
        behind[permits] = await run_behind(server, permits)

for permits, r in behind.items():
    in_flight = min(permits, POOL)  # what the smaller cap lets in
    print(f"Semaphore({permits:>2}): peak in flight {r['peak']:>2},",
          f"throughput {r['throughput']:>4.0f}/s;",
          f"the law with {in_flight} in flight: {in_flight / SLOW:.0f}/s")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-bigger-semaphore-cannot-pass-the-pool
assert behind[5]["peak"] <= 5
assert behind[20]["peak"] <= POOL and behind[80]["peak"] <= POOL, (
    "past 10 permits, the pool, not the semaphore, set how many were in flight")
assert behind[80]["throughput"] <= 1.05 * POOL / SLOW, (
    "so 80 permits stayed under the ceiling of 10 in flight, POOL / W")
print("✓ 20 and 80 permits: at most 10 in flight, and no more than 10 ÷ W per second")

# %% [markdown]
# :::{dropdown} Why
#
# The c in Little's law is what is really in flight, and that is the smallest cap on the path.
# Five permits let in 5, so about 5 ÷ 0.05 = 100 requests per second. Twenty and eighty
# permits both met the pool's 10 connections, so both ran 10 at a time, with the same ceiling
# of 10 ÷ 0.05 = 200 per second: the semaphore's extra permits only moved the queue from the
# semaphore into the pool. To raise the throughput, raise the smallest cap, here the pool,
# and check that the server can take the load.
#
# :::

# %% [markdown]
# ## Rate limit or concurrency limit: what happens when the server slows down?
#
# A **concurrency limit** (a semaphore, a pool) bounds how many requests are in flight. A
# **rate limit** bounds how many *start* per second. Below, 16 requests go to a fast server
# (20 ms) and to a slowed-down one (100 ms), once paced at 100 starts per second, once through
# a `Semaphore(4)`. We count the peak in flight at the server. Predict: when the server slows
# down, what happens to the peak under each limit?

# %%
async def paced(client: httpx.AsyncClient, url: str, n: int, per_second: float) -> None:
    tasks = []
    for _ in range(n):
        tasks.append(asyncio.create_task(client.get(url)))
        await asyncio.sleep(1 / per_second)
    await asyncio.gather(*tasks)


async def limited(client: httpx.AsyncClient, url: str, n: int, limit: int) -> None:
    permits = asyncio.Semaphore(limit)

    async def one() -> None:
        async with permits:
            await client.get(url)

    await asyncio.gather(*(one() for _ in range(n)))


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
peaks, rates = {}, {}  # peak in flight, and requests finished per second
no_pool_cap = httpx.Limits(max_connections=None)
async with httpx.AsyncClient(limits=no_pool_cap) as client:
    for latency in (0.02, 0.1):
        async with LatencyServer(latency=latency) as server:
            start = time.perf_counter()
            await paced(client, server.url, 16, per_second=100)
            rates[("rate 100/s", latency)] = 16 / (time.perf_counter() - start)
            peaks[("rate 100/s", latency)] = server.requests.peak
            server.reset()
            start = time.perf_counter()
            await limited(client, server.url, 16, limit=4)
            rates[("Semaphore(4)", latency)] = 16 / (time.perf_counter() - start)
            peaks[("Semaphore(4)", latency)] = server.requests.peak

for kind in ("rate 100/s", "Semaphore(4)"):
    print(f"{kind:>13}: peak in flight {peaks[(kind, 0.02)]} at 20 ms,",
          f"{peaks[(kind, 0.1)]} at 100 ms;",
          f"throughput {rates[(kind, 0.02)]:.0f}/s, then {rates[(kind, 0.1)]:.0f}/s")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-rate-limit-lets-in-flight-grow-with-latency
assert peaks[("Semaphore(4)", 0.02)] <= 4 and peaks[("Semaphore(4)", 0.1)] <= 4
assert peaks[("rate 100/s", 0.1)] > 4, "at the same rate, a slow server holds more requests than the limit of 4"
assert peaks[("rate 100/s", 0.1)] >= 2 * peaks[("rate 100/s", 0.02)], "and more than when it was fast"
print("✓ the Semaphore held in-flight at 4; at a fixed rate, a slower server held more")

# %% [markdown]
# :::{dropdown} Why
#
# Paced at r starts per second, each request stays W, so the requests in flight at a moment
# are the ones started in the last W: about r × W of them (Little's law again). At 100 starts
# per second that is 100 × 0.1 = 10 requests at once on the slowed-down server, where the fast
# one held about 100 × 0.02 = 2. The printed peaks land within one or so of these: the pacing
# loop's sleeps run a little late, which lowers them, and a request stays a little longer than
# W, which raises them. When the server slows down, the same rate piles more requests on it,
# exactly when it can least afford them. The semaphore kept its 4, so by the same law
# its throughput, 4 ÷ W, is what fell with the server: about 200/s, then 40/s, in the
# printed line (a little under, since each request stays a little longer than W).
#
# A rate limit does not protect a server from its own slowness. Use a concurrency limit to
# protect the server (and your own memory and sockets), and a rate limit when someone else
# imposes one on you (a paid API's requests per minute). Often you need both.
#
# :::

# %% [markdown]
# :::{dropdown} Going further: version notes
#
# - The default thread pool's size is `min(32, os.cpu_count() + 4)` on 3.11 and 3.12; from
#   3.13 it counts only the CPUs this process may run on, `min(32, os.process_cpu_count() + 4)`
#   (the two differ under CPU affinity, for instance in a container pinned to some cores).
#   The folded instruments compute the one that applies.
# - `asyncio.to_thread` exists since 3.9; a loop's default executor can be replaced with
#   `loop.set_default_executor(ThreadPoolExecutor(max_workers=...))`.
# - httpx's and aiohttp's defaults are library versions' choices, not Python's: this chapter
#   reads them from the installed libraries (httpx 0.28, aiohttp 3.14 here) instead of quoting
#   them.
# - A Ray actor's `max_concurrency` is the same kind of cap; here it appears only in slime's
#   code (below), and chapter 28 runs it on a real local Ray.
#
# :::
#
# ## Exercise 25.1 · A token bucket
#
# Implement `TokenBucket(rate, burst, clock, sleep)`, a rate limiter with bursts:
#
# 1. it starts full: `burst` tokens, refilled at `rate` per second, never beyond `burst`;
# 2. `await bucket.take()` takes a token if one is there, or else waits with
#    `await sleep(seconds)` only for the part still missing, then reads `clock()` again;
# 3. over any stretch from a to b, at most `burst + rate × (b − a)` takes return, however many
#    tasks call;
# 4. takes return in the order they were called;
# 5. a take cancelled while it waits raises `CancelledError` and takes no token.
#
# :::{dropdown} A worked example of the refill
#
# The refill is `tokens = min(burst, tokens + elapsed × rate)`. With
# `rate=2` and `burst=3`: three takes at t = 0 return at once and leave 0 tokens. A fourth take
# at t = 0 finds none, so it sleeps for the missing token, 1 ÷ 2 = 0.5 s; at t = 0.5 the
# bucket holds min(3, 0 + 0.5 × 2) = 1 token, which it takes. Had that sleep woken late, at
# t = 0.6, the bucket would hold 0.6 × 2 = 1.2 tokens: the take uses one, and the 0.2 left
# counts for the next take. If nobody takes anything for the next 5 s, the bucket then holds
# min(3, 0 + 5 × 2) = 3 tokens, not 10.
#
# The tokens are floats, and a refill can land a hair under a whole token (0.1 × 3 is
# 0.30000000000000004, and 0.3 − 0.1 − 0.1 − 0.1 is not 0). So compare with a small tolerance,
# `tokens >= 1 - 1e-9`, not `tokens >= 1`, or a take can sleep again for a missing 1e-16.
#
# The visible test below runs such an example on a `VirtualClock`: `take_in_turn` reads
# `clock.time()` after each take, and four takes from a bucket with `rate=10`, `burst=2` must
# come back at 0, 0, 0.1 and 0.2 virtual seconds.
#
# :::
#
# :::{dropdown} Hint: first come, first served, and a cancelled take
#
# Two pieces this chapter has not run. Order: hold an `asyncio.Lock` (chapter 15) around the
# refill-and-wait loop of `take()`. A take that arrives while another waits then queues on the
# lock, and asyncio's `Lock` lets its waiters in in the order they came, a newcomer never
# jumping ahead of them. Cancellation: a take cancelled while it waits gets `CancelledError`
# from its `await sleep(...)`; let it propagate. `async with` releases the lock on the way out,
# and because the take subtracts its token only once it has one, nothing is lost.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (`rate` and `burst` from 1 up; from one take to eight, called
# one after another or several at the same instant, after idle stretches short or long; takes
# cancelled while they wait; a `sleep` that wakes on time or a few milliseconds late):
#
# - **burst**: the first `burst` takes on a full bucket return at once, without waiting;
# - **never over-admits**: over any stretch of time, with one task or many calling at once, at
#   most `burst + rate × (b − a)` takes return;
# - **no longer than needed**: every take returns the moment its token is back (half a token
#   back means half the wait), not later; an idle bucket refills to `burst`, not beyond; when
#   `sleep` wakes a little late (as a real one does), what came back meanwhile counts for the
#   takes after it, up to `burst`;
# - **first come, first served**: takes return in the order they were called, even when one
#   arrives at the moment a token comes back;
# - **cancellation**: a take cancelled while it waits raises `CancelledError`, takes no token,
#   and the takes behind it move up;
# - **time** only through `clock` and `sleep`.
#
# :::
#
# The tests pass the `clock` and `sleep` of a `VirtualClock`, whose `drive(coroutine)` jumps
# the clock to the next wake-up whenever every task sleeps: no real time passes.

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
class TokenBucket:
    """At most `burst` takes at once, then `rate` per second on average."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic, sleep=asyncio.sleep) -> None:
        ### BEGIN SOLUTION
        self.rate, self.burst = rate, burst
        self.clock, self.sleep = clock, sleep
        self.tokens = float(burst)
        self.updated = clock()
        self.lock = asyncio.Lock()
        ### END SOLUTION

    async def take(self) -> None:
        ### BEGIN SOLUTION
        async with self.lock:  # waiters queue here, one at a time, in arrival order
            while True:
                now = self.clock()
                self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= 1 - 1e-9:
                    self.tokens -= 1
                    return
                await self.sleep((1 - self.tokens) / self.rate)
        ### END SOLUTION


# %% tags=["tests"]
async def take_in_turn(bucket: TokenBucket, clock: VirtualClock, n: int) -> list[float]:
    times = []
    for _ in range(n):
        await bucket.take()
        times.append(round(clock.time(), 6))
    return times


visible_clock = VirtualClock()
visible_bucket = TokenBucket(rate=10, burst=2, clock=visible_clock.time,
                             sleep=visible_clock.sleep)
got = await visible_clock.drive(take_in_turn(visible_bucket, visible_clock, 4))
assert got == [0.0, 0.0, 0.1, 0.2], (
    "burst 2 at rate 10/s: two takes at once, then one every 0.1 s; "
    f"got the times {got!r}")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
def _over_admitted(times: list[float], rate: float, burst: int) -> str | None:
    times = sorted(times)
    for i in range(len(times)):
        for j in range(i, len(times)):
            allowed = burst + rate * (times[j] - times[i]) + 1e-6
            if j - i + 1 > allowed:
                return (f"{j - i + 1} takes returned between t={times[i]:.3f} and t={times[j]:.3f}, but a bucket "
                        f"of rate {rate}/s and burst {burst} allows at most {math.floor(allowed)}: over-admitted")
    return None


async def _takes_at(bucket, clock, n: int, at_once: bool) -> list[float]:
    times: list[float] = []

    async def one() -> None:
        await bucket.take()
        times.append(clock.time())

    if at_once:
        await asyncio.gather(*(one() for _ in range(n)))
    else:
        for _ in range(n):
            await one()
    return times


async def _hidden_token_bucket() -> None:
    # 1. a full bucket lets `burst` takes through without waiting
    _clock = VirtualClock()
    _bucket = TokenBucket(rate=10, burst=3, clock=_clock.time, sleep=_clock.sleep)
    _first = await _clock.drive(_takes_at(_bucket, _clock, 3, at_once=False))
    assert _first == [0.0, 0.0, 0.0], f"the first burst takes must not wait (returned at {_first})"

    # 2. then one take per 1/rate, through the clock and sleep it was given, never more, never slower
    _more = await _clock.drive(_takes_at(_bucket, _clock, 10, at_once=False))
    assert _clock.sleeps > 0, "take() must wait with the sleep function it was given (and read clock())"
    _problem = _over_admitted(_first + _more, 10, 3)
    assert _problem is None, _problem
    assert _more[-1] <= 1.0 + 1e-6, f"10 takes at 10/s from an empty bucket took until t={_more[-1]:.3f}: waits longer than needed"

    # 3. many tasks at once must not all take the same token
    _clock = VirtualClock()
    _bucket = TokenBucket(rate=5, burst=2, clock=_clock.time, sleep=_clock.sleep)
    _times = await _clock.drive(_takes_at(_bucket, _clock, 12, at_once=True))
    assert len(_times) == 12, "every take must return eventually"
    _problem = _over_admitted(_times, 5, 2)
    assert _problem is None, _problem + " when many tasks call take() at once"
    assert max(_times) <= 2.0 + 1e-6, f"12 takes at 5/s with burst 2 took until t={max(_times):.3f}: waits longer than needed"

    # 4. an idle bucket refills to `burst`, not beyond
    _clock = VirtualClock()
    _bucket = TokenBucket(rate=10, burst=2, clock=_clock.time, sleep=_clock.sleep)

    async def _idle_then_rush() -> list[float]:
        await _takes_at(_bucket, _clock, 2, at_once=False)
        await _clock.sleep(100)
        return await _takes_at(_bucket, _clock, 6, at_once=True)

    _rush = await _clock.drive(_idle_then_rush())
    _immediate = sum(_t <= 100 + 1e-9 for _t in _rush)
    assert _immediate == 2, (f"after 100 s idle, {_immediate} takes returned at once: tokens must not pile up "
                             "beyond burst")

    # 5. a wait counts the fraction of a token already back: half a token is half the wait
    _clock = VirtualClock()
    _bucket = TokenBucket(rate=10, burst=3, clock=_clock.time, sleep=_clock.sleep)

    async def _empty_then_partly_refilled() -> list[float]:
        await _takes_at(_bucket, _clock, 3, at_once=False)
        await _clock.sleep(0.05)  # half a token comes back
        return await _takes_at(_bucket, _clock, 3, at_once=False)

    _after = [round(_t, 6) for _t in await _clock.drive(_empty_then_partly_refilled())]
    assert _after == [0.1, 0.2, 0.3], (
        f"with half a token back at t=0.05, takes must return at t=0.1, 0.2, 0.3, got {_after}: the wait waits "
        "longer than needed; sleep only for the part of a token still missing, (1 - tokens) / rate (chapter 25)")

    # 6. first come, first served: B calls at t=0.05 and waits for the token due at t=0.1; C calls
    #    at t=0.1, just as it comes back (C's own sleep was set first, so C runs first then).
    _clock = VirtualClock()
    _bucket = TokenBucket(rate=10, burst=1, clock=_clock.time, sleep=_clock.sleep)
    _served: dict[str, float] = {}

    async def _arrive(name: str, at: float) -> None:
        await _clock.sleep(at)
        await _bucket.take()
        _served[name] = round(_clock.time(), 6)

    async def _b_then_c() -> None:
        await _bucket.take()  # t=0: the only token
        await asyncio.gather(_arrive("C", 0.1), _arrive("B", 0.05))

    await _clock.drive(_b_then_c())
    assert _served == {"B": 0.1, "C": 0.2}, (
        f"B called take() at t=0.05 and C at t=0.1, but they were served at t={_served.get('B')} and "
        f"t={_served.get('C')}: first come, first served; a take that arrives while another waits must "
        "queue behind it (hold an asyncio.Lock around the wait; chapter 25)")


await asyncio.wait_for(_hidden_token_bucket(), timeout=20)

# Generated scenarios (issue 37): the same takes through TokenBucket and the reference, on
# virtual time, compared on when each take returns or is cancelled (lab_snippets.scenarios
# explains the pattern). Calls come at tenths of a second and every token comes back at one;
# cancels come 0.03 s past, so no outcome hangs on two events at one instant.
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "TokenBucket")


@_dc.dataclass(frozen=True)
class _Scenario:
    rate: int
    burst: int
    takes: tuple  # (called at, cancelled at or None), one per task
    late: float = 0.0  # every sleep of the bucket wakes this much later than asked, as a real one does

    def describe(self) -> str:
        takes = "; ".join(f"take {k} called at {_sc.fmt(at)}" + (f", cancelled at {_sc.fmt(c)}" if c is not None else "")
                          for k, (at, c) in enumerate(self.takes))
        late = f"; every sleep of the bucket wakes {self.late:g} s late" if self.late else ""
        return f"TokenBucket(rate={self.rate}, burst={self.burst}), each take in a task of its own: {takes}{late}"


@_st.composite
def _scenarios(draw):
    rate, burst = draw(_st.sampled_from([10, 1, 2, 5])), draw(_st.integers(1, 3))
    takes = []
    for _ in range(draw(_st.integers(1, 8))):
        at = draw(_st.sampled_from([0, 0, 0.1, 0.3, 0.5, 1, 2, 100]))
        cancel = draw(_st.sampled_from([None, None, None, 0.03, 0.13, 0.53]))
        takes.append((at, None if cancel is None else round(at + cancel, 9)))
    # A sleep that wakes 4 ms late: wakes then fall 4 ms past a tenth, never on a call or a cancel. Only
    # with burst 2 or more: with burst 1 the bucket is full while the take oversleeps, so what comes back
    # meanwhile is lost (never beyond `burst`), and an answer that counts its token from when it was due
    # is as right as one that counts from when it woke.
    late = draw(_st.sampled_from([0, 0.004])) if burst > 1 else 0
    return _Scenario(rate, burst, tuple(sorted(takes, key=lambda t: t[0])), late)


def _observe(cls, s: _Scenario) -> dict:
    async def main() -> dict:
        clock = VirtualClock()
        async def sleep(seconds: float) -> None:  # the bucket's sleep: it wakes s.late past its time,
            # but not a sleep of less than a microsecond (the float rounding of a token already back)
            await clock.sleep(seconds + s.late if seconds >= 1e-6 else seconds)

        bucket = cls(rate=s.rate, burst=s.burst, clock=clock.time, sleep=sleep)
        out: list = [("still waiting", None)] * len(s.takes)
        order: list = []

        async def one(k: int, at: float) -> None:
            await clock.sleep(at)
            order.append(k)
            try:
                await bucket.take()
                out[k] = ("returned", round(clock.time(), 6))
            except asyncio.CancelledError:
                out[k] = ("cancelled", round(clock.time(), 6))
                raise
            except Exception as exc:  # noqa: BLE001 - what came out is the observation
                out[k] = (_sc.kind_of(exc), round(clock.time(), 6))

        async def cancel(task: asyncio.Task, at: float) -> None:
            await clock.sleep(at)
            task.cancel()

        async def everyone() -> None:
            tasks = [asyncio.ensure_future(one(k, at)) for k, (at, _) in enumerate(s.takes)]
            stops = [asyncio.ensure_future(cancel(t, c)) for t, (_, c) in zip(tasks, s.takes, strict=True)
                     if c is not None]
            await asyncio.wait(tasks)
            for stop in stops:
                stop.cancel()
            if stops:
                await asyncio.wait(stops)

        hung = False
        try:
            await clock.drive(everyone(), real_timeout=2.0)
        except TimeoutError:
            hung = True
        return {"out": out, "order": order, "hung": hung}

    run = _sc.run_virtual(main, limit=10_000)
    return run.value or {"out": [], "order": [], "hung": True}


def _compare(me: dict, it: dict, s: _Scenario) -> str | None:
    if me["hung"]:
        return ("take() never returned (2 s of real time, or a wait the virtual clock cannot end): wait only with "
                "the `sleep` you were given, for the part of a token still missing")
    _problem = _over_admitted([t for kind, t in me["out"] if kind == "returned"], s.rate, s.burst)
    if _problem:
        return "over-admitted: " + _problem
    called = {k: n for n, k in enumerate(it["order"])}
    for k, ((kind, at), (want, then)) in enumerate(zip(me["out"], it["out"], strict=True)):
        if kind == want and (kind != "returned" or abs(at - then) < 1e-6):
            continue
        if want == "cancelled" and kind == "returned":
            return (f"a cancelled take returned: take {k} was cancelled at {_sc.fmt(s.takes[k][1])} while it "
                    f"waited, and returned at {_sc.fmt(at)}: let CancelledError out of take(), with no token taken")
        if want == "returned" and kind != "returned":
            seen = f"ended {kind!r} at {_sc.fmt(at)}" if at is not None else "never returned"
            return (f"waited longer than needed: take {k} could return at {_sc.fmt(then)} but {seen}: wait only "
                    "for the part of a token still missing, (1 - tokens) / rate")
        behind = [j for j, (kj, tj) in enumerate(me["out"])
                  if kj == "returned" and called[j] > called[k] and tj < at - 1e-6]
        if behind:
            return (f"first come, first served: take {k} returned at {_sc.fmt(at)}, after take {behind[0]}, "
                    "called later: a take that arrives while another waits queues behind it (an asyncio.Lock "
                    "around the wait)")
        if kind == "returned" and at > then:
            gone = [j for j, (kj, _) in enumerate(it["out"]) if kj == "cancelled" and called[j] < called[k]]
            why = (f"take {gone[0]} was cancelled while it waited, so it takes no token and the takes behind it "
                   "move up" if gone else "refill from the last update, up to `burst`, and sleep (1 - tokens) / rate"
                   + ("; a sleep wakes late, so read clock() after it: what came back meanwhile counts for the takes "
                      "after it" if s.late else ""))
            return (f"waited longer than needed: take {k} returned at {_sc.fmt(at)}, but its token was back at "
                    f"{_sc.fmt(then)}: {why}")
        if kind == "returned":
            return (f"over-admitted: take {k} returned at {_sc.fmt(at)}, before its token was back at "
                    f"{_sc.fmt(then)} (a cancelled take gives back no token it never took)")
        return f"take {k} ended {kind!r} at {_sc.fmt(at)}, where it should end {want!r} at {_sc.fmt(then)}"
    return None


_sc.differential(TokenBucket, _reference, _scenarios(), _observe, _compare, what="TokenBucket",
                 examples=40, hint="chapter 25")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - Every layer has a cap of its own, and the smallest one on the path wins: httpx's pool
#   (100 connections by default), aiohttp's connector (100), asyncio's default thread pool
#   (min(32, CPUs + 4)), a Ray actor's `max_concurrency`, your semaphore. Extra work does not
#   fail; it queues.
# - A queue inside a timeout eats the budget before the request is sent: aiohttp's total
#   timeout includes the wait for a pooled connection.
# - Little's law, in flight = throughput × latency, bounds what a cap allows: throughput ≤
#   cap ÷ latency. A run comes close to the bound only when nothing smaller holds it back
#   (another cap, the client's own speed).
# - A concurrency limit protects a slow server; a rate limit lets in-flight work grow with the
#   server's latency. A token bucket allows `burst` at once and `rate` per second after.
#
# **What's next.** Chapter 26 runs child processes from coroutines, where a blocking call is a
# cap of one.
#
# ## In slime
#
# slime sets its own cap on three HTTP clients, quoted below: the rollout's shared httpx client,
# the actors of distributed POST, and the reward hub's aiohttp session. Other clients keep their
# library's defaults. Every HTTP client in slime is listed in the [source
# inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("25")

# %% tags=["remove-input"]
show_call_site("25b")

# %% tags=["remove-input"]
show_call_site("25c")

# %% [markdown]
# One layer slime leaves at Python's default: the thread pool. The Megatron teacher server
# (chapter 08) is an aiohttp server that gets a model's outputs from a Ray actor. It reads each
# Ray result with `await asyncio.to_thread(ray.get, ref)`, and `ray.get` blocks its thread until
# the result exists (chapter 28 teaches Ray). A `/generate` request makes one such wait to read
# the sample manager's statistics, one to submit its input, then one more at each poll for the
# result, 50 ms apart (chapter 08 quotes the poll,
# chapter 28 the helper). Each of those waits holds a thread of the default pool, so, as in
# this chapter's first experiment, min(32, CPUs + 4) of them run at once. On a host with 16
# CPUs that is 20 threads, and a 21st wait queues for a thread even when its answer is ready.
#
# That last cost, run on this machine: one more wait than the default pool has threads
# (`executor_default`, worked out in the folded instruments), each a blocking wait in
# `to_thread` for an answer of its own. The last wait's answer is ready from the start; the
# others come 0.3 s later.

# %%
answers = [threading.Event() for _ in range(executor_default + 1)]
answers[-1].set()  # the last wait's answer is there before it starts
with borrowed_default_executor():  # a fresh default-sized pool, shut down after
    waits = [asyncio.ensure_future(asyncio.to_thread(answer.wait, 2))
             for answer in answers]
    await asyncio.sleep(0.3)
    ready_wait_returned = waits[-1].done()
    for answer in answers:
        answer.set()
    await asyncio.wait_for(asyncio.gather(*waits), 5)
print(f"{len(waits)} waits, {executor_default} threads:",
      "the wait whose answer was ready had returned after 0.3 s:", ready_wait_returned)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-ready-answer-waits-for-a-thread
assert not ready_wait_returned, "the ready wait queued behind the pool's busy threads"
assert all(wait.result() for wait in waits), "then every wait got its answer"
print("✓ the ready answer waited 0.3 s for a free thread")

# %% [markdown]
# So on a host with 16 CPUs, the teacher server's 21st wait for a Ray result sits in the pool's
# queue while its answer is already there, for as long as the 20 waits ahead of it hold their
# threads.
