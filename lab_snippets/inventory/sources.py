"""Reading a tree of ``.py`` files (a directory, or git at a commit) and writing the inventory JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from lab_snippets.inventory.rules import CATEGORIES, SCHEMA_VERSION, SLIME_REPO_URL
from lab_snippets.inventory.scanner import FileResult, scan_source
from lab_snippets.sites.gitcmd import run_git

GIT_SCAN_TIMEOUT = 300.0  # reading every .py blob of a large repository in one batch
SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}


def iter_directory(root: Path) -> Iterator[tuple[str, bytes]]:
    """``(posix relative path, bytes)`` for every ``.py`` file, skipping hidden and cache directories."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS]
        for name in filenames:
            if name.endswith(".py"):
                full = Path(dirpath) / name
                if full.is_symlink() or not full.is_file():
                    continue
                found.append(full.relative_to(root).as_posix())
    for rel in sorted(found):
        yield rel, (root / rel).read_bytes()


def _git(path: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        proc = run_git(list(args), repo=path, input=stdin, timeout=GIT_SCAN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise InventoryError(f"git {' '.join(args[:2])} did not finish within "
                             f"{GIT_SCAN_TIMEOUT:.0f} s in {path}") from None
    if proc.returncode != 0:
        raise InventoryError(f"git {' '.join(args[:2])} failed in {path}: "
                             f"{proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def is_git_repo(path: Path) -> bool:
    return run_git(["rev-parse", "--git-dir"], repo=path).returncode == 0


def iter_git(path: Path, commit: str) -> Iterator[tuple[str, bytes]]:
    """``.py`` files of a git repository (bare or not) at ``commit``, read from the object store."""
    resolved = _git(path, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").decode().strip()
    listing = _git(path, "ls-tree", "-r", "-z", "--full-tree", resolved)
    blobs: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, otype, sha = meta.decode().split()
        rel = name.decode("utf-8", errors="surrogateescape")
        if otype == "blob" and mode in ("100644", "100755") and rel.endswith(".py"):
            blobs.append((rel, sha))
    blobs.sort()
    if not blobs:
        return
    out = _git(path, "cat-file", "--batch", stdin="".join(f"{sha}\n" for _, sha in blobs).encode())
    pos = 0
    for rel, _sha in blobs:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        start = header_end + 1
        yield rel, out[start:start + size]
        pos = start + size + 1


class InventoryError(Exception):
    """A user-facing error (bad path, unknown commit, missing SLIME_SRC)."""


def source_files(path: Path, commit: str | None) -> tuple[Iterator[tuple[str, bytes]], str | None]:
    """Pick the reader: git at a commit, a bare repository at HEAD, or a plain directory."""
    if not path.exists():
        raise InventoryError(f"{path} does not exist")
    if not path.is_dir():
        raise InventoryError(f"{path} is not a directory")
    if commit is not None:
        if not is_git_repo(path):
            raise InventoryError(f"--commit given but {path} is not a git repository")
        full = _git(path, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").decode().strip()
        return iter_git(path, full), full
    bare = run_git(["rev-parse", "--is-bare-repository"], repo=path)
    if bare.returncode == 0 and bare.stdout.strip() == b"true":
        full = _git(path, "rev-parse", "--verify", "HEAD^{commit}").decode().strip()
        return iter_git(path, full), full
    return iter_directory(path), None


def scan_tree(path: Path, commit: str | None = None, repo_url: str | None = SLIME_REPO_URL,
              label: str | None = None) -> dict:
    """Scan a tree and return the inventory as a JSON-ready dict."""
    files, full_commit = source_files(path, commit)
    results = [scan_source(data, rel) for rel, data in files]
    repo_url = repo_url.rstrip("/") if (repo_url and full_commit) else None
    if label is None:
        label = "/".join(repo_url.split("/")[-2:]) if repo_url else path.resolve().name
    return build_inventory(results, commit=full_commit, repo_url=repo_url, label=label)


def build_inventory(results: list[FileResult], commit: str | None, repo_url: str | None, label: str) -> dict:
    occurrences = sorted(o for r in results for o in r.occurrences)
    candidates = sorted(c for r in results for c in r.candidates)
    totals = Counter(o.category for o in occurrences)
    return {
        "schema": SCHEMA_VERSION,
        "tool": "lab_snippets.inventory",
        "source": {"label": label, "repo_url": repo_url, "commit": commit},
        "parser": f"Python {sys.version_info.major}.{sys.version_info.minor} ast",
        "files_scanned": len(results),
        "files_with_occurrences": len({o.path for o in occurrences}),
        "unparsable": [{"path": r.path, "error": r.error} for r in sorted(results, key=lambda r: r.path)
                       if r.error],
        "totals": {c.key: totals.get(c.key, 0) for c in CATEGORIES},
        "candidates_total": len(candidates),
        "occurrences": [asdict(o) for o in occurrences],
        "candidates": [asdict(c) for c in candidates],
    }


def dump_json(inventory: dict) -> str:
    """Stable, diff-friendly JSON: one record per line."""
    head = {k: v for k, v in inventory.items() if k not in ("occurrences", "candidates")}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    for key in ("occurrences", "candidates"):
        records = inventory[key]
        lines.append(f"  {json.dumps(key)}: [")
        for i, rec in enumerate(records):
            comma = "," if i < len(records) - 1 else ""
            lines.append("    " + json.dumps(rec, ensure_ascii=False, separators=(", ", ": ")) + comma)
        lines.append("  ]," if key == "occurrences" else "  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def load_json(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA_VERSION:
        raise InventoryError(f"{path}: schema {data.get('schema')!r}, expected {SCHEMA_VERSION}")
    return data


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------
