# %% [markdown]
# # 11 · ContextVar: concurrent tasks keep their own context
# *ContextVar：让并发任务保留各自的上下文*
#
# **The question.** Hundreds of samples are generated concurrently on one event loop, and
# logging or tracing code deep inside wants to know "which sample am I working for, and
# inside which span?" without every function passing it along. Where can that value live
# so that concurrent tasks do not see each other's?
#
# **You will**
# 1. find out what a module-level "current request" variable holds when several tasks set it;
# 2. use a `contextvars.ContextVar` instead, and find out **when** a task takes its own
#    copy of the context;
# 3. keep a stack of nested spans with `set` and `reset(token)`, as slime's tracing does,
#    and run the same program with a plain list as the stack;
# 4. carry the context into a thread: `asyncio.to_thread`, a bare `threading.Thread`, and a
#    `Thread` whose target is `contextvars.copy_context().run`.
#
# **Needs** chapters 03 and 04 (tasks), chapter 08 (`to_thread`) · about 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. In the first cell, `figure_style()` only sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import contextvars
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from lab_snippets.loopwatch import borrowed_default_executor
from lab_snippets.thread_workers import join_all
from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## Predict: what does each handler's log line say?
#
# A warm-up. Three concurrent handlers each store their request id in a module-level
# variable, await a model call, then log the variable. Which request does each line name?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
current_request = None


def log_line(message: str) -> str:
    return f"[{current_request}] {message}"


async def handle_with_global(request_id: str) -> tuple[str, str]:
    global current_request
    current_request = request_id
    await asyncio.sleep(0.01)  # the model call: other handlers run meanwhile
    return request_id, log_line("reward computed")


global_logs = await asyncio.gather(*(handle_with_global(f"req-{i}") for i in range(3)))
for request_id, line in global_logs:
    print(f"{request_id}: {line}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-global-is-shared-by-tasks
wrong = [request_id for request_id, line in global_logs
         if not line.startswith(f"[{request_id}]")]
assert wrong == ["req-0", "req-1"], (
    f"every handler logged the request that set the variable last; wrong: {wrong}")
print("✓ req-0 and req-1 logged req-2: one variable, shared by every task")

# %% [markdown]
# :::{dropdown} Why
#
# One variable, shared by every task: each handler set it and then awaited, so by the time
# any of them read it, only the last writer's value, `req-2`, was left.
#
# :::
#
# A `ContextVar` looks like a global (you create it once, at module level) but its value
# lives in the **current context**, and every asyncio task runs in a context of its own
# (a copy of its creator's, unless `create_task(..., context=ctx)` hands it one, 3.11+).

# %%
request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id",
                                                                     default="-")


def log_line_ctx(message: str) -> str:
    return f"[{request_id_var.get()}] {message}"


async def handle_with_contextvar(request_id: str) -> tuple[str, str]:
    request_id_var.set(request_id)
    await asyncio.sleep(0.01)
    return request_id, log_line_ctx("reward computed")


ctx_logs = await asyncio.gather(*(handle_with_contextvar(f"req-{i}") for i in range(3)))
for request_id, line in ctx_logs:
    print(f"{request_id}: {line}")
notebook_value = request_id_var.get()
print("the notebook's own value:", notebook_value)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: each-task-keeps-its-own-value
assert all(line.startswith(f"[{request_id}]") for request_id, line in ctx_logs), (
    f"each handler logged its own request: {ctx_logs}")
assert notebook_value == "-", "the tasks' sets did not reach the notebook's own context"
print("✓ each handler logged its own request; the notebook's value stayed '-'")

# %% [markdown]
# ## Predict: when does a task take its copy?
#
# In the cell below the parent sets `batch-1` and creates the task `early`;
# then, before `early` has run a single line, the parent sets `batch-2`. A second task,
# `setter`, sets a value of its own inside the task. Which value does `early` see, and which
# value does the parent see once all three tasks are done?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def report(label: str, seen: dict[str, str], set_to: str | None = None) -> None:
    if set_to is not None:
        request_id_var.set(set_to)
    await asyncio.sleep(0)
    seen[label] = request_id_var.get()


seen: dict[str, str] = {}
request_id_var.set("batch-1")
early = asyncio.create_task(report("early", seen))
setter = asyncio.create_task(report("setter", seen, set_to="task's own"))
request_id_var.set("batch-2")
late = asyncio.create_task(report("late", seen))
await asyncio.gather(early, setter, late)
parent_sees = request_id_var.get()
request_id_var.set("-")
for label, value in seen.items():
    print(f"task {label:<7} sees {value!r}")
print(f"the parent sees {parent_sees!r}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-task-copies-the-context-when-created
assert seen == {"early": "batch-1", "setter": "task's own", "late": "batch-2"}, seen
assert parent_sees == "batch-2"
print("✓ each task saw the value at its creation; the task's own set stayed inside it")

# %% [markdown]
# :::{dropdown} Why
#
# `asyncio.create_task` (and so `gather` and `TaskGroup`) gives each task a **copy** of the
# current context. Look at `early`'s line first: the parent had moved on to `batch-2` before
# `early` started, so its value tells when the copy was taken: when the task is **created**,
# not when it starts running. A
# task created later (`late`) sees the later value, and what `setter` set stayed inside
# `setter`: the parent still sees `batch-2`.
#
# :::

# %% [markdown]
# ## Measure: which parent does each span record, with a stack in a `ContextVar`?
#
# Tracing needs more than one value: the stack of spans that are open right now, so that a
# new span knows its parent. `var.set(value)` returns a `Token`; `var.reset(token)` puts
# back exactly the value from before that `set`, however deeply spans nest. Put the `reset`
# in a `finally` and the stack is restored on every path, exceptions and cancellation
# included.
#
# Three samples run concurrently, each with a span of its own (`sample 0`, `sample 1`,
# `sample 2`) holding a `generate` and then a `reward` span. Every span records its parent;
# the timeline records when it was open.

# %%
SPAN_STACK: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "span_stack", default=())
parents: dict[str, str | None] = {}
tl = Timeline()  # the spans' timeline, drawn below


