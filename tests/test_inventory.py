"""Tests for the source inventory scanner and its generated book pages (lab_snippets.inventory)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from lab_snippets import inventory as inv

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "inventory" / "tree"
REFERENCE = ROOT / "book" / "reference"

SYNTAX_PY = {
    ("async_syntax", "async def", "syntax"): 2,
    ("async_syntax", "async def (async generator)", "syntax"): 2,
    ("async_syntax", "await", "syntax"): 3,
    ("async_syntax", "async with", "syntax"): 1,
    ("async_syntax", "async for", "syntax"): 1,
    ("async_syntax", "async comprehension", "syntax"): 2,
}
ALIASES_PY = {
    ("async_syntax", "async def", "syntax"): 1,
    ("async_syntax", "await", "syntax"): 3,
    ("asyncio", "asyncio.Queue", "annotation"): 1,
    ("asyncio", "asyncio.Task", "annotation"): 1,  # from a string annotation
    ("asyncio", "asyncio.gather", "call"): 2,  # `aio.gather` and `from asyncio import gather`
    ("asyncio", "asyncio.sleep", "call"): 1,  # `sleep as nap`
    ("asyncio", "asyncio.wait", "call"): 1,
    ("asyncio", "asyncio.FIRST_COMPLETED", "reference"): 1,
    ("asyncio", "asyncio.CancelledError", "except"): 1,
    ("asyncio", "asyncio.TimeoutError", "except"): 1,  # through the `aio` alias
    ("asyncio", "asyncio.Queue", "reference"): 1,
    ("asyncio", "asyncio.get_event_loop", "assign_target"): 1,
    ("executors", "concurrent.futures.ThreadPoolExecutor", "call"): 2,  # dotted import and `as Pool`
    ("executors", "concurrent.futures.wait", "call"): 1,  # `from concurrent import futures`
    ("threads", "threading.Lock", "call"): 1,  # import inside a function; not where it is unbound
}
STAR_PY = {
    ("async_syntax", "async def", "syntax"): 1,
    ("async_syntax", "await", "syntax"): 1,
    ("async_syntax", "async with", "syntax"): 1,
    ("asyncio", "asyncio.sleep", "call"): 1,
    ("asyncio", "asyncio.timeout", "call"): 1,
    ("asyncio", "asyncio.Queue", "call"): 1,
    ("threads", "threading.Event", "call"): 1,
}
CLASSES_PY = {
    ("async_syntax", "async def", "syntax"): 1,
    ("async_syntax", "async with", "syntax"): 1,
    ("async_syntax", "await", "syntax"): 1,
    ("asyncio", "asyncio.Queue", "annotation"): 1,
    ("asyncio", "asyncio.Semaphore", "annotation"): 1,
    ("asyncio", "asyncio.TaskGroup", "call"): 1,
    ("asyncio", "asyncio.get_running_loop", "call"): 1,
    ("threads", "threading.Lock", "call"): 1,
}
CATEGORIES_PY = {
    ("async_builtins", "builtins.aiter", "call"): 1,
    ("async_builtins", "builtins.anext", "call"): 1,  # the parameter named anext is not counted
    ("async_checks", "inspect.iscoroutinefunction", "call"): 1,
    ("async_context", "contextlib.AsyncExitStack", "call"): 1,
    ("async_context", "contextlib.asynccontextmanager", "decorator"): 1,
    ("async_syntax", "async def", "syntax"): 2,
    ("async_syntax", "async def (async generator)", "syntax"): 1,
    ("async_syntax", "async with", "syntax"): 1,
    ("async_syntax", "await", "syntax"): 1,
    ("async_typing", "collections.abc.AsyncIterator", "annotation"): 1,
    ("async_typing", "typing.Awaitable", "annotation"): 1,
    ("contextvars", "contextvars.ContextVar", "call"): 1,
    ("coroutine_helpers", "types.coroutine", "decorator"): 1,
    ("file_locks", "fcntl.LOCK_EX", "reference"): 1,
    ("file_locks", "fcntl.flock", "call"): 1,
    ("io_readiness", "select.select", "call"): 1,
    ("io_readiness", "selectors.DefaultSelector", "call"): 1,
    ("multiprocessing", "multiprocessing.Process", "call"): 2,
    ("multiprocessing", "torch.multiprocessing.spawn", "call"): 1,
    ("process_control", "os.getpid", "call"): 1,
    ("process_control", "os.kill", "call"): 1,
    ("signals", "signal.SIGINT", "reference"): 1,
    ("signals", "signal.SIGTERM", "reference"): 1,
    ("signals", "signal.SIG_DFL", "reference"): 1,
    ("signals", "signal.signal", "call"): 1,
    ("subprocess", "subprocess.CalledProcessError", "except"): 1,
    ("subprocess", "subprocess.PIPE", "reference"): 1,
    ("subprocess", "subprocess.run", "call"): 1,
    ("sync_queue", "queue.Empty", "except"): 1,
    ("sync_queue", "queue.Queue", "call"): 1,
    ("sync_sleep", "time.sleep", "call"): 2,
    ("threads", "_thread.start_new_thread", "call"): 1,
    ("threads", "threading.Lock", "call"): 1,
}
RAYWORK_PY = {
    ("ray", "ray.remote", "call"): 1,  # @ray.remote(max_concurrency=8)
    ("ray", ".options(max_concurrency=)", "call"): 1,  # an option given to ray.remote(...)
    ("ray", ".options(num_gpus=)", "call"): 1,
    ("ray", ".options(scheduling_strategy=)", "call"): 1,
    ("ray", ".remote()", "call"): 2,  # creating the actor, calling its method
    ("ray", "ray.get", "call"): 1,
    ("ray", "ray.wait", "call"): 1,
    ("ray", "ray.kill", "call"): 1,
    ("ray", "ray.util.placement_group", "call"): 1,
    ("ray", "ray.util.scheduling_strategies.PlacementGroupSchedulingStrategy", "call"): 1,
}
EXPECTED_BY_FILE = {
    "syntax.py": SYNTAX_PY,
    "aliases.py": ALIASES_PY,
    "star.py": STAR_PY,
    "classes.py": CLASSES_PY,
    "pkg/categories.py": CATEGORIES_PY,
    "pkg/raywork.py": RAYWORK_PY,
}
EXPECTED_CANDIDATES = [
    # (path, line, method, receiver, guess, evidence, symbol)
    ("classes.py", 13, "release", "self._lock", "threading.Lock", "constructed", "Worker.run"),
    ("classes.py", 16, "put_nowait", "q", "asyncio.Queue", "annotated", "Worker.run.<locals>.helper"),
    ("classes.py", 26, "acquire", "self.sem", "asyncio.Semaphore", "annotated", "State.enter"),
    ("classes.py", 28, "call_soon", "loop", "asyncio.get_running_loop", "constructed", "State.enter"),
    ("classes.py", 30, "create_task", "tg", "asyncio.TaskGroup", "constructed", "State.enter"),
    ("pkg/categories.py", 32, "acquire", "lock", "threading.Lock", "constructed", "threads"),
    ("pkg/categories.py", 38, "get_nowait", "q", "queue.Queue", "constructed", "queues"),
    ("pkg/categories.py", 44, "start", "<call result>", "multiprocessing.Process", "inline", "processes"),
    ("pkg/categories.py", 108, "set_result", "fut", "", "name only", "unknown_receiver"),
    ("pkg/raywork.py", 15, "ready", "pg", "ray.util.placement_group", "constructed", "place"),
    ("star.py", 17, "wait", "ev", "threading.Event", "constructed", "f"),
]


def _by_file(data: dict) -> dict[str, Counter]:
    out: dict[str, Counter] = {}
    for o in data["occurrences"]:
        out.setdefault(o["path"], Counter())[(o["category"], o["api"], o["kind"])] += 1
    return out


@pytest.fixture(scope="module")
def fixture_scan() -> dict:
    return inv.scan_tree(FIXTURE)


# -- the fixture tree: every category and alias form, exact counts ------------------------------


def test_fixture_exact_counts_per_file(fixture_scan):
    got = _by_file(fixture_scan)
    assert set(got) == set(EXPECTED_BY_FILE), "only the .py files are scanned (notes.txt is ignored)"
    for path, expected in EXPECTED_BY_FILE.items():
        assert dict(got[path]) == expected, path


def test_fixture_covers_every_category(fixture_scan):
    totals = fixture_scan["totals"]
    assert set(totals) == {c.key for c in inv.CATEGORIES}
    assert all(totals[c.key] > 0 for c in inv.CATEGORIES), totals
    expected_total = sum(sum(e.values()) for e in EXPECTED_BY_FILE.values())
    assert sum(totals.values()) == len(fixture_scan["occurrences"]) == expected_total
    assert fixture_scan["files_scanned"] == 6
    assert fixture_scan["unparsable"] == []


def test_torch_multiprocessing_is_kept_apart(fixture_scan):
    apis = {o["api"] for o in fixture_scan["occurrences"] if o["category"] == "multiprocessing"}
    assert apis == {"multiprocessing.Process", "torch.multiprocessing.spawn"}


def test_object_methods_are_listed_apart_with_evidence(fixture_scan):
    got = [(c["path"], c["line"], c["method"], c["receiver"], c["guess"], c["evidence"], c["symbol"])
           for c in fixture_scan["candidates"]]
    assert got == EXPECTED_CANDIDATES
    assert fixture_scan["candidates_total"] == len(EXPECTED_CANDIDATES)
    # never added to the totals
    assert "methods_to_verify" not in fixture_scan["totals"]


def test_ray_call_forms_count_only_in_files_that_import_ray():
    body = "def f(actor, cfg):\n    actor.go.remote(1)\n    return cfg.options(num_gpus=1)\n"
    plain = inv.scan_source(body, "plain.py")
    assert [o for o in plain.occurrences if o.category == "ray"] == [], (
        "without an import of ray, .remote() and .options() are nobody's Ray calls")
    in_ray = inv.scan_source("import ray\n" + body, "uses_ray.py")
    assert sorted(o.api for o in in_ray.occurrences) == [".options(num_gpus=)", ".remote()"]
    assert not in_ray.candidates, "a .remote()/.options() call is counted, not listed as a method to verify"


def test_ray_apis_map_to_the_ray_chapters():
    from lab_snippets.inventory.rules import categorize

    assert categorize("ray.get") == "ray" and categorize("rayon.get") is None
    assert inv.chapters_for("ray.kill")[0] == "29"
    assert inv.chapters_for("ray.util.placement_group.placement_group")[0] == "29"
    assert inv.chapters_for(".options(scheduling_strategy=)")[0] == "29"
    for api in ("ray.get", "ray.wait", "ray.put", ".remote()", ".options(max_concurrency=)"):
        assert ("28" in inv.chapters_for(api)) == ("28" in inv.CHAPTER_BY_NUM), api
    assert "25" in inv.chapters_for(".options(max_concurrency=)"), "25 counts max_concurrency as a cap"


def test_symbols_and_lines(fixture_scan):
    occ = {(o["path"], o["line"], o["api"]): o for o in fixture_scan["occurrences"]}
    assert occ[("classes.py", 25, "async def")]["symbol"] == "State.enter"
    assert occ[("classes.py", 10, "threading.Lock")]["symbol"] == "Worker.__init__"
    assert occ[("pkg/categories.py", 26, "contextvars.ContextVar")]["symbol"] == "<module>"
    assert occ[("aliases.py", 46, "asyncio.get_event_loop")]["kind"] == "assign_target"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import asyncio\ndef f(asyncio):\n    asyncio.sleep(1)\n", {}),
        ("import asyncio\ndef f():\n    asyncio = None\n    asyncio.sleep(1)\n", {}),
        ("from time import sleep\ndef f():\n    sleep = print\n    sleep()\n", {}),
        ("from time import sleep\nclass C:\n    sleep = 1\n    def m(self):\n        sleep(1)\n",
         {("sync_sleep", "time.sleep", "call"): 1}),
        ("def f():\n    global asyncio\n    import asyncio\ndef g():\n    asyncio.run(f())\n",
         {("asyncio", "asyncio.run", "call"): 1}),
        ("import asyncio\nx = [asyncio for asyncio in range(3)]\nasyncio.run(None)\n",
         {("asyncio", "asyncio.run", "call"): 1}),
        ("import asyncio\nf = lambda asyncio: asyncio.run(None)\n", {}),
        ("import os\nos.path.join('a')\nos.environ.get('X')\n", {}),
        ("import torch.multiprocessing\ntorch.multiprocessing.spawn(f)\ntorch.cuda.synchronize()\n",
         {("multiprocessing", "torch.multiprocessing.spawn", "call"): 1}),
        ("import asyncio.subprocess as asp\nasp.PIPE\n",
         {("asyncio", "asyncio.subprocess.PIPE", "reference"): 1}),
        ("def aiter(x):\n    return x\naiter(1)\n", {}),
    ],
)
def test_scoping_forms(source, expected):
    result = inv.scan_source(source, "snippet.py")
    assert result.error is None
    assert dict(Counter((o.category, o.api, o.kind) for o in result.occurrences)) == expected


def test_top_level_await_parses():
    # Notebooks (jupytext .py) use top-level await, which plain ast.parse rejects.
    result = inv.scan_source("import asyncio\nawait asyncio.sleep(0)\n", "nb.py")
    assert result.error is None
    kinds = Counter((o.api, o.kind) for o in result.occurrences)
    assert kinds == {("await", "syntax"): 1, ("asyncio.sleep", "call"): 1}


# -- robustness -----------------------------------------------------------------------------------


def test_unparsable_file_is_reported_not_fatal(tmp_path):
    (tmp_path / "good.py").write_text("import asyncio\nasyncio.run(None)\n")
    (tmp_path / "bad.py").write_text("def broken(:\n    pass\n")
    (tmp_path / "latin.py").write_bytes(b"x = '\xff'\n")  # invalid UTF-8, no coding cookie
    data = inv.scan_tree(tmp_path)
    assert data["files_scanned"] == 3
    assert [u["path"] for u in data["unparsable"]] == ["bad.py", "latin.py"]
    assert data["unparsable"][0]["error"].startswith("SyntaxError")
    assert "(line 1)" in data["unparsable"][0]["error"]
    assert data["totals"]["asyncio"] == 1
    page = inv.render_pages(data, None)["inventory.md"]
    assert "`bad.py`" in page and "could not be parsed" in page


def test_empty_tree(tmp_path):
    data = inv.scan_tree(tmp_path)
    assert data["files_scanned"] == 0
    assert data["occurrences"] == [] and data["candidates"] == []
    assert set(data["totals"].values()) == {0}
    pages = inv.render_pages(data, None)
    assert "None at this commit." in pages["inventory.md"]
    assert "Every mechanism slime uses is taught by some chapter." in pages["chapter_map.md"]


def test_hidden_and_cache_directories_are_skipped(tmp_path):
    for sub in ("__pycache__", ".venv", "pkg"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "m.py").write_text("import asyncio\nasyncio.run(None)\n")
    data = inv.scan_tree(tmp_path)
    assert data["files_scanned"] == 1
    assert {o["path"] for o in data["occurrences"]} == {"pkg/m.py"}


def test_bad_paths_are_clear_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("SLIME_SRC", raising=False)
    assert inv.main(["scan", "--json", str(tmp_path / "o.json")]) == 2
    assert "SLIME_SRC is not set" in capsys.readouterr().err
    monkeypatch.setenv("SLIME_SRC", str(tmp_path / "missing"))
    assert inv.main(["scan", "--json", str(tmp_path / "o.json")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert inv.main(["scan", str(tmp_path), "--commit", "abc", "--json", str(tmp_path / "o.json")]) == 2
    assert "not a git repository" in capsys.readouterr().err


# -- git repositories at a commit -----------------------------------------------------------------


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_repository_at_commit(tmp_path):
    repo = tmp_path / "work"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.py").write_text("import asyncio\nasyncio.run(None)\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "b.py").write_text("import time\ntime.sleep(1)\n")
    (repo / "notes.txt").write_text("import asyncio\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "a.py").write_text("import asyncio\nasyncio.run(None)\nasyncio.run(None)\n")
    _git(repo, "commit", "-q", "-am", "second")
    (repo / "a.py").write_text("# uncommitted edit: no mechanism left\n")

    at_first = inv.scan_tree(repo, first[:10], repo_url="https://example.invalid/o/r")
    assert at_first["source"]["commit"] == first
    assert at_first["totals"]["asyncio"] == 1 and at_first["totals"]["sync_sleep"] == 1
    assert at_first["files_scanned"] == 2
    assert at_first["source"]["label"] == "o/r"
    page = inv.render_pages(at_first, None)["inventory.md"]
    assert f"https://example.invalid/o/r/blob/{first}/a.py#L2" in page

    assert inv.scan_tree(repo, "HEAD")["totals"]["asyncio"] == 2
    # A plain directory scan reads the working tree, not git.
    work = inv.scan_tree(repo)
    assert work["source"]["commit"] is None and work["totals"]["asyncio"] == 0

    # A bare mirror, with no work tree at all, at a commit and at HEAD.
    bare = tmp_path / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert inv.scan_tree(bare, first)["totals"]["asyncio"] == 1
    assert inv.scan_tree(bare)["totals"]["asyncio"] == 2

    out = tmp_path / "inv.json"
    assert inv.main(["scan", str(bare), "--commit", first, "--json", str(out), "--repo-url", ""]) == 0
    assert json.loads(out.read_text())["source"]["repo_url"] is None
    assert inv.main(["scan", str(bare), "--commit", "no-such-commit", "--json", str(out)]) == 2


# -- rendering ------------------------------------------------------------------------------------


def test_json_round_trip_and_render_is_deterministic(fixture_scan, tmp_path):
    path = tmp_path / "inv.json"
    path.write_text(inv.dump_json(fixture_scan))
    loaded = inv.load_json(path)
    assert loaded == json.loads(json.dumps(fixture_scan))
    first = inv.render_pages(loaded, None)
    assert first == inv.render_pages(inv.load_json(path), None)
    assert set(first) == set(inv.PAGE_NAMES)


def test_chapter_links_only_for_existing_chapters(fixture_scan, tmp_path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    (notebooks / "03_tasks_gather.py").write_text("# chapter 03\n")
    (notebooks / "07_queue.py").write_text("# chapter 07\n")
    (tmp_path / "_toc.yml").write_text("chapters:\n  - file: notebooks/03_tasks_gather\n")
    pages = inv.render_pages(fixture_scan, notebooks)
    text = "".join(pages.values())
    assert "{doc}`03 · Task and gather" in text and "<../../notebooks/03_tasks_gather>`" in text
    # 07 exists but is not in the toc; 05 does not exist: plain text, never a link.
    assert "notebooks/07_queue" not in text and "notebooks/05_cancellation" not in text
    assert "05 · Cancellation and timeouts" in pages["chapter_map.md"]


def test_pages_have_no_skipped_heading_levels_and_unique_labels(fixture_scan):
    labels: list[str] = []
    for name, text in inv.render_pages(fixture_scan, None).items():
        level = 0
        in_fence = False
        for line in text.splitlines():
            if line.startswith("```"):
                in_fence = not in_fence if line.strip() in ("```", "````") or not in_fence else in_fence
            if line.startswith("#") and not in_fence:
                new = len(line) - len(line.lstrip("#"))
                assert new <= level + 1, f"{name}: heading level jumps at {line!r}"
                level = new
            if line.startswith("(") and line.endswith(")="):
                labels.append(line[1:-2])
    assert len(labels) == len(set(labels))


def test_every_chapter_rule_names_a_real_chapter():
    for _patterns, chapters in inv.CHAPTER_RULES:
        assert all(c in inv.CHAPTER_BY_NUM for c in chapters)
    assert inv.chapters_for("asyncio.gather") == ("03",)
    assert inv.chapters_for("torch.multiprocessing.spawn")[0] == "12"
    assert inv.chapters_for("select.select") == ()


def test_pinned_commit_is_a_full_sha():
    commit = inv.pinned_commit()
    assert len(commit) == 40 and all(ch in "0123456789abcdef" for ch in commit)


# -- the committed book pages ---------------------------------------------------------------------


def test_committed_pages_match_committed_json(tmp_path):
    """The pages in book/reference are exactly what `render` makes from the committed JSON."""
    committed = REFERENCE / inv.JSON_NAME
    assert committed.is_file(), f"missing {committed}; run: {inv.REGENERATE_HINT}"
    data = inv.load_json(committed)
    assert data["source"]["commit"] == inv.pinned_commit(), (
        f"the inventory is for {data['source']['commit']} but the pin is {inv.pinned_commit()}; "
        f"run: {inv.REGENERATE_HINT}")
    pages = inv.render_pages(data, inv.default_notebooks_dir(REFERENCE))
    stale = [name for name, text in pages.items()
             if not (REFERENCE / name).is_file() or (REFERENCE / name).read_text(encoding="utf-8") != text]
    assert not stale, (f"book/reference pages out of step with the inventory JSON: {stale}; "
                       f"run: {inv.REGENERATE_HINT}")


def test_committed_json_has_no_source_text():
    data = inv.load_json(REFERENCE / inv.JSON_NAME)
    allowed_keys = {"path", "line", "col", "category", "api", "kind", "symbol"}
    assert all(set(o) == allowed_keys for o in data["occurrences"])
    assert all(set(c) == {"path", "line", "col", "method", "receiver", "guess", "evidence", "symbol"}
               for c in data["candidates"])


@pytest.mark.skipif(not os.environ.get("SLIME_SRC"), reason="needs a slime clone in SLIME_SRC")
def test_committed_json_matches_a_fresh_scan_of_slime():
    src = Path(os.environ["SLIME_SRC"])
    data = inv.load_json(REFERENCE / inv.JSON_NAME)
    fresh = inv.scan_tree(src, data["source"]["commit"], repo_url=inv.SLIME_REPO_URL, label="THUDM/slime")
    fresh = json.loads(inv.dump_json(fresh))
    for key in ("parser",):
        fresh.pop(key)
        data.pop(key)
    assert fresh == data, f"the committed inventory is stale; run: {inv.REGENERATE_HINT}"
