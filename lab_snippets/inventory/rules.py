"""What the inventory looks for: categories of mechanisms, and which chapter teaches each API."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from lab_snippets import REPO_ROOT
from lab_snippets.book.chapters import CHAPTERS as BOOK_CHAPTERS

SLIME_REPO_URL = "https://github.com/THUDM/slime"
SCHEMA_VERSION = 1
DEFAULT_OUT = REPO_ROOT / "book" / "reference"
JSON_NAME = "slime_inventory.json"
PAGE_NAMES = ("inventory.md", "chapter_map.md", "versions.md")
REGENERATE_HINT = (
    "SLIME_SRC=/path/to/slime python -m lab_snippets.inventory regenerate   "
    "(or, to re-render the pages from the committed JSON only: "
    "python -m lab_snippets.inventory render book/reference/slime_inventory.json --out book/reference)"
)

# ---------------------------------------------------------------------------
# Categories
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Category:
    key: str
    title: str
    original: str
    description: str


CATEGORIES: tuple[Category, ...] = (
    Category("async_syntax", "Async syntax", "异步语法",
             "Native coroutine syntax: `async def`, `await`, `async with`, `async for` and async "
             "comprehensions. An `async def` whose body yields is an async generator and is counted "
             "apart from plain `async def`."),
    Category("asyncio", "asyncio tasks and event loop", "asyncio 任务与事件循环",
             "Every name reached through the `asyncio` package: tasks, waiting, synchronisation, "
             "queues, loops, streams and exceptions."),
    Category("threads", "Threads and synchronisation", "线程与同步",
             "`threading` and `_thread`: threads and their synchronisation primitives."),
    Category("sync_queue", "Synchronous queues", "同步队列", "The standard library `queue` module."),
    Category("executors", "Executors and futures", "执行器与 Future",
             "`concurrent.futures`: thread and process pools and their futures."),
    Category("multiprocessing", "Multiprocessing", "多进程",
             "`multiprocessing`, with `torch.multiprocessing` (a wrapper around it) shown apart."),
    Category("subprocess", "External commands", "外部命令",
             "`subprocess`: starting, controlling and talking to child processes, and its constants."),
    Category("signals", "Signals", "系统信号", "`signal`: handlers, masks and signal constants."),
    Category("contextvars", "Task context", "任务上下文", "`contextvars`: context variables and contexts."),
    Category("async_context", "Async context helpers", "异步上下文辅助",
             "The asynchronous parts of `contextlib` (`asynccontextmanager`, `AsyncExitStack`, "
             "`aclosing`, `AbstractAsyncContextManager`)."),
    Category("async_checks", "Async object checks", "异步对象检查",
             "The coroutine and async-generator checks of `inspect`."),
    Category("async_builtins", "Async builtins", "异步内置函数", "The builtins `aiter` and `anext`."),
    Category("async_typing", "Async typing markers", "异步类型标记",
             "`Awaitable`, `Coroutine`, `AsyncIterable`, `AsyncIterator`, `AsyncGenerator` and "
             "`AsyncContextManager` from `typing`, `typing_extensions` or `collections.abc`."),
    Category("sync_sleep", "Synchronous sleep", "同步休眠", "Adjacent mechanism: blocking `time.sleep`."),
    Category("process_control", "Process control helpers", "进程控制辅助",
             "Adjacent mechanism: the process-lifecycle, signal and pipe functions of `os` "
             "(`kill`, `killpg`, `getpid`, `setsid`, `waitpid`, `fork`, `pipe`, `_exit`, ...)."),
    Category("file_locks", "File locks", "文件锁", "Adjacent mechanism: `fcntl` (file locks)."),
    Category("io_readiness", "I/O readiness", "I/O 就绪等待",
             "Adjacent mechanism: `select` and `selectors`."),
    Category("coroutine_helpers", "Coroutine decorator helpers", "协程装饰辅助",
             "`types.coroutine` and the coroutine / async-generator types of `types`."),
    Category("ray", "Ray", "Ray 远程执行",
             "Every name reached through the `ray` package (remote functions and actors, `ray.get`, "
             "`ray.wait`, `ray.put`, `ray.kill`, placement groups and scheduling strategies, Ray's "
             "exceptions); in a file that imports `ray`, also every `.remote(...)` call and each "
             "actor option (`max_concurrency`, `num_gpus`, ...) given to `.options(...)` or "
             "`ray.remote(...)`."),
)
CATEGORY_BY_KEY = {c.key: c for c in CATEGORIES}
METHODS_CATEGORY = Category(
    "methods_to_verify", "Object methods still to verify", "待核实的对象方法",
    "Method calls whose receiver's type is only guessed: from the constructor or annotation that "
    "built or declared it, or (in files that use some mechanism) from the method name alone. "
    "They are listed apart and never added to the totals.",
)

# Modules whose every attribute belongs to a category (longest prefix first).
MODULE_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("torch.multiprocessing", "multiprocessing"),
    ("concurrent.futures", "executors"),
    ("multiprocessing", "multiprocessing"),
    ("subprocess", "subprocess"),
    ("contextvars", "contextvars"),
    ("selectors", "io_readiness"),
    ("threading", "threads"),
    ("_thread", "threads"),
    ("asyncio", "asyncio"),
    ("signal", "signals"),
    ("ray", "ray"),
    ("select", "io_readiness"),
    ("fcntl", "file_locks"),
    ("queue", "sync_queue"),
)

_ASYNC_MARKERS = ("Awaitable", "Coroutine", "AsyncIterable", "AsyncIterator", "AsyncGenerator")
# Individual members of otherwise unrelated modules.
MEMBER_CATEGORIES: dict[str, str] = {
    **{f"contextlib.{n}": "async_context" for n in
       ("asynccontextmanager", "AsyncExitStack", "aclosing", "AbstractAsyncContextManager")},
    **{f"inspect.{n}": "async_checks" for n in
       ("iscoroutinefunction", "iscoroutine", "isawaitable", "isasyncgen", "isasyncgenfunction",
        "getcoroutinestate", "getcoroutinelocals", "getasyncgenstate", "getasyncgenlocals",
        "markcoroutinefunction", "CORO_CREATED", "CORO_RUNNING", "CORO_SUSPENDED", "CORO_CLOSED",
        "AGEN_CREATED", "AGEN_RUNNING", "AGEN_SUSPENDED", "AGEN_CLOSED")},
    "builtins.aiter": "async_builtins",
    "builtins.anext": "async_builtins",
    **{f"typing.{n}": "async_typing" for n in (*_ASYNC_MARKERS, "AsyncContextManager")},
    **{f"typing_extensions.{n}": "async_typing" for n in (*_ASYNC_MARKERS, "AsyncContextManager")},
    **{f"collections.abc.{n}": "async_typing" for n in _ASYNC_MARKERS},
    "time.sleep": "sync_sleep",
    **{f"os.{n}": "process_control" for n in
       ("kill", "killpg", "getpid", "getppid", "getpgid", "getpgrp", "getsid", "setsid", "setpgid",
        "setpgrp", "wait", "wait3", "wait4", "waitpid", "waitid", "waitstatus_to_exitcode",
        "WNOHANG", "WIFEXITED", "WEXITSTATUS", "WIFSIGNALED", "WTERMSIG", "WIFSTOPPED",
        "fork", "forkpty", "register_at_fork", "pipe", "pipe2", "_exit", "abort",
        "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe",
        "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe",
        "posix_spawn", "posix_spawnp", "pidfd_open", "system", "popen", "nice", "sched_yield")},
    **{f"types.{n}": "coroutine_helpers" for n in ("coroutine", "CoroutineType", "AsyncGeneratorType")},
}
ASYNC_BUILTINS = ("aiter", "anext")

# Ray's own call forms that no import names: ``handle.method.remote(...)`` and the actor and task
# options passed as keywords to ``.options(...)`` or ``ray.remote(...)``. Counted only in files
# that import ``ray``, as the API names ``.remote()`` and ``.options(<keyword>=)``.
RAY_REMOTE_CALL = ".remote()"
RAY_OPTIONS = frozenset({
    "max_concurrency", "concurrency_groups", "num_cpus", "num_gpus", "resources", "memory",
    "scheduling_strategy", "max_restarts", "max_task_retries", "max_retries", "runtime_env",
    "name", "namespace", "lifetime", "get_if_exists", "num_returns", "max_pending_calls",
    "enable_tensor_transport",
})


def ray_option_api(keyword: str) -> str:
    return f".options({keyword}=)"


_MODULE_CATEGORY_MAP = dict(MODULE_CATEGORIES)


@functools.cache
def categorize(dotted: str) -> str | None:
    """Category key of a full dotted API name, or None when it is not a concurrency mechanism."""
    parts = dotted.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        category = _MODULE_CATEGORY_MAP.get(prefix) or MEMBER_CATEGORIES.get(prefix)
        if category is not None:
            return category
    return None


_CATEGORY_MODULES = frozenset([*_MODULE_CATEGORY_MAP, *(m.rsplit(".", 1)[0] for m in MEMBER_CATEGORIES)])


# Method names recorded as "still to verify" even when nothing is known about the receiver
# (only in files that use some mechanism). With constructor/annotation evidence any method counts.
NAME_ONLY_METHODS = frozenset({
    "acquire", "release", "locked", "put_nowait", "get_nowait", "task_done", "notify", "notify_all",
    "is_set", "wait", "wait_for", "set_result", "set_exception", "add_done_callback",
    "remove_done_callback", "cancel", "cancelled", "done", "result", "run_until_complete",
    "run_forever", "call_soon", "call_soon_threadsafe", "call_later", "call_at", "create_task",
    "run_in_executor", "is_alive", "terminate", "kill", "communicate", "poll", "send_signal", "submit",
    "shutdown", "drain", "wait_closed", "readexactly", "readuntil", "start", "qsize",
})

# ---------------------------------------------------------------------------
# Chapters and the mechanism -> chapter map
# ---------------------------------------------------------------------------

# (number, slug, title) of every chapter, from the one chapter table (lab_snippets.book.chapters).
CHAPTERS: tuple[tuple[str, str, str], ...] = tuple((c.number, c.slug, c.title) for c in BOOK_CHAPTERS)
CHAPTER_BY_NUM = {num: (slug, title) for num, slug, title in CHAPTERS}


def _known(*numbers: str) -> tuple[str, ...]:
    """The chapters among ``numbers`` that the chapter table has (Part VI's come in one by one)."""
    return tuple(n for n in numbers if n in CHAPTER_BY_NUM)


def _names(prefix: str, names: str) -> list[str]:
    return [f"{prefix}.{n}" for n in names.split()]


# (patterns, chapters). A pattern is an exact API name, or ends with ".*" for a prefix
# (matching the prefix itself too). First matching rule wins; order is specific -> general.
CHAPTER_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("async def",), ("01",)),
    (("asyncio",), ("21",)),  # the module itself as a value: hasattr/getattr capability checks
    (("await",), ("02",)),
    (("async with", "async for", "async comprehension", "async def (async generator)"), ("10",)),
    (("asyncio.run",), ("01",)),
    (tuple(_names("asyncio", "iscoroutinefunction iscoroutine")), ("21", "01")),
    (tuple(_names("asyncio", "sleep")), ("02",)),
    (("asyncio.all_tasks",), ("03", "23")),
    (tuple(_names("asyncio", "create_task gather TaskGroup ensure_future Task all_tasks current_task")),
     ("03",)),
    (tuple(_names("asyncio", "wait as_completed FIRST_COMPLETED ALL_COMPLETED FIRST_EXCEPTION")), ("04",)),
    (tuple(_names("asyncio", "shield")), ("05", "27")),
    (tuple(_names("asyncio", "CancelledError TimeoutError timeout timeout_at wait_for "
                             "Timeout exceptions.CancelledError exceptions.TimeoutError")), ("05",)),
    (tuple(_names("asyncio", "Semaphore BoundedSemaphore")), ("06",)),
    (tuple(_names("asyncio", "Queue LifoQueue PriorityQueue QueueEmpty QueueFull QueueShutDown")), ("07",)),
    (tuple(_names("asyncio", "to_thread")), ("08", "25")),
    (tuple(_names("asyncio", "run_coroutine_threadsafe new_event_loop set_event_loop get_event_loop "
                             "get_running_loop wrap_future Future AbstractEventLoop isfuture "
                             "BaseEventLoop events.AbstractEventLoop Runner")), ("13", "08")),
    (tuple(_names("asyncio", "Event Lock")), ("15",)),
    (tuple(_names("asyncio", "Condition")), ("16",)),
    (("asyncio.subprocess.*", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"),
     ("12", "18", "26")),
    (tuple(_names("asyncio", "start_server open_connection StreamReader StreamWriter "
                             "IncompleteReadError LimitOverrunError start_unix_server "
                             "open_unix_connection Server")), ("20",)),
    (tuple(_names("threading", "Condition RLock Timer")), ("16",)),
    (tuple(_names("threading", "Semaphore BoundedSemaphore")), ("06", "09")),
    (("threading.local",), ("11",)),
    (("threading.excepthook",), ("09", "23")),
    (("threading.*", "_thread.*"), ("09",)),
    (("queue.*",), ("07",)),
    (("concurrent.futures.ProcessPoolExecutor",), ("12", "17", "24")),
    (("concurrent.futures.*",), ("17", "08")),
    (("multiprocessing.*", "torch.multiprocessing.*"), ("12", "18")),
    (tuple(_names("subprocess", "Popen TimeoutExpired")), ("12", "18", "26")),
    (("subprocess.*",), ("12",)),
    (("signal.*",), ("19", "22", "24")),
    (("contextvars.*",), ("11",)),
    (("contextlib.*",), ("10",)),
    (("inspect.*",), ("21", "01")),
    (("builtins.aiter", "builtins.anext"), ("10",)),
    (("typing.*", "typing_extensions.*", "collections.abc.*"), ("21",)),
    (("time.sleep",), ("08", "02")),
    (tuple(_names("os", "getpid getppid fork register_at_fork")), ("12",)),
    (tuple(_names("os", "killpg setsid setpgid setpgrp getpgid getpgrp getsid")), ("19",)),
    (tuple(_names("os", "kill wait wait3 wait4 waitpid waitid waitstatus_to_exitcode WNOHANG WIFEXITED "
                        "WEXITSTATUS WIFSIGNALED WTERMSIG WIFSTOPPED _exit abort")), ("18",)),
    (("fcntl.*",), ("19",)),
    (("ray.kill", "ray.util.placement_group.*", "ray.util.scheduling_strategies.*",
      "ray.util.remove_placement_group", "ray.get_gpu_ids", "ray.cluster_resources",
      "ray.available_resources", "ray.exceptions.RayActorError", "ray.exceptions.ActorDiedError",
      "ray.exceptions.GetTimeoutError", "ray.shutdown",
      *(ray_option_api(k) for k in ("num_cpus", "num_gpus", "resources", "memory", "scheduling_strategy",
                                    "max_restarts", "max_task_retries", "runtime_env"))),
     _known("29", "28")),
    ((ray_option_api("max_concurrency"), ray_option_api("concurrency_groups")), _known("28", "25")),
    (("ray.*", RAY_REMOTE_CALL, *sorted(ray_option_api(k) for k in RAY_OPTIONS)), _known("28")),
)


def chapters_for(api: str) -> tuple[str, ...]:
    """Chapters that teach an API (first = main chapter); empty when no chapter teaches it."""
    for patterns, chapters in CHAPTER_RULES:
        for pattern in patterns:
            if pattern.endswith(".*"):
                prefix = pattern[:-2]
                if api == prefix or api.startswith(prefix + "."):
                    return chapters
            elif api == pattern:
                return chapters
    return ()


# ---------------------------------------------------------------------------