@contextmanager
def span(name: str) -> Iterator[None]:
    stack = SPAN_STACK.get()
    full_name = " > ".join(stack + (name,))
    parents[full_name] = stack[-1] if stack else None
    token = SPAN_STACK.set(stack + (name,))
    try:
        with tl.span(full_name, state="waiting"):  # waits on (simulated) model calls
            yield
    finally:
        SPAN_STACK.reset(token)


# %%
async def traced_sample(sample: int) -> None:
    with span(f"sample {sample}"):
        with span("generate"):
            await asyncio.sleep(0.03 + 0.01 * sample)
        with span("reward"):
            await asyncio.sleep(0.02)


await asyncio.gather(*(traced_sample(i) for i in range(3)))
for name, parent in parents.items():
    print(f"{name:<22} parent: {parent}")
stack_after = SPAN_STACK.get()

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: reset-restores-the-parent-span
assert all(parent == name.split(" > ")[0] for name, parent in parents.items()
           if " > " in name), "every generate and reward span has its sample as parent"
assert stack_after == (), f"the notebook's span stack after the run: {stack_after}"
print("✓ every generate and reward span found its own sample as parent")

# %% [markdown]
# Each `sample` span names no parent, and each `generate` and `reward` span names its own
# sample, because a task's `set` and `reset` change only its own copy of the context.
#
# Now the same program with the stack in a module-level list, pushed and popped around each
# span, as code without `ContextVar` would do it. `span_with_global_stack` takes its parent
# from the top of the list, and pops the top entry when it ends, as a plain list stack does.

# %%
shared_stack: list[str] = []
global_records: list[tuple[str, str | None]] = []  # (span, the parent it found)


@contextmanager
def span_with_global_stack(name: str) -> Iterator[None]:
    found = shared_stack[-1] if shared_stack else None
    global_records.append((name, found))
    shared_stack.append(name)
    try:
        with shared_tl.span(name, state="waiting"):
            yield
    finally:
        shared_stack.pop()


# %% [markdown]
# The folded cell below holds the code that draws both runs one above the other, one lane per
# sample, each `generate` and `reward` span labelled with the parent it found, and
# `own_parent(name)`, the parent a span should find (`sample 1` for `generate 1`, none for a
# `sample` span).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
import matplotlib.pyplot as plt


def own_parent(name: str) -> str | None:
    """The parent a span of the shared-list run should find: its sample, or none."""
    return None if name.startswith("sample") else f"sample {name.split()[1]}"


