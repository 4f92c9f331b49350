"""Recorded kills of the claims' counterfactuals: the test command keeps a kill while its inputs hold.

``tests/test_claims.py`` runs every counterfactual of ``tests/mutations.toml``: the chapter, mutated,
in a fresh kernel up to the claim cell (``lab_snippets.testing.claims``), 130 runs of 2 to 30 s
each. Most runs of the test command change no chapter, so a kill recorded for the same inputs is
kept instead of run again, as the corpus keeps its verdicts (``lab_snippets.labs.corpus``):

- **What a run depends on** (``run_digest``): the mutation (chapter, claim, name, find, replace,
  idle cores it needs); the mutated chapter's code cells up to and including the claim cell, with
  the tags that change a run (``RUN_TAGS``; the cells after it never run; prose and folds never
  run); every ``lab_snippets`` module those
  cells import and the runner (``lab_snippets.testing.claims``), with what they import in turn
  (``lab_snippets.labs.support.closure``); and ``requirements.txt``.
- **On which Python**: the full version (``3.11.7``): a patch release can change what a chapter
  shows (gh-119710 changed ``Process.wait()`` in 3.13 and 3.14 patch releases).
- **What is kept**: a kill only. A counterfactual that survived is a failing test and is never
  recorded.

    COURSE_CLAIMS_RECORD_DIR=DIR bash .ci/test        # each kill the run saw: one file in DIR
    python -m lab_snippets.testing.claimrecord record DIR   # merge into book/reference/claim_kills.json
    python -m lab_snippets.testing.claimrecord status       # per Python: kills current, stale, missing
    COURSE_CLAIMS_FULL=1 bash .ci/test                # run every counterfactual, keep nothing

Tooling, not notebook-facing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
from pathlib import Path

from lab_snippets import REPO_ROOT
from lab_snippets.labs import support
from lab_snippets.testing import claims

RECORDS = REPO_ROOT / "book" / "reference" / "claim_kills.json"
FULL_ENV = "COURSE_CLAIMS_FULL"
RECORD_DIR_ENV = "COURSE_CLAIMS_RECORD_DIR"
RUNNER = ("lab_snippets.testing.claims",)
#: The tags that change what a run executes (which cells run, which may raise, which is the claim);
#: the others only fold or hide a cell on the page (``hide-input``, ``remove-output``, ...), so a
#: fold changed for the reader keeps the chapter's kills.
RUN_TAGS = frozenset(claims.SKIP_TAGS | {"raises-exception", claims.CLAIM_TAG})


def python_key() -> str:
    return platform.python_version()


def run_digest(mutation: claims.Mutation, text: str | None = None, repo: Path = REPO_ROOT) -> str:
    """The digest of what the counterfactual's run executes (see the module's docstring); ``text``:
    the chapter's source (default: the file). Empty when the mutation does not apply or its claim
    cell is gone (such a run is never kept)."""
    if text is None:
        text = claims.chapter_path(mutation.chapter).read_text(encoding="utf-8")
    try:
        nb = claims.read_text_notebook(claims.apply(text, mutation))
        cells = {c.slug: c for c in claims.claim_cells(nb)}
    except claims.ClaimError:
        return ""
    if mutation.claim not in cells:
        return ""
    ran = [c for c in nb.cells[:cells[mutation.claim].index + 1] if c.cell_type == "code"]
    h = hashlib.sha256(json.dumps([mutation.chapter, mutation.claim, mutation.name, mutation.find,
                                   mutation.replace, mutation.needs_idle_cores]).encode())
    for cell in ran:
        tags = [t for t in cell.metadata.get("tags", []) if t in RUN_TAGS]
        h.update(b"\0cell\0" + json.dumps([cell.source, tags]).encode())
    roots = set(RUNNER).union(*(support.imported(c.source) for c in ran))
    for name, path in sorted(support.closure(roots, repo).items()):
        h.update(f"\0{name}\0".encode() + hashlib.sha256(path.read_bytes()).hexdigest().encode())
    pins = repo / "requirements.txt"
    h.update(b"\0pins\0" + (pins.read_bytes() if pins.is_file() else b""))
    return h.hexdigest()[:16]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"pythons": {}}


def kept(mutation: claims.Mutation, path: Path = RECORDS) -> dict | None:
    """The recorded kill of this counterfactual on the running Python when it was made with the
    same inputs (``run_digest``); None (run it) otherwise, or when ``COURSE_CLAIMS_FULL`` is set."""
    if os.environ.get(FULL_ENV):
        return None
    got = _load(path)["pythons"].get(python_key(), {}).get(mutation.id)
    if not got or not got.get("killed"):
        return None
    digest = run_digest(mutation)
    return got if digest and got.get("digest") == digest else None


def note_kill(mutation: claims.Mutation, why: str, seconds: float) -> Path | None:
    """Write this run's kill into ``COURSE_CLAIMS_RECORD_DIR`` (one file per counterfactual), if set."""
    folder = os.environ.get(RECORD_DIR_ENV)
    if not folder:
        return None
    digest = run_digest(mutation)
    if not digest:
        return None
    out = Path(folder) / f"{python_key()}-{mutation.id}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"python": python_key(), "id": mutation.id, "digest": digest, "killed": True,
                               "why": why[:200], "seconds": round(seconds, 1)}, indent=1), encoding="utf-8")
    return out


