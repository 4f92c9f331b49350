"""The course's chapters: numbers, file names, titles and parts, in one place.

``python -m lab_snippets.chapters toc`` rewrites ``_toc.yml`` and the README's chapter table from the
notebooks that exist; ``python -m lab_snippets.chapters check`` exits 1 when either is out of step.

Everything that needs to know which files or pages are chapters asks this table (``existing``,
``chapter_page``), not the file names. The Sphinx extension for the chapter pages (downloads, launch
buttons) is ``lab_snippets.book.pages``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from lab_snippets import REPO_ROOT

ROOT = REPO_ROOT
NOTEBOOKS = ROOT / "notebooks"
TOC = ROOT / "_toc.yml"


@dataclass(frozen=True)
class Chapter:
    number: str
    slug: str
    title: str
    original: str
    part: str

    @property
    def stem(self) -> str:
        return f"{self.number}_{self.slug}"

    @property
    def path(self) -> Path:
        return NOTEBOOKS / f"{self.stem}.py"


# The parts are runs of consecutive chapters, so the reading order is the order of the numbers
# (the original series' numbers, which its readers know) and no chapter needs a later one.
ASYNCIO = "Part I · The asyncio core"
THREADS = "Part II · Threads, resources and processes"
SLIME = "Part III · Back to slime"
COORDINATION = "Part IV · Coordination, lifecycles and boundaries"
SERVICES = "Part V · Running concurrent services (beyond the series)"
RAY = "Part VI · Ray, the engine slime runs on (beyond the series)"
PARTS = (ASYNCIO, THREADS, SLIME, COORDINATION, SERVICES, RAY)

CHAPTERS: tuple[Chapter, ...] = (
    Chapter("01", "async_def", "async def: after defining it, when does it run?", "async def：定义之后，什么时候执行？", ASYNCIO),
    Chapter("02", "await", "await: waiting for a result is not automatic concurrency", "await：等待结果，不等于自动并发", ASYNCIO),
    Chapter("03", "tasks_gather", "Task and gather: scheduling several pieces of work", "Task 与 gather：把多份工作安排起来", ASYNCIO),
    Chapter("04", "wait_as_completed", "wait and as_completed: handle finished work first", "wait 与 as_completed：先处理已经完成的工作", ASYNCIO),
    Chapter("05", "cancellation", "Cancellation and timeouts: after asking to stop, you still wait for cleanup", "取消与超时：请求停止以后，还要等待收尾", ASYNCIO),
    Chapter("06", "semaphore", "Semaphore: limiting how much work enters at once", "Semaphore：限制同时进入的工作数量", ASYNCIO),
    Chapter("07", "queue", "Queue: connecting producer speed and consumer speed", "Queue：把生产速度和消费速度接起来", ASYNCIO),
    Chapter("08", "thread_pools", "Thread pools: moving blocking work off the event loop", "线程池：把阻塞工作移出事件循环", THREADS),
    Chapter("09", "lock_event_threads", "Lock, Event and thread exit", "Lock、Event 与线程退出", THREADS),
    Chapter("10", "async_with_for", "async with, async for and async generators", "async with、async for 与异步生成器", THREADS),
    Chapter("11", "contextvar", "ContextVar: concurrent tasks keep their own context", "ContextVar：让并发任务保留各自的上下文", THREADS),
    Chapter("12", "processes", "Process pools, subprocesses and the system boundary", "进程池、子进程与系统边界", THREADS),
    Chapter("13", "cross_thread_loop", "Future, callbacks and a cross-thread event loop", "Future、回调与跨线程事件循环", THREADS),
    Chapter("14", "back_to_slime", "Back to slime: creation, waiting and cleanup along one whole task", "回到 Slime：串起创建、等待与清理", SLIME),
    Chapter("15", "async_event_lock", "Event notification and async mutual exclusion", "Event 通知与异步互斥", COORDINATION),
    Chapter("16", "condition_rlock_timer", "Condition, RLock and Timer", "Condition、RLock 与 Timer", COORDINATION),
    Chapter("17", "executor_shutdown", "Thread pool Future results and shutdown", "线程池 Future 的结果与退出", COORDINATION),
    Chapter("18", "process_lifecycle", "Process lifecycle: from queued work to timeout reaping", "进程生命周期：从队列工作到超时回收", COORDINATION),
    Chapter("19", "signals_groups_flock", "Signals, process groups and file locks: who releases resources after exit?", "信号、进程组与文件锁：退出以后谁释放资源？", COORDINATION),
    Chapter("20", "streams", "asyncio Streams: receiving, framing and closing connections", "asyncio Streams：接收、分帧与连接收尾", COORDINATION),
    Chapter("21", "capability_checks", "Async capability checks and protocol boundaries", "异步能力检查与协议边界", COORDINATION),
    Chapter("22", "stopping_services", "Stopping a service cleanly", "让服务干净地停下来", SERVICES),
    Chapter("23", "diagnosing_hangs", "Diagnosing hangs and silent failures", "诊断卡死与无声的失败", SERVICES),
    Chapter("24", "cpu_work_in_async", "CPU-bound work inside an async service", "异步服务里的 CPU 密集型工作", SERVICES),
    Chapter("25", "hidden_caps", "Hidden concurrency caps", "隐藏的并发上限", SERVICES),
    Chapter("26", "async_subprocesses", "Subprocesses from asyncio", "在 asyncio 中运行子进程", SERVICES),
    Chapter("27", "hazard_clinic", "A hazard clinic: reading real concurrent code critically", "隐患门诊：审读真实的并发代码", SERVICES),
    Chapter("28", "ray_futures_actors", "Ray: ObjectRefs are futures, actors are concurrency units", "Ray：ObjectRef 就是 Future，actor 就是并发单元", RAY),
    Chapter("29", "ray_placement_lifecycle", "Placement groups, actor lifecycle and cleanup", "放置组、actor 生命周期与清理", RAY),
)
BY_NUMBER = {c.number: c for c in CHAPTERS}
BY_PAGE = {f"notebooks/{c.stem}": c for c in CHAPTERS}

# Each part opens with a page of its own; the part's chapters are its sections.
PART_PAGES = {
    ASYNCIO: "book/parts/asyncio",
    THREADS: "book/parts/threads",
    SLIME: "book/parts/slime",
    COORDINATION: "book/parts/processes",
    SERVICES: "book/parts/services",
    RAY: "book/parts/ray",
}

# Parts whose chapters need the machine's cores to themselves: each starts a local Ray (about ten
# processes), whose start-up misses its own deadlines when it shares two cores with another
# kernel. nbval runs them in the serial phase (marked ``serial``) and the book's pre-execution runs
# them one at a time, after the others (``runs_alone``).
ALONE_PARTS = (RAY,)


def runs_alone(chapter: Chapter | str | Path) -> bool:
    """Whether ``chapter`` (a Chapter, its number, or its notebook's path) must not share the
    machine with another chapter."""
    if isinstance(chapter, Path):
        chapter = next((c for c in CHAPTERS if c.path.name == chapter.name), None)
    elif isinstance(chapter, str):
        chapter = BY_NUMBER.get(chapter)
    return chapter is not None and chapter.part in ALONE_PARTS


def _chapter(chapter: Chapter | str | Path) -> Chapter | None:
    if isinstance(chapter, Path):
        return next((c for c in CHAPTERS if c.path.name == chapter.name), None)
    if isinstance(chapter, str):
        return BY_NUMBER.get(chapter)
    return chapter


# Parts whose chapters import a package that is not installed on every supported Python: Ray
# publishes no wheel for 3.15 yet, so requirements.txt installs it only below 3.15 (its marker).
# Such a chapter is skipped, with this reason, by nbval, `labs validate`, `labs grade` and the
# book; it comes back by itself once the package is installed (decided by find_spec, not by version).
NEEDS_PACKAGE = {RAY: "ray"}


def missing_package(chapter: Chapter | str | Path) -> str | None:
    """Why ``chapter`` cannot run on this interpreter (a package it needs is not installed), or None."""
    import importlib.util
    import platform

    found = _chapter(chapter)
    package = NEEDS_PACKAGE.get(found.part) if found is not None else None
    if package is None or importlib.util.find_spec(package) is not None:
        return None
    return (f"chapter {found.number} needs {package}, which is not installed for Python "
            f"{platform.python_version()} ({package} publishes no wheel for it yet, so "
            f"requirements.txt leaves it out); the chapter runs once {package} is installed")

# The chapters' caption in the sidebar: the reading guide first, then each part's page (its entry
# is the page's own heading, "Part I · ...") with the part's chapters as its sections.
CHAPTERS_CAPTION = "Chapters"
READING_GUIDE = "book/reading_guide"

# Pages that are not chapters, after the chapters: first the learner's reference (what a reader
# looks up while reading), then the pages for those who teach and maintain the course.
REFERENCE_CAPTION = "Reference"
REFERENCE_PAGES = (
    "book/choosing",
    "book/glossary",
    "book/reference/inventory",
    "book/reference/chapter_map",
    "book/reference/versions",
)
GUIDE_CAPTION = "Teaching and maintaining"
MAINTAINER_PAGES = (
    "book/reference/notebook_self_check",
    "book/reference/claims",
    "book/reference/translation_status",
)
GUIDE_PAGES = ("book/instructors", "book/status", *MAINTAINER_PAGES)


def existing() -> list[Chapter]:
    """Chapters whose notebook exists, in course order."""
    return [c for c in CHAPTERS if c.path.exists()]


def files_in(root: Path) -> list[Path]:
    """The chapters' notebooks that exist under ``root`` (a copy of the book), in course order."""
    paths = (Path(root) / "notebooks" / c.path.name for c in CHAPTERS)
    return [p for p in paths if p.is_file()]


def chapter_page(docname: str) -> Chapter | None:
    """The chapter whose page ``docname`` (e.g. ``notebooks/02_await``) is, or None."""
    return BY_PAGE.get(docname)


def page_exists(page: str) -> bool:
    return (ROOT / f"{page}.md").exists()


def render_toc() -> str:
    """The ``_toc.yml`` text: under one caption the reading guide, then each part's page (when it
    exists) with the part's existing chapters as its sections; then the learner's reference pages
    and the teaching and maintaining pages that exist."""
    lines = [
        "# Generated by `python -m lab_snippets.chapters toc` from the notebooks that exist.",
        "# Do not edit by hand: tests/test_chapters.py fails when it is out of step with notebooks/.",
        "format: jb-book",
        "root: book/intro",
        "parts:",
    ]
    chapters = existing()
    lines += [f'  - caption: "{CHAPTERS_CAPTION}"', "    chapters:"]
    if page_exists(READING_GUIDE):
        lines += [f"      - file: {READING_GUIDE}"]
    for part in PARTS:
        members = [c for c in chapters if c.part == part]
        page = PART_PAGES.get(part)
        if members and page and page_exists(page):
            lines += [f"      - file: {page}", "        sections:"]
            lines += [f"          - file: notebooks/{c.stem}" for c in members]
        else:
            lines += [f"      - file: notebooks/{c.stem}" for c in members]
    for caption, candidates in ((REFERENCE_CAPTION, REFERENCE_PAGES), (GUIDE_CAPTION, GUIDE_PAGES)):
        pages = [p for p in candidates if page_exists(p)]
        if pages:
            lines += [f'  - caption: "{caption}"', "    chapters:"]
            lines += [f"      - file: {p}" for p in pages]
    return "\n".join(lines) + "\n"


def toc_order() -> list[str]:
    """Every page of ``_toc.yml`` in reading order (root, then parts depth first): the docnames."""
    import yaml

    toc = yaml.safe_load(TOC.read_text(encoding="utf-8"))

    def walk(entries):
        for entry in entries:
            yield entry["file"]
            yield from walk(entry.get("sections", []))

    return [toc["root"]] + [f for part in toc["parts"] for f in walk(part["chapters"])]


README = ROOT / "README.md"
README_BEGIN = "<!-- chapter table: generated by `python -m lab_snippets.chapters toc` -->"
README_END = "<!-- end of chapter table -->"


def render_readme_table() -> str:
    """The README's chapter table (between its markers), from the chapters that exist."""
    rows = ["| # | Chapter | Original title |", "|---|---|---|"]
    rows += [f"| {c.number} | {c.title} | {c.original} |" for c in existing()]
    return "\n".join(rows)


def readme_with_table(text: str) -> str:
    """``text`` (the README) with the part between the chapter-table markers regenerated."""
    head, sep, rest = text.partition(README_BEGIN + "\n")
    _old, sep2, tail = rest.partition(README_END)
    if not sep or not sep2:
        raise SystemExit(f"{README.name}: chapter table markers not found "
                         f"({README_BEGIN!r} ... {README_END!r})")
    return head + sep + render_readme_table() + "\n" + sep2 + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.chapters",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["toc", "check"])
    args = parser.parse_args(argv)
    wanted = {TOC: render_toc(), README: readme_with_table(README.read_text(encoding="utf-8"))}
    if args.command == "toc":
        for path, text in wanted.items():
            path.write_text(text, encoding="utf-8")
        print(f"wrote {TOC.name} and the chapter table of {README.name} with {len(existing())} chapters")
        return 0
    stale = [p.name for p, text in wanted.items()
             if (p.read_text(encoding="utf-8") if p.exists() else "") != text]
    if stale:
        print(f"{' and '.join(stale)} out of step with notebooks/: run `python -m lab_snippets.chapters toc`")
        return 1
    print(f"_toc.yml and {README.name} list the {len(existing())} chapters that exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def cache_path(root: Path) -> Path:
    """The jupyter cache Jupyter Book reads (its default, ``_build/.jupyter_cache``)."""
    return Path(root) / "_build" / ".jupyter_cache"