def draw_both_runs() -> tuple[Timeline, Timeline]:
    """The ContextVar run on top, the shared list below; returns the two drawn timelines."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 4.6), layout="constrained",
                                      sharex=True)
    fig.suptitle("Which parent each generate and reward span found")
    with_context = Timeline()
    with_context.t0 = tl.t0
    for name, parent in parents.items():
        if " > " in name:
            sample, part = name.split(" > ")
            done = tl.spans_of(name)[0]
            with_context.add(sample, tl.t0 + done.start, tl.t0 + done.end, "waiting")
            top.text((done.start + done.end) / 2, int(sample.split()[1]),
                     f"{part}\nparent: {parent}", ha="center", va="center", fontsize=7)
    with_shared = Timeline()
    with_shared.t0 = shared_tl.t0
    for name, found in global_records:
        right = own_parent(name)
        if right is not None:
            done = shared_tl.spans_of(name)[0]
            with_shared.add(right, shared_tl.t0 + done.start, shared_tl.t0 + done.end,
                            "waiting" if found == right else "failed")
            bottom.text((done.start + done.end) / 2, int(right.split()[1]),
                        f"{name.split()[0]}\nparent: {found}", ha="center", va="center",
                        fontsize=7)
    lanes = [f"sample {i}" for i in range(3)]
    PARENT = {"waiting": "right (its own sample)", "failed": "wrong (another sample's)"}
    with_context.plot("a ContextVar holding a tuple", ax=top, lanes=lanes, meanings=PARENT)
    with_shared.plot("one shared list", ax=bottom, lanes=lanes, meanings=PARENT)
    for ax in (top, bottom):
        ax.set_ylim(2.6, -0.75)
        if ax.get_legend() is not None:  # the colours say which parent was found
            ax.get_legend().get_title().set_text("parent span")
    top.set_xlabel("")
    return with_context, with_shared


# %% [markdown]
# ## Predict: which parent does each span find with a shared list?
#
# Three samples run concurrently again, each span pushed on the one shared list. Do the
# `generate` and `reward` spans still find their own sample as parent? The figure draws each
# of them labelled with the parent it found.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def sample_with_global_stack(sample: int) -> None:
    name = f"sample {sample}"
    with span_with_global_stack(name):
        with span_with_global_stack(f"generate {sample}"):
            await asyncio.sleep(0.03 + 0.01 * sample)
        with span_with_global_stack(f"reward {sample}"):
            await asyncio.sleep(0.02)


shared_tl = Timeline()  # the same spans, timed for the figure below
await asyncio.gather(*(sample_with_global_stack(i) for i in range(3)))
wrong_parents = [(name, found) for name, found in global_records  # generate and reward
                 if not name.startswith("sample") and found != own_parent(name)]
print("generate and reward spans with a wrong parent:", wrong_parents)
drawn_context, drawn_shared = draw_both_runs()  # the folded plotting code above

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert wrong_parents, "a shared stack gives spans the wrong parent"
# the samples overlapped, and the figure shows what the runs recorded
top_level = [tl.spans_of(f"sample {i}")[0] for i in range(3)]
assert max(s.start for s in top_level) < min(s.end for s in top_level), "the samples interleaved"
assert {span.state for span in drawn_context.spans} == {"waiting"}
assert "failed" in {span.state for span in drawn_shared.spans}, "the figure shows a wrong parent"
print(f"✓ {len(wrong_parents)} generate and reward spans found another task's span on top "
      "of the shared stack")

# %% [markdown]
# :::{dropdown} Why
#
# The three tasks overlap in time: samples 1 and 2 open their spans while sample 0 is still
# waiting in `generate`. In the figure a span is drawn orange when the parent it found is not
# its own sample. With the `ContextVar` (top) each task reads its own stack. The shared
# list (bottom) holds whatever any task pushed last, so once the samples interleave a span can
# find another task's span on top. (The two panels are two runs, each timed from its own
# start, so their first bars need not begin at the same moment.)
#
# Why do the `generate` spans survive? Each task opens `sample i` and `generate i` in one
# step, with no `await` between them, so no other task can push in between. Within a task the
# damage starts after the first `await`, and hits the `reward` spans.
#
# Here is the shared list through the run, top at the right (`s0` for `sample 0`, `g0` for
# `generate 0`, `r0` for `reward 0`). Each line: the time, what happens → the list after
# it; the parent found.
#
# - **0 s**: samples 0, 1, 2 in turn push `sample i` and `generate i` →
#   `s0 g0 s1 g1 s2 g2`; each `generate i` found its own `si`.
# - **0.03 s**: `generate 0` ends, `pop()` takes the top, `g2` → `s0 g0 s1 g1 s2`.
# - **0.03 s**: sample 0 opens `reward 0` → `s0 g0 s1 g1 s2 r0`; it found `s2`: wrong.
# - **0.04 s**: `generate 1` ends, `pop()` takes `r0`; sample 1 opens `reward 1` →
#   `s0 g0 s1 g1 s2 r1`; it found `s2`: wrong.
#
# Those are the wrong parents the answer printed; `reward 2`, opened at 0.05 s, finds
# `s2` on top, its own, by the luck of the order. Once the tasks interleave, `pop()` takes
# off whatever is on top, often another task's entry, so the list keeps entries of spans
# that have ended (`generate 0`) and loses some that are open (`reward 0`).
#
# :::
#
# ### Predict: a list in a `ContextVar`
#
# The span stack above is a tuple, and each span sets a new, longer one. Suppose the value
# is a list instead, and a task appends to it rather than calling `set`. The notebook sets
# `TAGS` to an empty list; two tasks each append one tag, let the other run, then read the
# list back. What does each task see, and what is in the notebook's list afterwards?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
TAGS: contextvars.ContextVar[list[str]] = contextvars.ContextVar("tags")
TAGS.set([])


async def tag_in_place(tag: str) -> list[str]:
    TAGS.get().append(tag)  # appends in place, without set()
    await asyncio.sleep(0)
    return list(TAGS.get())


seen_tags = await asyncio.gather(tag_in_place("a"), tag_in_place("b"))
notebook_tags = TAGS.get()
print("each task saw:", seen_tags, "| the notebook's list:", notebook_tags)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-mutated-list-is-shared-by-copies
assert seen_tags == [["a", "b"], ["a", "b"]] and notebook_tags == ["a", "b"], (
    f"both tasks appended to one list: {seen_tags}, {notebook_tags}")
print("✓ both tasks and the notebook saw ['a', 'b']: the copies share one list")

# %% [markdown]
# :::{dropdown} Why
#
# When a task is created its context is copied, but only shallowly: a task gets the same
# **objects** as its parent, so appending to the list changes the one list that every copy holds, the notebook's included,
# and the isolation is gone. slime's trace stacks are tuples, and each
# span sets a new one, which keeps them clear of this problem.
#
# :::

# %% [markdown]
# ## Threads: which ones carry the context?
#
# A log helper may also run in a thread. The cell below sets the request to `req-42` and
# reads it from a thread started three ways: by `asyncio.to_thread`; as a bare
# `threading.Thread`; and as `Thread(target=contextvars.copy_context().run, args=(fn,
# ...))`, whose target is the `run` method of a copy of the current context, so the
# thread calls `fn(...)` inside that copy. Chapter 08 stated that `to_thread` runs its
# function in a copy of the caller's context; this cell shows it. Predict the other two:
# does a bare `Thread`, and a thread running `copy_context().run`, see `req-42`, or the
# variable's default, `-`? (As in chapter 08, `borrowed_default_executor` lends
# `to_thread` a pool of its own and shuts it down afterwards, so no thread is left
# behind.)

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
def read_request_id(into: list[str]) -> None:
    into.append(request_id_var.get())


loop = asyncio.get_running_loop()
from_to_thread, from_bare_thread, from_copied_context = [], [], []
request_id_var.set("req-42")
with borrowed_default_executor(max_workers=1):  # to_thread's pool, shut down after
    await asyncio.to_thread(read_request_id, from_to_thread)

bare = threading.Thread(target=read_request_id, args=(from_bare_thread,), name="bare")
copied = threading.Thread(target=contextvars.copy_context().run,
                          args=(read_request_id, from_copied_context))
bare.start()
copied.start()
for thread in (bare, copied):
    thread.join(timeout=2)
request_id_var.set("-")
print(f"to_thread: {from_to_thread}, bare Thread: {from_bare_thread}, "
      f"Thread running copy_context().run: {from_copied_context}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: to-thread-carries-the-context
assert not join_all([bare, copied], timeout=2), "both threads ended"
assert from_to_thread == ["req-42"], "to_thread ran the function in a copy of the context"
# 3.14: with sys.flags.thread_inherit_context on (the free-threaded build's default) a new
# thread starts in a copy of the context of the code that called start().
inherits = bool(getattr(sys.flags, "thread_inherit_context", False))
assert from_bare_thread == (["req-42"] if inherits else ["-"]), (
    "a bare thread starts with an empty context")
assert from_copied_context == ["req-42"], "copy_context().run carried the context into the thread"
print("✓ to_thread and copy_context().run carried req-42 into the thread; a bare Thread did not")

# %% [markdown]
# :::{dropdown} Why
#
# `asyncio.to_thread(fn)` copies the current context and runs `fn` inside the copy in a
# worker thread, so a log helper called there still knows the request. A thread you start
# yourself with `threading.Thread` starts with an **empty** context, so the variable has
# only its default.
#
# `contextvars.copy_context()` returns a copy of the current context, and its
# `run(fn, *args)` calls `fn` inside that copy; so the third thread read `req-42`. Run the
# target inside a copy yourself like this whenever a thread you start must see the context.
#
# :::
#
# :::{dropdown} Python versions
#
# **Threads can inherit the context from 3.14 on.** Python 3.14 adds a `context=` argument
# to `threading.Thread` and a flag, `sys.flags.thread_inherit_context`. When the flag is on,
# a new thread starts with a copy of the context of the code that called `start()`, as a
# task does. The flag is **on by default in the free-threaded build** (`python3.14t`) and
# off in the default build, where the behaviour above stays; `-X thread_inherit_context=1`
# turns it on. So the same program can log the right request in its threads on one build
# and `-` on the other; the check above accepts either, by reading the flag. Before 3.14
# there is no flag and no `context=`, and a bare thread always starts empty. On 3.14 the third
# thread above could also be written
# `threading.Thread(target=read_request_id, args=(from_copied_context,), context=contextvars.copy_context())`;
# `copy_context().run` works on every version.
#
# :::

# %% [markdown]
# ## Before the exercise: a token used in another context
#
# One more rule: a token can undo its `set` only in the context where that `set` ran;
# anywhere else, `reset` raises `ValueError` and changes nothing. Item 4 of Exercise 11.1,
# below, needs it. A span
# runs into this rule when an async generator opens it in one task and a different task closes
# the generator: the generator's `finally`, with its `reset`, then runs in the closing task's
# context.
#
# The cell below is that case. The generator pushes `stream` on the span stack and yields;
# task A takes its first item. Task B sets a stack of its own, `rollout`, then closes the
# generator, and prints its stack before and after the close.

# %%
async def stream_in_span():  # opens a span and yields inside it
    stream_token = SPAN_STACK.set(SPAN_STACK.get() + ("stream",))
    try:
        yield "first chunk"
    finally:
        SPAN_STACK.reset(stream_token)


async def take_first(agen) -> str:  # task A
    return await anext(agen)


async def close_it(agen) -> None:  # task B, with a span of its own open
    SPAN_STACK.set(("rollout",))
    print("task B's stack before the close:", SPAN_STACK.get())
    try:
        await agen.aclose()
    except ValueError:
        print("aclose in task B raised ValueError")
    print("task B's stack after the close: ", SPAN_STACK.get())


agen = stream_in_span()
print("task A got:", await asyncio.create_task(take_first(agen)))
await asyncio.create_task(close_it(agen))

# %% [markdown]
# The close raised `ValueError` in task B, and task B's stack came through unchanged.
#
# The exercise's visible test builds the same case without tasks: `contextvars.Context()`
# makes a new, empty context, and its `run(fn, *args)` calls `fn` inside it (the `run` the
# third thread used above). A plain generator that opens the span in one such context and is
# closed in another meets the same rule:

# %%
def chunks_in_span():  # the same span, in a plain generator
    chunk_token = SPAN_STACK.set(SPAN_STACK.get() + ("stream",))
    try:
        yield "first chunk"
    finally:
        SPAN_STACK.reset(chunk_token)


chunks = chunks_in_span()
print("opened in one context:", contextvars.Context().run(next, chunks))
try:
    contextvars.Context().run(chunks.close)  # closed in another
except ValueError:
    print("close in another context raised ValueError")

# %% [markdown]
# Closing a span from another task, or another context, is routine, so a span helper whose
# exit calls `reset` unguarded hands this error to whoever closes it; item 4 of Exercise 11.1
# asks the helper to survive that close and leave the closing context's stack as it was.

# %% [markdown]
# ## Exercise 11.1 · A span helper that is safe under concurrency
#
# Implement `traced_span(name)`, a context manager that
#
# 1. records `(name, parent)` in `span_log`, where `parent` is the innermost span open **in
#    the current context** (or `None`);
# 2. makes `name` the innermost open span for the code inside the `with` block, using
#    `TRACE_STACK` (a `ContextVar` holding a tuple);
# 3. restores `TRACE_STACK` on the way out, also when the block raises;
# 4. may be closed in another context than the one it opened in: a generator that yields inside
#    the span and is closed from another task. There `reset` raises `ValueError` (the cell
#    above; the second quote in In slime); the exit must raise nothing of its own, let the block's error through,
#    and leave `TRACE_STACK` there as it was.
#
# It must give correct parents when many tasks trace at once on one loop.
#
# :::{dropdown} Hint: the two cross-task cases
#
# A task started inside an open span (the grader's "tasks started inside open spans") gets a
# copy of the context taken when it is created, so the span is on its stack, as `batch-1` was
# in `early`'s copy above; its own spans stay in its copy. And a `reset` that raises `ValueError` changed
# nothing (task B's stack was the same after the close), so catching that `ValueError` around
# the `reset`, and only there (`contextlib.suppress(ValueError)`), leaves the closing context as
# it was and lets any error of the block go on.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated programs (1 to 3 tasks side by side; spans nested up to three
# deep, names that repeat; tasks started inside open spans; waits that interleave the tasks;
# blocks that raise; spans opened in an async generator and closed from another task):
#
# - **parents**: each span's parent is the innermost span open in its own context: a task
#   inherits the spans open where it was created, and sees none of another task's;
# - **the stack**: `TRACE_STACK` inside a block ends with its name; after the block it is back to
#   what it was, whether the block ends or raises; a task's spans never show in its creator's
#   stack;
# - **the log**: one entry per span, in the order the spans open;
# - **closed elsewhere**: a span opened in one context and closed in another (a generator moved
#   between contexts, an async generator closed from another task, a task that inherited the
#   span or one that did not) closes without an error of its own, an error the block raised
#   still propagates, and `TRACE_STACK` in the closing context is what it was before the close.
#
# :::

# %%
TRACE_STACK: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "trace_stack", default=())
span_log: list[tuple[str, str | None]] = []


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    ### BEGIN SOLUTION
    from contextlib import suppress

    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set((*stack, name))
    try:
        yield
    finally:
        # Closed in another context (a generator closed from another task), reset raises
        # ValueError: that context's stack is not this span's to change, so leave it.
        with suppress(ValueError):
            TRACE_STACK.reset(token)
    ### END SOLUTION


# %% tags=["tests"]
span_log.clear()
with traced_span("rollout"):
    with traced_span("generate"):
        pass
    with traced_span("reward"):
        pass
assert span_log == [("rollout", None), ("generate", "rollout"),
                    ("reward", "rollout")], (
    "each span records (name, innermost open span), so 'generate' "
    f"and 'reward' sit under 'rollout'; got {span_log!r}")
visible_stack = TRACE_STACK.get()
assert visible_stack == (), (
    f"TRACE_STACK must be back to () after the outermost span, got {visible_stack!r}")
def stream_chunks() -> Iterator[str]:
    with traced_span("stream"):  # open while the generator is suspended
        yield "chunk"
chunks = stream_chunks()
contextvars.Context().run(next, chunks)  # opens the span in one context...
closer = contextvars.Context()
try:
    closer.run(chunks.close)  # ...and closes it in another
except ValueError as error:
    raise AssertionError(f"the exit raised in another context: {error!r}") from None
closer_stack = closer.run(TRACE_STACK.get)
assert closer_stack == (), f"the stack where the span closed changed: {closer_stack!r}"

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
# Each check runs in a fresh, empty context, so what earlier cells left in TRACE_STACK cannot
# decide the verdict.
async def _traced_sample(_i: int) -> None:
    with traced_span(f"sample-{_i}"):
        await asyncio.sleep(0.001 * (5 - _i))
        with traced_span(f"generate-{_i}"):
            await asyncio.sleep(0.001 * _i)
            with traced_span(f"tokenize-{_i}"):
                await asyncio.sleep(0)
async def _check_concurrent() -> None:
    span_log.clear()
    try:
        async with asyncio.timeout(2):
            await asyncio.gather(*(_traced_sample(_i) for _i in range(5)))
    finally:
        _log = list(span_log)
    _expected = {(f"sample-{_i}", None) for _i in range(5)}
    _expected |= {(f"generate-{_i}", f"sample-{_i}") for _i in range(5)}
    _expected |= {(f"tokenize-{_i}", f"generate-{_i}") for _i in range(5)}
    _wrong = sorted(set(_log) - _expected, key=str)
    assert not _wrong and len(_log) == len(_expected), (
        f"wrong parents under concurrency: with 5 tasks tracing at once, {len(_wrong)} span(s) got "
        f"another task's span (or none) as parent, e.g. {_wrong[:2]}; each task must see only the "
        "spans open in its own context: keep the stack in the ContextVar (chapter 11)")
    assert TRACE_STACK.get() == (), (
        "the caller's stack changed after the traced tasks ran: each task works on a copy of the "
        "context, so its spans must never reach the caller (chapter 11)")
async def _check_fan_out() -> None:
    """Tasks started inside an open span: each inherits the span, and sees only its own spans."""
    async def _reward(_i: int) -> None:
        with traced_span(f"reward-{_i}"):
            await asyncio.sleep(0.001 * (3 - _i))
            with traced_span(f"score-{_i}"):
                await asyncio.sleep(0.001 * _i)

    span_log.clear()
    try:
        with traced_span("rollout"):
            async with asyncio.timeout(2):
                await asyncio.gather(*(_reward(_i) for _i in range(3)))
    finally:
        _log = list(span_log)
    _expected = {("rollout", None)} | {(f"reward-{_i}", "rollout") for _i in range(3)}
    _expected |= {(f"score-{_i}", f"reward-{_i}") for _i in range(3)}
    _wrong = sorted(set(_log) - _expected, key=str)
    assert not _wrong and len(_log) == len(_expected), (
        f"wrong parents for tasks started inside a span: with 3 tasks started inside 'rollout', "
        f"{len(_wrong)} span(s) got another task's span as parent, e.g. {_wrong[:2]}; the tasks "
        "share whatever the span put in TRACE_STACK, so never change that value in place: set a new "
        "tuple (chapter 11)")
    assert TRACE_STACK.get() == (), (
        f"TRACE_STACK is {TRACE_STACK.get()!r} after 'rollout' and its tasks' spans closed, not (): restore "
        "it on the way out, and never change the value the tasks share (chapter 11)")
def _check_sequential() -> None:
    span_log.clear()
    with traced_span("step"):
        pass
    assert TRACE_STACK.get() == (), (
        "the stack was not restored when the block ended: after the with block, the span must no "
        "longer be open; reset the ContextVar with the token from set() (chapter 11)")
    try:
        with traced_span("outer"):
            with traced_span("failing"):
                raise KeyError("boom")
    except KeyError:
        pass
    assert TRACE_STACK.get() == (), (
        "the stack was not restored when the block raised: reset the ContextVar in a finally, so "
        "an exception cannot leave the span open (chapter 11)")
    with traced_span("after"):
        pass
    assert span_log[-1] == ("after", None), (
        f"a span opened after the others closed got parent {span_log[-1][1]!r}, not None: the "
        "spans that ended must no longer be open (chapter 11)")
await asyncio.create_task(_check_concurrent(), context=contextvars.Context())
contextvars.Context().run(_check_sequential)
await asyncio.create_task(_check_fan_out(), context=contextvars.Context())


def _stack_in(_ctx: contextvars.Context, _stack: tuple[str, ...]) -> contextvars.Context:
    _ctx.run(TRACE_STACK.set, _stack)
    return _ctx


def _check_other_context() -> None:
    """A span opened in one context and closed in another: no error of its own, the block's error
    goes on, and the closing context's stack stays as it was there."""
    def _stream(_fail: bool) -> Iterator[None]:
        with traced_span("stream"):
            yield
            if _fail:
                raise ValueError("the block's own error")

    span_log.clear()
    for _fail in (False, True):
        _opener = _stack_in(contextvars.Context(), ("outer",))
        _closer = _stack_in(contextvars.Context(), ("other",))
        _gen = _stream(_fail)
        _opener.run(next, _gen)
        try:
            if _fail:
                _closer.run(next, _gen)
            else:
                _closer.run(_gen.close)
            _outcome = None
        except StopIteration:
            _outcome = "stopped"
        except ValueError as _error:
            _outcome = str(_error)
        _what = "ended with an error" if _fail else "ended"
        if _fail and _outcome == "stopped":
            raise AssertionError(
                "the block's own error was swallowed: a span opened in one context whose block raised "
                "ValueError in another ended without an error; catch only what reset raises, around "
                "the reset (chapter 11)")
        assert _outcome in ((None,) if not _fail else ("the block's own error",)), (
            f"the exit raised in another context: a span opened in one context {_what} in another, "
            f"and the with block raised ValueError({_outcome!r}); reset(token) works only in the "
            "context the token was made in, so catch its ValueError there (chapter 11, the second "
            "quote in In slime)")
        _after = _closer.run(TRACE_STACK.get)
        assert _after == ("other",), (
            f"the stack where the span closed changed: it was ('other',) there, and after the span "
            f"opened elsewhere {_what} it is {_after!r}; a span may only undo its own set, in its own "
            "context, so leave any other context's TRACE_STACK as it was (chapter 11)")


