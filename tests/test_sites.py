"""Tests for lab_snippets.sites: registry, resolver chain, display, and the check/fetch/relocate CLI.

Everything runs offline against a made-up, slime-LIKE git repository built in a temporary
directory (toy code written for these tests, not slime's) and a loopback HTTP server standing
in for GitHub's raw file host.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomli_w

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lab_snippets import sites  # noqa: E402
from lab_snippets.sites import (  # noqa: E402
    RegistryError,
    enclosing_symbol,
    load_registry,
    resolver,
    show_call_site,
    show_chapter_sites,
    span_sha256,
    spanning_symbol,  # noqa: E402
)
from lab_snippets.sites import view as sites_view  # noqa: E402
from lab_snippets.sites.admin import main  # noqa: E402

# --------------------------------------------------------------------------- toy "slime" sources

WORKER_V1 = '''\
"""A toy worker for the course's tests."""
import asyncio


class Worker:
    def __init__(self, limit):
        self.gate = asyncio.Semaphore(limit)
        self.done = 0

    async def run(self, job):
        async with self.gate:
            await asyncio.sleep(0)
            self.done += 1
        return job


def make_worker():
    return Worker(2)
'''

# v2: three lines inserted above the class, so Worker's sites move but keep their text.
WORKER_V2 = WORKER_V1.replace(
    "import asyncio\n",
    "import asyncio\nimport logging\n\nLOG = logging.getLogger(__name__)\n",
)

POOL_V1 = """\
import asyncio


async def gather_all(jobs):
    tasks = [asyncio.create_task(job) for job in jobs]
    return await asyncio.gather(*tasks)


async def first_done(jobs):
    done, pending = await asyncio.wait(jobs, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    return done
"""

# v2: gather_all's body changes in place; first_done disappears.
POOL_V2 = """\
import asyncio


async def gather_all(jobs):
    tasks = [asyncio.create_task(job) for job in jobs]
    return await asyncio.gather(*tasks, return_exceptions=True)
"""

LEGACY_V1 = """\
import asyncio


def old_loop():
    loop = asyncio.new_event_loop()
    return loop
"""

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, **GIT_ENV)
    out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def write_tree(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        target = root / rel
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


@dataclass(frozen=True)
class ToyRepo:
    work: Path
    bare: Path
    c1: str
    c2: str
    v1: dict[str, str]
    v2: dict[str, str | None]


V1 = {
    "slime/__init__.py": "",
    "slime/toy/worker.py": WORKER_V1,
    "slime/toy/pool.py": POOL_V1,
    "slime/toy/legacy.py": LEGACY_V1,
}
V2 = {"slime/toy/worker.py": WORKER_V2, "slime/toy/pool.py": POOL_V2, "slime/toy/legacy.py": None}


@pytest.fixture(scope="session")
def toy_repo(tmp_path_factory: pytest.TempPathFactory) -> ToyRepo:
    base = tmp_path_factory.mktemp("toy-slime")
    work = base / "work"
    work.mkdir()
    git(work, "init", "-q")
    write_tree(work, V1)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "v1")
    c1 = git(work, "rev-parse", "HEAD")
    write_tree(work, V2)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "v2")
    c2 = git(work, "rev-parse", "HEAD")
    bare = base / "bare.git"
    git(base, "clone", "-q", "--bare", str(work), str(bare))
    return ToyRepo(work, bare, c1, c2, V1, V2)


def entry(sid: str, path: str, text: str, anchor: str, symbol: str, before: int, after: int, **extra):
    lines = text.splitlines()
    line = next(i + 1 for i, s in enumerate(lines) if anchor in s)
    start, end = line - before, line + after
    return {
        "id": sid,
        "chapter": sid[:2],
        "title": f"toy site {sid}",
        "path": path,
        "start": start,
        "end": end,
        "symbol": symbol,
        "anchor": anchor,
        "sha256": span_sha256(text, start, end),
        "explanation": f"Our own words about toy site {sid}.\nA second line of explanation.",
        **extra,
    }


def toy_entries() -> list[dict]:
    return [
        entry("01", "slime/toy/worker.py", WORKER_V1, "async with self.gate", "Worker.run", 1, 3),
        entry("01b", "slime/toy/worker.py", WORKER_V1, "asyncio.Semaphore(", "Worker.__init__", 1, 1),
        entry("02", "slime/toy/pool.py", POOL_V1, "asyncio.gather(", "gather_all", 2, 0),
        entry("03", "slime/toy/pool.py", POOL_V1, "asyncio.wait(", "first_done", 1, 2),
        entry("04", "slime/toy/legacy.py", LEGACY_V1, "new_event_loop(", "old_loop", 1, 1),
    ]


def write_registry(path: Path, commit: str, entries: list[dict]) -> Path:
    data = {"meta": {"repo": "THUDM/slime", "commit": commit}, "site": entries}
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    return path


@pytest.fixture
def registry_path(tmp_path: Path, toy_repo: ToyRepo) -> Path:
    return write_registry(tmp_path / "sites.toml", toy_repo.c1, toy_entries())


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test sees the user's SLIME_* settings, cache or network: offline unless a test opts in."""
    for name in ("SLIME_SRC", "SLIME_RAW_BASE", "SLIME_FETCH_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("SLIME_COURSE_CACHE", str(cache))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SLIME_OFFLINE", "1")
    return cache


# --------------------------------------------------------------------------- loopback raw host


class RawHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        server = self.server
        server.hits.append(self.path)  # type: ignore[attr-defined]
        body = server.routes.get(self.path)  # type: ignore[attr-defined]
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        if server.short:  # type: ignore[attr-defined]
            self.send_header("Content-Length", str(len(body) + 500))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def raw_host(toy_repo: ToyRepo, monkeypatch: pytest.MonkeyPatch):
    """A loopback server answering /<commit>/<path> with the toy repo's files; network switched on."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RawHandler)
    server.daemon_threads = True
    server.hits = []  # type: ignore[attr-defined]
    server.short = False  # type: ignore[attr-defined]
    server.routes = {  # type: ignore[attr-defined]
        f"/{toy_repo.c1}/{p}": t.encode() for p, t in toy_repo.v1.items()
    }
    server.routes.update(  # type: ignore[attr-defined]
        {
            f"/{toy_repo.c2}/{p}": t.encode()
            for p, t in {**toy_repo.v1, **toy_repo.v2}.items()
            if t is not None
        }
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    monkeypatch.setenv("SLIME_RAW_BASE", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("SLIME_OFFLINE", "0")
    monkeypatch.setenv("SLIME_FETCH_TIMEOUT", "2")
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        assert not thread.is_alive()


@pytest.fixture
def refused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SilentHost:
    """A loopback port that accepts connections (in the kernel's backlog) and never answers.
    ``attempts()`` counts the connections made to it so far: one per download tried."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []

    def attempts(self) -> int:
        # A connection the client has since closed stays in the accept queue, so draining it
        # counts every attempt that reached the port, finished or not.
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return len(self.accepted)
            self.accepted.append(conn)

    def close(self) -> None:
        for conn in self.accepted:
            conn.close()
        self.sock.close()


@pytest.fixture
def silent_host():
    host = SilentHost()
    try:
        yield host
    finally:
        host.close()


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


# --------------------------------------------------------------------------- registry


def test_registry_loads_toy_entries(registry_path: Path, toy_repo: ToyRepo):
    reg = load_registry(registry_path)
    assert reg.commit == toy_repo.c1 and reg.short_commit == toy_repo.c1[:7]
    assert [s.id for s in reg.sites] == ["01", "01b", "02", "03", "04"]
    assert [s.id for s in reg.chapter_sites("01")] == ["01", "01b"]
    site = reg.get("02")
    assert reg.caption(site) == f"THUDM/slime@{toy_repo.c1[:7]} · slime/toy/pool.py:4–6 · gather_all"
    assert reg.permalink(site).endswith(f"/blob/{toy_repo.c1}/slime/toy/pool.py#L4-L6")


def test_default_registry_path_is_packaged():
    assert sites.DEFAULT_REGISTRY == Path(sites.__file__).resolve().parent.parent / "sites.toml"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda e: e.update(anchr=e.pop("anchor")), ["site #2", '"01b"', "missing field 'anchor'", "anchr"]),
        (lambda e: e.update(start=e["end"] + 1), ['"01b"', "'end'", "before 'start'"]),
        (lambda e: e.update(start=0), ['"01b"', "'start'", ">= 1"]),
        (lambda e: e.update(end="12"), ['"01b"', "'end'", "integer"]),
        (lambda e: e.update(sha256="abc"), ['"01b"', "'sha256'", "64"]),
        (lambda e: e.update(id="1b"), ["site #2", "'id'"]),
        (lambda e: e.update(chapter="02"), ['"01b"', "'id'", "chapter"]),
        (lambda e: e.update(id="01"), ['"01"', "'id'", "twice"]),
        (lambda e: e.update(path="/etc/passwd"), ['"01b"', "'path'"]),
        (lambda e: e.update(path="slime/../x.py"), ['"01b"', "'path'"]),
        (lambda e: e.update(symbol="Worker run"), ['"01b"', "'symbol'"]),
        (lambda e: e.update(anchor="a\nb"), ['"01b"', "'anchor'"]),
        (lambda e: e.update(explanation="  "), ['"01b"', "'explanation'", "empty"]),
    ],
)
def test_registry_typo_names_entry_and_field(tmp_path, toy_repo, mutate, expected):
    entries = toy_entries()
    mutate(entries[1])
    path = write_registry(tmp_path / "typo.toml", toy_repo.c1, entries)
    with pytest.raises(RegistryError) as info:
        load_registry(path)
    message = str(info.value)
    assert str(path) in message
    for fragment in expected:
        assert fragment in message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[meta\nrepo = 1", "not valid TOML"),
        ('[meta]\nrepo = "THUDM/slime"\n', "'commit'"),
        ('[meta]\nrepo = "THUDM/slime"\ncommit = "' + "a" * 40 + '"\n', "no [[site]]"),
        ("", "[meta]"),
    ],
)
def test_registry_file_level_errors(tmp_path, text, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RegistryError, match=None) as info:
        load_registry(path)
    assert fragment in str(info.value)


def test_registry_missing_file(tmp_path):
    with pytest.raises(RegistryError, match="registry not found"):
        load_registry(tmp_path / "nope.toml")


def test_unknown_id_is_a_clear_error_and_cell_does_not_raise(registry_path):
    reg = load_registry(registry_path)
    with pytest.raises(RegistryError, match=r"unknown site id '1'\. Did you mean '01'\?"):
        reg.get("1")
    view = show_call_site("99", registry=registry_path)
    assert view.status == "error"
    assert 'class="slime-quote slime-fallback slime-error"' in view._repr_html_()
    assert "unknown site id '99'" in repr(view)


def test_typo_in_one_entry_does_not_break_the_others(tmp_path, toy_repo, monkeypatch):
    entries = toy_entries()
    del entries[2]["symbol"]
    path = write_registry(tmp_path / "typo.toml", toy_repo.c1, entries)
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.work))
    bad = show_call_site("02", registry=path)
    assert bad.status == "error" and "missing field 'symbol'" in repr(bad)
    good = show_call_site("01", registry=path)
    assert good.status == "ok"


# --------------------------------------------------------------------------- AST helpers


def test_enclosing_symbol_is_innermost_and_qualified():
    source = textwrap.dedent(
        """\
        X = 1

        class A:
            @staticmethod
            def m():
                def inner():
                    return 2
                return inner

        async def f():
            pass
        """
    )
    assert enclosing_symbol(source, 1) == "<module>"
    assert enclosing_symbol(source, 4) == "A.m"  # a decorator line belongs to its def
    assert enclosing_symbol(source, 7) == "A.m.inner"
    assert enclosing_symbol(source, 8) == "A.m"
    assert enclosing_symbol(source, 11) == "f"


def test_spanning_symbol_must_hold_the_whole_span_not_only_one_line():
    source = textwrap.dedent(
        """\
        class A:
            def m(self):
                return 1

            def n(self):
                return 2
        """
    )
    assert spanning_symbol(source, 2, 3) == "A.m"
    assert spanning_symbol(source, 3, 6) == "A"  # a span that runs from m into n belongs to the class
    assert spanning_symbol(source, 1, 7) == "<module>"
    assert enclosing_symbol(source, 3) == "A.m"  # the anchor's symbol alone would have said A.m


def test_span_hash_matches_the_registry_formula():
    text = "a\nb\r\nc\n"
    assert span_sha256(text, 2, 3) == hashlib.sha256(b"b\r\nc\n").hexdigest()


# --------------------------------------------------------------------------- SLIME_SRC


@pytest.mark.parametrize("kind", ["work", "bare"])
def test_slime_src_git_repo_quotes_real_lines(registry_path, toy_repo, monkeypatch, kind):
    monkeypatch.setenv("SLIME_SRC", str(getattr(toy_repo, kind)))
    view = show_call_site("01", registry=registry_path)
    assert view.status == "ok", view.problems
    assert view.problems == []
    assert [n for n, _ in view.lines] == [10, 11, 12, 13, 14]
    assert view.anchor_line == 11
    page = view._repr_html_()
    assert page.startswith('<div class="slime-quote"')
    assert 'class="slime-line slime-anchor" data-line="11"' in page
    assert page.count("slime-anchor") == 1
    assert "gate" in page and "Our own words about toy site 01." in page
    assert f"THUDM/slime@{toy_repo.c1[:7]} · slime/toy/worker.py:10–14 · Worker.run" in page
    assert f"https://github.com/THUDM/slime/blob/{toy_repo.c1}/slime/toy/worker.py#L10-L14" in page


def test_html_is_self_contained(registry_path, toy_repo, monkeypatch):
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.work))
    page = show_call_site("01", registry=registry_path)._repr_html_()
    for forbidden in ("<script", "<link", "<style", "<img", "src=", 'class="highlight', "@import"):
        assert forbidden not in page
    urls = {part.split('"')[0] for part in page.split('href="')[1:]}
    assert all(u.startswith("https://github.com/THUDM/slime/blob/") for u in urls)


def test_markdown_and_plain_text(registry_path, toy_repo, monkeypatch):
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.work))
    view = show_call_site("01", registry=registry_path)
    md = view._repr_markdown_()
    assert "```\n 10      async def run(self, job):\n>11          async with self.gate:" in md
    assert "[view these lines on GitHub](https://github.com/THUDM/slime/blob/" in md
    text = repr(view)
    assert text.splitlines()[0].startswith(f"THUDM/slime@{toy_repo.c1[:7]} · slime/toy/worker.py:10–14")
    assert ">11          async with self.gate:" in text


def test_slime_src_plain_tree(registry_path, toy_repo, tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    write_tree(tree, toy_repo.v1)
    monkeypatch.setenv("SLIME_SRC", str(tree))
    assert show_call_site("02", registry=registry_path).status == "ok"
    # the same tree at another version: the hash check catches it, the lines are shown plainly
    write_tree(tree, {"slime/toy/pool.py": POOL_V2})
    view = show_call_site("02", registry=registry_path)
    assert view.status == "mismatch"
    assert "slime changed here since the course was pinned" in view._repr_html_()
    assert "return_exceptions=True" in repr(view)
    assert 'class="slime-quote slime-mismatch"' in view._repr_html_()
    assert any("plain tree" in p and "git checkout" in p for p in view.problems)
    # a file the tree lacks
    (tree / "slime/toy/legacy.py").unlink()
    view = show_call_site("04", registry=registry_path)
    assert view.status == "fallback" and "absent from the source tree" in repr(view)


def assert_fallback(view, fragment: str) -> None:
    assert view.status == "fallback"
    page = view._repr_html_()
    assert page.startswith('<div class="slime-quote slime-fallback"')
    assert fragment in page
    assert "SLIME_SRC" in page and "python -m lab_snippets.sites fetch" in page  # how to see it
    assert "https://github.com/THUDM/slime/blob/" in page and "Our own words" in page
    assert "<pre" not in page


def test_slime_src_missing_path(registry_path, tmp_path, monkeypatch):
    monkeypatch.setenv("SLIME_SRC", str(tmp_path / "no-such-dir"))
    assert_fallback(show_call_site("01", registry=registry_path), "does not exist")


def test_slime_src_not_a_repo(registry_path, tmp_path, monkeypatch):
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("hello")
    monkeypatch.setenv("SLIME_SRC", str(tmp_path / "junk"))
    assert_fallback(show_call_site("01", registry=registry_path), "neither a git repository nor a slime")
    monkeypatch.setenv("SLIME_SRC", str(tmp_path / "junk" / "notes.txt"))
    assert_fallback(show_call_site("01", registry=registry_path), "is a file")


@pytest.mark.parametrize("kind", ["work", "bare"])
def test_slime_src_lacks_commit(tmp_path, toy_repo, monkeypatch, kind):
    path = write_registry(tmp_path / "r.toml", "ab" * 20, toy_entries())
    monkeypatch.setenv("SLIME_SRC", str(getattr(toy_repo, kind)))
    view = show_call_site("01", registry=path)
    assert_fallback(view, "does not contain the pinned commit abababababab")
    assert "git -C" in repr(view) and "fetch origin" in repr(view)


def test_slime_src_file_absent_at_commit(tmp_path, toy_repo, monkeypatch):
    path = write_registry(tmp_path / "r.toml", toy_repo.c2, toy_entries())
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.bare))
    assert_fallback(show_call_site("04", registry=path), "slime/toy/legacy.py is absent at commit")


def test_git_hash_mismatch_is_shown_with_found_lines(tmp_path, toy_repo, monkeypatch):
    path = write_registry(tmp_path / "r.toml", toy_repo.c2, toy_entries())
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.work))
    view = show_call_site("02", registry=path)
    assert view.status == "mismatch"
    assert [n for n, _ in view.lines] == [4, 5, 6]
    assert "slime changed here since the course was pinned" in repr(view)
    assert "return_exceptions=True" in repr(view)


def test_unexpected_error_still_renders(registry_path, monkeypatch):
    def boom(self, site):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(sites.Resolver, "resolve", boom)
    view = show_call_site("01", registry=registry_path)
    assert view.status == "fallback" and "kaboom" in repr(view)


# --------------------------------------------------------------------------- cache and network


def test_offline_without_source_is_the_fallback(registry_path, raw_host, monkeypatch):
    monkeypatch.setenv("SLIME_OFFLINE", "1")
    view = show_call_site("01", registry=registry_path)
    assert_fallback(view, "SLIME_OFFLINE=1")
    assert raw_host.hits == []


def test_download_fills_cache_then_cache_serves(registry_path, raw_host, toy_repo, isolated_env, monkeypatch):
    view = show_call_site("01", registry=registry_path)
    assert view.status == "ok" and view.origin.startswith("download ")
    assert raw_host.hits == [f"/{toy_repo.c1}/slime/toy/worker.py"]
    cached = isolated_env / toy_repo.c1 / "slime/toy/worker.py"
    assert cached.read_text() == WORKER_V1
    assert files_under(isolated_env) == [cached]  # no temp files left behind
    monkeypatch.setenv("SLIME_OFFLINE", "1")
    again = show_call_site("01", registry=registry_path)
    assert again.status == "ok" and again.origin.startswith("cache ")
    assert len(raw_host.hits) == 1


def test_cache_location_follows_xdg(registry_path, raw_host, toy_repo, tmp_path, monkeypatch):
    monkeypatch.delenv("SLIME_COURSE_CACHE")
    assert show_call_site("02", registry=registry_path).status == "ok"
    assert (tmp_path / "xdg" / "slime-course" / toy_repo.c1 / "slime/toy/pool.py").is_file()


def test_download_404(tmp_path, toy_repo, raw_host):
    entries = toy_entries()
    entries[0]["path"] = "slime/toy/missing.py"
    path = write_registry(tmp_path / "r.toml", toy_repo.c1, entries)
    assert_fallback(show_call_site("01", registry=path), "answered 404")


def test_network_refused(registry_path, raw_host, refused_port, monkeypatch):
    monkeypatch.setenv("SLIME_RAW_BASE", f"http://127.0.0.1:{refused_port}")
    view = show_call_site("01", registry=registry_path)
    assert_fallback(view, "could not be reached")
    assert "SLIME_OFFLINE=1" in repr(view)  # the fix names a way out


def test_network_timeout(registry_path, raw_host, silent_host, monkeypatch):
    monkeypatch.setenv("SLIME_RAW_BASE", f"http://127.0.0.1:{silent_host.port}")
    monkeypatch.setenv("SLIME_FETCH_TIMEOUT", "0.2")
    chain = show_chapter_sites("01", registry=registry_path)
    assert [v.status for v in chain.views] == ["fallback", "fallback"]
    assert "did not answer within 0.2 s" in repr(chain)
    assert silent_host.attempts() == 1, "the dead host is tried once per chapter, not once per site"


def test_interrupted_download_leaves_no_half_file(registry_path, raw_host, isolated_env):
    raw_host.short = True
    view = show_call_site("01", registry=registry_path)
    assert_fallback(view, "was cut off")
    assert files_under(isolated_env) == []


def test_atomic_write_cleans_up_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "c" / "f.py"
    resolver._atomic_write(target, b"old\n")

    def broken_replace(src, dst):
        raise OSError("disk vanished")

    monkeypatch.setattr(resolver.os, "replace", broken_replace)
    with pytest.raises(OSError):
        resolver._atomic_write(target, b"new\n")
    assert files_under(tmp_path) == [target] and target.read_bytes() == b"old\n"


@pytest.mark.parametrize("garbage", [b"print('not the file')\n", b"\xff\xfe\x00binary"])
def test_corrupt_cache_is_ignored_and_refetched(registry_path, raw_host, toy_repo, isolated_env, garbage):
    cached = isolated_env / toy_repo.c1 / "slime/toy/worker.py"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(garbage)
    view = show_call_site("01", registry=registry_path)
    assert view.status == "ok" and view.origin.startswith("download ")
    assert any("corrupt" in p for p in view.problems)
    assert cached.read_text() == WORKER_V1


def test_corrupt_cache_offline_is_the_fallback(registry_path, toy_repo, isolated_env):
    cached = isolated_env / toy_repo.c1 / "slime/toy/worker.py"
    cached.parent.mkdir(parents=True)
    cached.write_text("truncated")
    view = show_call_site("01", registry=registry_path)
    assert_fallback(view, "is corrupt (hash mismatch)")


def test_bad_slime_src_falls_through_to_cache(registry_path, raw_host, tmp_path, monkeypatch):
    assert show_call_site("01", registry=registry_path).status == "ok"  # fills the cache
    monkeypatch.setenv("SLIME_OFFLINE", "1")
    monkeypatch.setenv("SLIME_SRC", str(tmp_path / "gone"))
    view = show_call_site("01", registry=registry_path)
    assert view.status == "ok" and view.origin.startswith("cache ")
    assert any("does not exist" in p for p in view.problems)


def test_chapter_chain_in_order(registry_path, toy_repo, monkeypatch):
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.bare))
    chain = show_chapter_sites("01", registry=registry_path)
    assert [v.site.id for v in chain.views] == ["01", "01b"]
    assert chain._repr_html_().count('<div class="slime-quote"') == 2
    assert show_chapter_sites("07", registry=registry_path).views[0].status == "error"


# --------------------------------------------------------------------------- command line


def run_cli(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_check_passes_at_pinned_commit(registry_path, toy_repo, monkeypatch, capsys):
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.bare))
    code, out = run_cli(capsys, "--registry", str(registry_path), "check")
    assert code == 0, out
    assert out.count("\nok   ") + out.startswith("ok   ") == 5
    assert "5 ok, 0 failed" in out


def test_check_reports_each_failure(tmp_path, toy_repo, monkeypatch, capsys):
    entries = toy_entries()
    entries[0]["symbol"] = "Worker"  # not the innermost def
    entries[1]["anchor"] = "return Worker(2)"
    entries[2]["sha256"] = "0" * 64
    path = write_registry(tmp_path / "r.toml", toy_repo.c1, entries)
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.work))
    code, out = run_cli(capsys, "--registry", str(path), "check")
    assert code == 1
    assert "FAIL 01 " in out and "is 'Worker.run', registry says 'Worker'" in out
    assert "FAIL 01b" in out and "anchor 'return Worker(2)' is not in lines" in out
    assert "FAIL 02 " in out and "hash mismatch" in out
    assert "2 ok, 3 failed" in out


def test_check_without_any_source_exits_2(registry_path, capsys):
    code, out = run_cli(capsys, "--registry", str(registry_path), "check")
    assert code == 2
    assert "no slime source at all" in out and "SLIME_SRC" in out


def test_check_with_registry_typo_exits_1(tmp_path, toy_repo, capsys):
    path = tmp_path / "r.toml"
    path.write_text("[meta]\nrepo = 'THUDM/slime'\n")
    code, out = run_cli(capsys, "--registry", str(path), "check")
    assert code == 1 and "'commit'" in out


def test_module_entry_point(registry_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLIME_")}
    env.update(SLIME_OFFLINE="1", SLIME_COURSE_CACHE=str(registry_path.parent / "cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "lab_snippets.sites", "--registry", str(registry_path), "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no slime source at all" in proc.stdout


def test_fetch_fills_cache_for_offline_use(registry_path, toy_repo, isolated_env, monkeypatch, capsys):
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.work))
    code, out = run_cli(capsys, "--registry", str(registry_path), "fetch")
    assert code == 0, out
    assert "3 of 3 files" in out
    assert len(files_under(isolated_env / toy_repo.c1)) == 3
    monkeypatch.delenv("SLIME_SRC")
    assert all(v.status == "ok" for v in show_chapter_sites("01", registry=registry_path).views)
    code, out = run_cli(capsys, "--registry", str(registry_path), "check")
    assert code == 0 and "[cache]" in out


def test_fetch_from_network(registry_path, raw_host, toy_repo, isolated_env, capsys):
    code, out = run_cli(capsys, "--registry", str(registry_path), "fetch")
    assert code == 0, out
    assert len(files_under(isolated_env / toy_repo.c1)) == 3


def test_fetch_without_source_fails(registry_path, capsys):
    code, out = run_cli(capsys, "--registry", str(registry_path), "fetch")
    assert code == 1 and "FAIL slime/toy/worker.py" in out


def test_relocate_reports_moved_changed_missing(registry_path, toy_repo, monkeypatch, capsys):
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.bare))
    before = registry_path.read_text()
    code, out = run_cli(capsys, "--registry", str(registry_path), "relocate", "--to", toy_repo.c2)
    assert code == 1  # missing sites
    statuses = {"moved", "changed", "missing", "unchanged"}
    report = [
        line.split()[:2] for line in out.splitlines() if line.split()[:1] and line.split()[0] in statuses
    ]
    lines = {sid: status for status, sid in report}
    assert lines == {"01": "moved", "01b": "moved", "02": "changed", "03": "missing", "04": "missing"}
    assert "10-14 -> 13-17" in out
    assert "0 unchanged, 2 moved, 1 changed, 2 missing" in out
    assert registry_path.read_text() == before
    code, out = run_cli(capsys, "--registry", str(registry_path), "relocate", "--to", toy_repo.c2, "--write")
    assert code == 1 and "not writing" in out
    assert registry_path.read_text() == before


def test_relocate_write_rewrites_registry(tmp_path, toy_repo, monkeypatch, capsys):
    entries = toy_entries()[:3]
    entries[0]["note"] = "an extra field the tool must keep"
    path = write_registry(tmp_path / "r.toml", toy_repo.c1, entries)
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.work))
    code, out = run_cli(capsys, "--registry", str(path), "relocate", "--to", toy_repo.c2, "--write")
    assert code == 0, out
    data = tomllib.loads(path.read_text())
    assert data["meta"] == {"repo": "THUDM/slime", "commit": toy_repo.c2}
    first = data["site"][0]
    assert (first["start"], first["end"]) == (13, 17)
    assert first["note"] == "an extra field the tool must keep"
    assert first["explanation"] == entries[0]["explanation"]
    assert [set(s) for s in data["site"]] == [set(e) for e in entries]
    code, out = run_cli(capsys, "--registry", str(path), "check")
    assert code == 0, out


def test_relocate_unchanged_and_bad_commit(registry_path, toy_repo, monkeypatch, capsys):
    monkeypatch.setenv("SLIME_SRC", str(toy_repo.work))
    code, out = run_cli(capsys, "--registry", str(registry_path), "relocate", "--to", toy_repo.c1)
    assert code == 0 and "5 unchanged" in out
    code, out = run_cli(capsys, "--registry", str(registry_path), "relocate", "--to", "main")
    assert code == 2 and "40-hex" in out


def test_relocate_through_raw_host(registry_path, raw_host, toy_repo, capsys):
    code, out = run_cli(capsys, "--registry", str(registry_path), "relocate", "--to", toy_repo.c2)
    assert "2 moved, 1 changed, 2 missing" in out


def test_hung_name_lookup_is_bounded(registry_path, raw_host, monkeypatch):
    release = threading.Event()

    def hung_urlopen(*args, **kwargs):  # stands in for a resolver that never answers
        release.wait(5)
        raise OSError("released")

    monkeypatch.setattr(resolver.urllib.request, "urlopen", hung_urlopen)
    monkeypatch.setenv("SLIME_FETCH_TIMEOUT", "0.05")
    began = time.monotonic()
    try:
        view = show_call_site("01", registry=registry_path)
    finally:
        release.set()
    assert time.monotonic() - began < 1.5
    assert_fallback(view, "did not answer within 0.05 s")


# --------------------------------------------------------------------------- the book build's quotes


def cache_chapter(root: Path, outputs: list) -> None:
    """Chapter 01 of a copy of the book at ``root``, executed into its jupyter cache with ``outputs``."""
    import jupytext
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    from lab_snippets.book import bookbuild

    path = root / "notebooks" / "01_async_def.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# %%\nshow_call_site('01')\n")
    nb = jupytext.read(path, fmt="py:percent")
    nb.cells[-1].outputs = outputs
    cache = get_cache(str(bookbuild.cache_path(root)))
    record = cache.add_nb_to_project(str(path), read_data=bookbuild.JUPYTEXT_READER)
    cache.cache_notebook_bundle(CacheBundleIn(nb, record.uri), check_validity=False, overwrite=True)


def displayed(obj) -> dict:
    """``obj`` as a kernel stores its display in the notebook (IPython's formatter, nbformat output)."""
    import nbformat
    from IPython.core.formatters import DisplayFormatter

    data, metadata = DisplayFormatter().format(obj)
    return nbformat.v4.new_output("display_data", data=data, metadata=metadata)


def test_book_fallback_is_calm_for_readers_and_records_the_reason(registry_path, monkeypatch):
    from lab_snippets.sites import markup

    monkeypatch.setenv(sites_view.READER_FALLBACK_ENV, "1")
    view = sites.show_call_site("01", registry=registry_path)
    page = view._repr_html_() + view._repr_markdown_()
    assert view.status == "fallback" and "slime-fallback" in view.css_class
    assert "Fix" not in page and "SLIME_OFFLINE" not in page, "no build problem in front of a reader"
    assert "blob/" in page and "slime/toy/worker.py" in page and "SLIME_SRC" in page  # what, where, how
    output = displayed(view)
    assert output.data["text/html"] == view._repr_html_(), "readers see the same HTML as before"
    assert {"text/plain", "text/markdown"} <= set(output.data)
    (entry,) = output.metadata[markup.META_KEY]
    assert entry["site"] == "01" and entry["status"] == "fallback" and "SLIME_OFFLINE=1" in entry["reason"]
    assert entry["title"] == view.site.title.strip() and entry["explanation"] == view.site.explanation.strip()


def test_a_chain_of_quotes_records_each_box_in_order(registry_path):
    from lab_snippets.sites import markup

    chain = sites.show_chapter_sites("01", registry=registry_path)
    records = displayed(chain).metadata[markup.META_KEY]
    assert [r["site"] for r in records] == [v.site.id for v in chain.views]
    assert all(r["status"] == v.status for r, v in zip(records, chain.views, strict=True))


def test_the_build_reads_a_quote_status_from_what_the_view_displayed(registry_path, tmp_path, monkeypatch):
    """The end-to-end seam: the view's display, stored in an executed notebook, is what the build's
    summary and fallback check read (drop the record from the view and this fails)."""
    from lab_snippets.book import bookbuild

    cache_chapter(tmp_path, [displayed(sites.show_call_site("01", registry=registry_path))])
    assert bookbuild.quote_counts(tmp_path) == {"01_async_def": {"ok": 0, "fallback": 1, "mismatch": 0}}
    assert "1 of 1 fell back" in bookbuild.quote_summary(tmp_path)
    assert "SLIME_OFFLINE=1" in bookbuild.quote_summary(tmp_path), "the summary names the view's reason"
    assert bookbuild.drop_stale_fallbacks(tmp_path, fallbacks=False) == [], "a fallback is kept offline"
    assert bookbuild.drop_stale_fallbacks(tmp_path) == ["01_async_def.py"], "and run again with a source"


def test_book_build_fetches_the_pinned_files_once_then_quotes_offline(registry_path, raw_host, toy_repo,
                                                                       monkeypatch):
    from lab_snippets.book import bookbuild

    reg = sites.load_registry(registry_path)
    assert bookbuild.prepare_quotes(log=lambda _: None, registry=reg) == "fetched"
    paths = {s.path for s in reg.sites}
    assert len(raw_host.hits) == len(paths), "each pinned file is downloaded once"
    assert bookbuild.prepare_quotes(log=lambda _: None, registry=reg) == "cache"
    assert len(raw_host.hits) == len(paths), "a filled cache is not fetched again"
    monkeypatch.setenv("SLIME_OFFLINE", "1")
    monkeypatch.setenv(sites_view.READER_FALLBACK_ENV, "1")
    for site in reg.sites:
        view = sites.show_call_site(site.id, registry=registry_path)
        assert view.status == "ok" and view.lines, site.id
        assert toy_repo.v1[site.path].splitlines()[site.start - 1] in view._repr_markdown_()


def test_book_build_uses_slime_src_when_set(registry_path, toy_repo, monkeypatch):
    from lab_snippets.book import bookbuild

    monkeypatch.setenv("SLIME_SRC", str(toy_repo.bare))
    assert bookbuild.prepare_quotes(log=lambda _: None, registry=sites.load_registry(registry_path)) == "src"
    assert sites.show_call_site("02", registry=registry_path).status == "ok"


def test_book_build_without_any_source_says_so(registry_path):
    from lab_snippets.book import bookbuild

    assert bookbuild.prepare_quotes(log=lambda _: None, registry=sites.load_registry(registry_path)) == "none"


def test_quoted_lines_keep_a_readable_contrast():
    """WCAG's 4.5:1 for the code and its line numbers, on the plain and the marked background."""
    from lab_snippets.sites import view

    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    def contrast(a: str, b: str) -> float:
        high, low = sorted((luminance(a), luminance(b)), reverse=True)
        return (high + 0.05) / (low + 0.05)

    for fg in (view._CODE_FG, view._LINENO_FG):
        for bg in (view._CODE_BG, view._MARK_BG):
            assert contrast(fg, bg) >= 4.5, f"{fg} on {bg}: {contrast(fg, bg):.2f}:1 is below 4.5:1"
    assert contrast("#6e7781", view._MARK_BG) < 4.5, "the counterfactual: the old line-number grey fails"


# --------------------------------------------------------------------------- one resolver per kernel


def test_a_kernel_tries_a_host_that_never_answers_once(silent_host, monkeypatch):
    """Every view of the book's registry, one call per cell as the chapters make them, in one
    process: one download attempt in all, and every quote falls back calmly."""
    monkeypatch.setenv("SLIME_OFFLINE", "0")
    monkeypatch.setenv("SLIME_RAW_BASE", f"http://127.0.0.1:{silent_host.port}")
    monkeypatch.setenv("SLIME_FETCH_TIMEOUT", "0.2")
    reg = sites.load_registry(strict=False)
    assert len(reg.sites) > 20
    views = [show_call_site(site.id) for site in reg.sites]
    views += show_chapter_sites(reg.sites[0].chapter).views
    assert silent_host.attempts() == 1, "the views of one kernel must share its resolver's dead-network memo"
    assert {v.status for v in views} == {"fallback"}
    assert all("did not answer within 0.2 s" in repr(v) for v in views)
    monkeypatch.setenv(sites_view.READER_FALLBACK_ENV, "1")
    calm = show_call_site(reg.sites[-1].id)._repr_html_()
    assert "Fix" not in calm and "did not answer" not in calm, "no build problem in front of a reader"
    assert silent_host.attempts() == 1


def test_a_changed_slime_setting_gets_a_fresh_resolver(registry_path, raw_host, silent_host, monkeypatch):
    base = os.environ["SLIME_RAW_BASE"]
    monkeypatch.setenv("SLIME_RAW_BASE", f"http://127.0.0.1:{silent_host.port}")
    monkeypatch.setenv("SLIME_FETCH_TIMEOUT", "0.2")
    assert show_call_site("01", registry=registry_path).status == "fallback"
    monkeypatch.setenv("SLIME_RAW_BASE", base)
    assert show_call_site("01", registry=registry_path).status == "ok", "a new setting is tried afresh"
    assert silent_host.attempts() == 1


@pytest.mark.parametrize(("value", "is_offline"), [("1", True), ("true", True), ("Yes", True), ("on", True),
                                                   ("0", False), ("", False), ("false", False)])
def test_one_reading_of_slime_offline_for_kernels_and_build(tmp_path, monkeypatch, value, is_offline):
    from lab_snippets.book import bookbuild

    monkeypatch.setenv("SLIME_OFFLINE", value)
    assert resolver.offline() is is_offline
    reg = sites.load_registry(strict=False)
    assert resolver.Resolver(reg).network_allowed() is not is_offline
    # the build: a page that fell back is as good as it gets offline, and is built again online
    import nbformat

    from lab_snippets.sites import markup

    pages = tmp_path / "_build" / "html"
    pages.mkdir(parents=True)
    (pages / "index.html").write_text("en")
    record = markup.record("01", "01", "fallback", ["offline"])
    cache_chapter(tmp_path, [nbformat.v4.new_output("display_data", data={"text/html": "<div></div>"},
                                                    metadata={markup.META_KEY: [record]})])
    bookbuild.record_build(tmp_path, ("en",))
    assert bookbuild.up_to_date(tmp_path, ("en",)) is is_offline


def test_book_build_whose_download_fails_starts_its_kernels_offline(registry_path, silent_host, monkeypatch):
    from lab_snippets.book import bookbuild

    monkeypatch.setenv("SLIME_OFFLINE", "0")
    monkeypatch.setenv("SLIME_RAW_BASE", f"http://127.0.0.1:{silent_host.port}")
    monkeypatch.setenv("SLIME_FETCH_TIMEOUT", "0.2")
    kernel_env: dict[str, str] = {}
    reg = sites.load_registry(registry_path)
    assert bookbuild.prepare_quotes(log=lambda _: None, registry=reg, kernel_env=kernel_env) == "none"
    assert silent_host.attempts() == 1, "the build's fetch tries the dead host once for all pinned files"
    assert kernel_env["SLIME_OFFLINE"] == "1"
    for name, value in kernel_env.items():  # what a kernel the build starts inherits
        monkeypatch.setenv(name, value)
    views = [show_call_site(site.id, registry=registry_path) for site in reg.sites]
    assert {v.status for v in views} == {"fallback"}
    assert silent_host.attempts() == 1, "a kernel started after the failed fetch does not download"
    reason = " | ".join(views[0].problems)
    assert "the book build's own download of the pinned files failed" in reason
    assert "did not answer within 0.2 s" in reason and "unset SLIME_OFFLINE" not in reason, \
        "the reason names what happened, not a setting the person building never made"
