"""The build's input fingerprint: a rebuild with nothing changed stops after comparing it."""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
from pathlib import Path

from lab_snippets.book.preexec import cache_path
from lab_snippets.book.quotes import quote_counts
from lab_snippets.book.zh import published_zh

# What the pages are made from: a change to any file here, to the interpreter or its installed
# packages, to the slime source settings or to the jupyter cache means the book is built again.
INPUT_DIRS = ("notebooks", "book", "locale", "lab_snippets")
INPUT_FILES = ("_config.yml", "_toc.yml", "requirements.txt")
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints"}


def stamp_path(root: Path) -> Path:
    return Path(root) / "_build" / ".bookbuild-stamp"


def slime_settings() -> tuple[str, ...]:
    """The slime settings a build's pages depend on, as the person building gave them."""
    from lab_snippets.sites.resolver import offline

    return (f"SLIME_SRC={os.environ.get('SLIME_SRC', '')}", f"offline={offline()}")


def input_fingerprint(root: Path, editions: tuple[str, ...], settings: tuple[str, ...] | None = None) -> str:
    """A hash of the build's inputs as the file system describes them (path, size, modification
    time; nothing is read), of the settings (``slime_settings()`` unless given), and of the
    jupyter cache's database file."""
    root = Path(root)
    digest = hashlib.sha256()
    paths = [root / name for name in INPUT_FILES]
    for folder in INPUT_DIRS:
        paths += [p for p in (root / folder).rglob("*") if not SKIP_PARTS & set(p.parts)]
    purelib = Path(sysconfig.get_paths()["purelib"])  # its time changes when packages are installed
    paths += [cache_path(root) / "global.db", purelib]
    for path in sorted(paths):
        try:
            st = path.stat()
        except OSError:
            digest.update(f"{path}: missing\n".encode())
            continue
        if path.is_file() or path == purelib:
            digest.update(f"{path.relative_to(root) if path.is_relative_to(root) else path}: "
                          f"{st.st_size} {st.st_mtime_ns}\n".encode())
    digest.update("\n".join([sys.executable, sys.version, *editions,
                             *(slime_settings() if settings is None else settings)]).encode())
    return digest.hexdigest()


def outputs_exist(root: Path, editions: tuple[str, ...]) -> bool:
    html = Path(root) / "_build" / "html"
    return (html / "index.html").is_file() and (
        "zh_CN" not in editions or (published_zh(root) / "index.html").is_file())


def up_to_date(root: Path, editions: tuple[str, ...]) -> bool:
    """True when the last successful build had exactly these inputs and its pages are still there.

    Pages whose quote fell back are never up to date while a download is allowed (not
    ``SLIME_OFFLINE=1``): the build tries to get slime's files again."""
    stamp = stamp_path(root)
    if not (stamp.is_file() and outputs_exist(root, editions)):
        return False
    from lab_snippets.sites.resolver import offline

    if not offline() and any(
            c["fallback"] or c["mismatch"] for c in quote_counts(root).values()):
        return False
    return stamp.read_text(encoding="utf-8").strip() == input_fingerprint(root, editions)


def record_build(root: Path, editions: tuple[str, ...], settings: tuple[str, ...] | None = None) -> None:
    stamp_path(root).write_text(input_fingerprint(root, editions, settings) + "\n", encoding="utf-8")