async def _check_closed_by_another_task() -> None:
    """An async generator holding a span, closed from a task that inherited the span, and from one
    that did not: neither close raises, and neither task's stack changes."""
    async def _stream():
        with traced_span("stream"):
            yield

    async def _close(_agen) -> tuple[str, ...]:
        await _agen.aclose()
        return TRACE_STACK.get()

    span_log.clear()
    for _inherits in (True, False):
        _agen = _stream()
        try:
            async with asyncio.timeout(2):
                await _agen.__anext__()
                _ctx = (contextvars.copy_context() if _inherits
                        else _stack_in(contextvars.Context(), ("other",)))
                _before = _ctx.run(TRACE_STACK.get)
                try:
                    _after = await asyncio.create_task(_close(_agen), context=_ctx)
                except ValueError as _error:
                    raise AssertionError(
                        f"the exit raised in another context: an async generator holding a span was "
                        f"closed from another task ({'created inside the span' if _inherits else 'with a stack of its own'}), "
                        f"and aclose() raised ValueError({_error}); reset(token) works only in the "
                        "context the token was made in, so catch its ValueError there (chapter 11)") from None
        finally:
            if _agen.ag_frame is not None:  # still suspended in the span: close it here
                try:
                    await _agen.aclose()
                except ValueError:
                    pass
        assert _after == _before, (
            f"the stack where the span closed changed: the closing task's TRACE_STACK was {_before!r} "
            f"and after the close it is {_after!r}; a span may only undo its own set, in its own "
            "context, so leave any other context's TRACE_STACK as it was (chapter 11)")