def record(folder: Path, path: Path = RECORDS, mutations: list | None = None) -> tuple[int, int]:
    """Merge the kills in ``folder`` into ``path``; drop records of counterfactuals no longer listed.
    Returns (merged, dropped)."""
    ids = {m.id for m in (mutations if mutations is not None else claims.load_mutations())}
    data = _load(path)
    merged = 0
    for file in sorted(Path(folder).glob("*.json")):
        rec = json.loads(file.read_text(encoding="utf-8"))
        if not rec.get("killed") or not rec.get("digest") or rec.get("id") not in ids:
            continue
        data["pythons"].setdefault(rec["python"], {})[rec["id"]] = {
            k: rec[k] for k in ("digest", "killed", "why", "seconds")}
        merged += 1
    dropped = 0
    for ver, recs in data["pythons"].items():
        for key in [k for k in recs if k not in ids]:
            del recs[key]
            dropped += 1
        data["pythons"][ver] = dict(sorted(recs.items()))
    data["pythons"] = dict(sorted(data["pythons"].items()))
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return merged, dropped


def status(path: Path = RECORDS) -> list[str]:
    """One line per recorded Python: kills current, stale (inputs changed), missing."""
    mutations = claims.load_mutations()
    digests = {m.id: run_digest(m) for m in mutations}
    lines = []
    for ver, recs in sorted(_load(path)["pythons"].items()):
        current = sum(1 for m in mutations if recs.get(m.id, {}).get("digest") == digests[m.id])
        stale = sum(1 for m in mutations if m.id in recs) - current
        lines.append(f"Python {ver}: {current} of {len(mutations)} kills current, {stale} stale, "
                     f"{len(mutations) - current - stale} not recorded")
    return lines or ["no kills recorded"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.testing.claimrecord",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help=f"merge the kills a run wrote into {RECORD_DIR_ENV}")
    rec.add_argument("folder", type=Path)
    sub.add_parser("status", help="per Python: recorded kills current, stale, missing")
    args = parser.parse_args(argv)
    if args.command == "record":
        if not args.folder.is_dir():
            print(f"no such folder: {args.folder}", file=sys.stderr)
            return 2
        merged, dropped = record(args.folder)
        print(f"merged {merged} kills into {RECORDS.relative_to(REPO_ROOT)} ({dropped} of unlisted "
              "counterfactuals dropped)")
    for line in status():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