contextvars.Context().run(_check_other_context)
await asyncio.create_task(_check_closed_by_another_task(), context=contextvars.Context())


# Generated scenarios (issue 37): the same traced programs through traced_span and the reference,
# on virtual time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "traced_span")

# A program is a list of steps a task runs: ("span", name, steps, raises) opens traced_span(name)
# around its steps (then raises KeyError inside it if `raises`, which the task catches), ("sleep",
# seconds), ("task", steps) starts a child task (awaited at the end of the list), ("look",) notes
# TRACE_STACK; ("handoff", name, steps, closer) opens traced_span(name) in an async generator, runs
# the steps, then closes the generator from a new task: one created here ("inherits") or one in a
# context of its own whose TRACE_STACK is ("elsewhere",) ("own").
def _steps(depth: int):
    leaf = _st.one_of(_st.tuples(_st.just("sleep"), _st.sampled_from([1, 0, 2])), _st.just(("look",)))
    if depth == 0:
        return leaf
    inner = _st.lists(_steps(depth - 1), max_size=3).map(tuple)
    span = _st.tuples(_st.just("span"), _st.sampled_from("abc"), inner, _st.booleans())
    handoff = _st.tuples(_st.just("handoff"), _st.sampled_from("abc"), inner,
                         _st.sampled_from(["inherits", "own"]))
    return _st.one_of(leaf, span, span, _st.tuples(_st.just("task"), inner), handoff)


class _Program(tuple):
    callers = 1

    def describe(self) -> str:
        return f"tasks started side by side, each running one of these programs: {list(self)!r}"


_programs = _st.lists(_st.lists(_steps(3), max_size=3).map(tuple), min_size=1, max_size=3).map(_Program)


def _observe(fn, program: _Program) -> dict:
    seen: list = []

    async def run(steps, where: str) -> None:
        children = []
        for n, step in enumerate(steps):
            here = f"{where}.{n}"
            if step[0] == "span":
                try:
                    with fn(step[1]):
                        await run(step[2], here)
                        if step[3]:
                            raise KeyError(here)
                except KeyError:
                    seen.append(("caught", here))
                seen.append(("after span", here, TRACE_STACK.get()))
            elif step[0] == "handoff":
                await handoff(step, here)
            elif step[0] == "sleep":
                await asyncio.sleep(step[1])
            elif step[0] == "task":
                children.append(asyncio.create_task(run(step[1], here)))
            else:
                seen.append(("look", here, TRACE_STACK.get()))
        await asyncio.gather(*children)

    async def handoff(step, here: str) -> None:
        async def opened():
            with fn(step[1]):
                yield

        async def close(agen) -> None:
            before = TRACE_STACK.get()
            try:
                await agen.aclose()
                error = None
            except Exception as exc:  # noqa: BLE001 - what the close raised is the observation
                error = repr(exc)
            seen.append(("closed", here, TRACE_STACK.get(), before, error))

        agen = opened()
        await agen.__anext__()
        try:
            await run(step[2], here)
        finally:
            ctx = contextvars.copy_context()
            if step[3] == "own":
                ctx = contextvars.Context()
                ctx.run(TRACE_STACK.set, ("elsewhere",))
            await asyncio.create_task(close(agen), context=ctx)
        seen.append(("after span", here, TRACE_STACK.get()))

    async def main():
        await asyncio.gather(*(run(steps, f"task {k}") for k, steps in enumerate(program)))

    log = globals()["span_log"]
    saved = list(log)
    log.clear()
    try:
        run_ = _sc.run_virtual(main, limit=100)
        return {"error": repr(run_.error) if run_.error else None, "log": list(globals()["span_log"]),
                "seen": seen}
    finally:
        globals()["span_log"][:] = saved


def _compare(mine: dict, ref: dict, program: _Program) -> str | None:
    if mine["error"] != ref["error"]:
        return f"the traced program failed with {mine['error']}, expected {ref['error']}"
    if mine["log"] != ref["log"]:
        return (f"span_log holds {mine['log']!r}, expected {ref['log']!r}: the parent is the innermost span "
                "open in the current context (a task inherits the spans open where it was created, and no "
                "other task's)")
    for got, want in zip(mine["seen"], ref["seen"], strict=False):
        if got != want and want[0] == "closed" and got[0] == "closed":
            if got[4] != want[4]:
                return (f"the exit raised in another context: at {want[1]} the async generator's span was "
                        f"closed from another task and aclose() raised {got[4]}; reset(token) works only in "
                        "the context the token was made in, so catch its ValueError there")
            return (f"the stack where the span closed changed: at {want[1]} the closing task's TRACE_STACK "
                    f"was {want[3]!r} and after the close it is {got[2]!r}; a span may only undo its own set, "
                    "in its own context")
        if got != want:
            return (f"at {want[1]} TRACE_STACK was {got[2] if len(got) > 2 else got!r}, expected {want[2]!r}: "
                    "set it with a token inside the block and reset it on the way out, also when the block "
                    "raises")
    return None


_nested = _Program([(("span", "a", (("span", "b", (("span", "c", (("look",),), False),), False),), False),)])
# a span closed from a task of its own, and one closed from a task created inside it
_handed_off = _Program([(("span", "a", (("handoff", "b", (("look",),), "own"),), False),),
                        (("handoff", "c", (("task", (("look",),)),), "inherits"),)])
_sc.differential(traced_span, _reference, _programs, _observe, _compare, what="traced_span", examples=50,
                 hint="chapter 11", explicit=(_nested, _handed_off))
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - A module-level variable is shared by every task on the loop; "the current request" in
#   one is overwritten by another.
# - A `ContextVar`'s value lives in the current context. Each task runs in a copy of the
#   context taken when the task was created: its sets stay its own.
# - `token = var.set(...)` and `var.reset(token)` in a `finally` keep a nested stack exact;
#   keep the value immutable (a tuple), because copies are shallow.
# - `asyncio.to_thread` runs its function in a copy of the context; a bare
#   `threading.Thread` starts with an empty context, so run its target in
#   `copy_context().run`.
#
# **What's next.** Chapter 12 crosses a bigger boundary than threads: processes, which share
# no memory and no context at all.
#
# ## In slime
#
# Both quotes are from slime's `trace_span`, which opens a span for each sample's generation
# and reward while hundreds of samples are in flight on one event loop: the setting of
# Exercise 11.1. More uses are in the [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("11")

# %% tags=["remove-input"]
show_call_site("11b")

# %% [markdown]
# Would slime's trace ids save a shared list? In slime a new span takes as parent the
# innermost stack entry with its own trace id (`_get_current_parent_span_id`), so a span
# finds its parent among its own sample's entries. A model runs eight samples (24 spans) with
# that lookup, once with the stack in a `ContextVar` and once on one shared list. Predict:
# on the shared list, how many of the 24 spans get a wrong parent: none, a few, or most?

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the model code (one shared list, a ContextVar as in slime)"}
SHARED_STACK: list[tuple[str, str]] = []


@contextmanager
def trace_span_on_shared_list(trace_id: str, name: str) -> Iterator[None]:
    parent = next((s for t, s in reversed(SHARED_STACK) if t == trace_id), None)
    found_parent["one shared list"][f"{trace_id} {name}"] = parent
    SHARED_STACK.append((trace_id, f"{trace_id} {name}"))
    try:
        yield
    finally:
        SHARED_STACK.pop()


TRACE: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "trace", default=())
found_parent: dict[str, dict[str, str | None]] = {  # span -> the parent it found
    "ContextVar": {},
    "one shared list": {},
}


@contextmanager
def trace_span(trace_id: str, name: str) -> Iterator[None]:
    stack = TRACE.get()
    parent = next((s for t, s in reversed(stack) if t == trace_id), None)
    found_parent["ContextVar"][f"{trace_id} {name}"] = parent
    token = TRACE.set(stack + ((trace_id, f"{trace_id} {name}"),))
    try:
        yield
    finally:
        TRACE.reset(token)


async def generate_and_rm(sample: int, span) -> None:
    trace_id = f"s{sample}"
    with span(trace_id, "generate_and_rm"):
        with span(trace_id, "sglang_generate"):
            await asyncio.sleep(0.01 * (1 + sample % 3))
        with span(trace_id, "reward_model"):
            await asyncio.sleep(0.01)


def wrong_parents(found: dict[str, str | None]) -> list[str]:
    return [f"{name} -> {parent}" for name, parent in found.items()
            if parent != (None if name.endswith(" generate_and_rm")
                          else f"{name.split()[0]} generate_and_rm")]


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
# trace_span_on_shared_list: the span on one shared list; generate_and_rm: a sample
for span_kind in (trace_span, trace_span_on_shared_list):
    await asyncio.gather(*(generate_and_rm(i, span_kind) for i in range(8)))
for stack_kind, found in found_parent.items():
    misparented = len(wrong_parents(found))
    print(f"{stack_kind:<15} wrong parents: {misparented} of {len(found)} spans")
print("for example:", wrong_parents(found_parent["one shared list"])[:2])

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-shared-stack-misparents-spans
assert wrong_parents(found_parent["ContextVar"]) == [], wrong_parents(found_parent["ContextVar"])
shared_wrong = wrong_parents(found_parent["one shared list"])
assert shared_wrong, "the shared list gave no span a wrong parent"
assert all(w.endswith("None") or w.split()[0] == w.split()[-2] for w in shared_wrong), (
    f"a span found another sample's span: {shared_wrong}")
assert TRACE.get() == () and SHARED_STACK == [], "both stacks are empty after the run"
print(f"✓ ContextVar: every parent right; shared list: {len(shared_wrong)} wrong, "
      "each a span of the sample's own or none")

# %% [markdown]
# :::{dropdown} Why
#
# A few. Trace ids stop a span from adopting another sample's span, yet on the shared list
# some spans still got a wrong parent: their own sample's finished `sglang_generate`
# (another sample's `pop()` had taken a different entry off the top), or none (other
# samples' pops had taken its sample's entries off the list).
#
# :::
