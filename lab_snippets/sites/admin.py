"""The call-site admin command line: ``python -m lab_snippets.sites check|fetch|relocate``.

Usage::

    python -m lab_snippets.sites check              # every site resolves and matches; with SLIME_SRC,
                                                    # the universal statements hold at the pin too
    python -m lab_snippets.sites fetch              # fill the cache for the pinned commit
    python -m lab_snippets.sites relocate --to SHA [--write]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from lab_snippets.sites import universals
from lab_snippets.sites.registry import (
    _COMMIT_RE,
    DEFAULT_REGISTRY,
    HOW_TO_SEE,
    MODULE_SYMBOL,
    Registry,
    RegistryError,
    Site,
    _anchor_line,
    _symbol_table,
    enclosing_symbol,
    load_registry,
    span_sha256,
    spanning_symbol,
)
from lab_snippets.sites.resolver import Resolution, Resolver, SourceProblem, _atomic_write, cache_root

# --------------------------------------------------------------------------- command line


def check_site(registry: Registry, site: Site, res: Resolution) -> list[str]:
    """Problems with one resolved site (empty when it is fine)."""
    if res.text is None:
        return ["no source: " + (" | ".join(res.problems) or "nothing could be read")]
    lines = res.text.splitlines()
    failures: list[str] = []
    if site.end > len(lines):
        failures.append(f"span ends at line {site.end} but {site.path} has {len(lines)} lines")
    if res.status == "mismatch":
        failures.append(f"hash mismatch: lines {site.start}-{site.end} are not the pinned text")
    anchor = _anchor_line(lines, site)
    if anchor is None:
        failures.append(f"anchor {site.anchor!r} is not in lines {site.start}-{site.end}")
    elif site.path.endswith(".py"):
        # The caption names the symbol, so it must hold the whole quoted span, not only the anchor.
        try:
            actual = spanning_symbol(res.text, site.start, min(site.end, len(lines)))
        except SyntaxError as exc:
            failures.append(f"{site.path} does not parse: {exc}")
        else:
            if actual != site.symbol:
                failures.append(f"the innermost symbol holding lines {site.start}-{site.end} is {actual!r}, "
                                f"registry says {site.symbol!r}")
    return failures


def cmd_check(registry: Registry, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    resolver = Resolver(registry)
    bad = unresolved = 0
    for error in registry.errors:
        print(f"FAIL registry: {error}", file=out)
    for site in registry.sites:
        res = resolver.resolve(site)
        failures = check_site(registry, site, res)
        if res.text is None:
            unresolved += 1
        if failures:
            bad += 1
            print(f"FAIL {site.id:<4} {site.span} {site.symbol}: " + "; ".join(failures), file=out)
        else:
            where = (res.origin or "").rsplit(" ", 1)[0]
            print(f"ok   {site.id:<4} {site.span} {site.symbol} [{where}]", file=out)
    n = len(registry.sites)
    if n and unresolved == n:
        print(
            f"no slime source at all: none of {n} sites could be read.\n{HOW_TO_SEE}",
            file=out,
        )
        return 2
    print(
        f"checked {n} sites at {registry.repo}@{registry.short_commit}: {n - bad} ok, {bad} failed"
        + (f", {len(registry.errors)} registry errors" if registry.errors else ""),
        file=out,
    )
    is_default = Path(registry.path).resolve() == DEFAULT_REGISTRY.resolve()
    universal_failures = check_universals(registry, out) if is_default else 0
    return 1 if bad or registry.errors or universal_failures else 0


def check_universals(registry: Registry, out: TextIO) -> int:
    """The statements about all of slime, searched for in the whole tree at the pin (needs SLIME_SRC)."""
    try:
        statements = universals.load_statements()
    except universals.UniversalsError as exc:
        print(f"FAIL {exc}", file=out)
        return 1
    src = os.environ.get("SLIME_SRC")
    tree = universals.Tree(src, registry.commit) if src else None
    try:
        return universals.report(statements, tree, out)
    except universals.UniversalsError as exc:
        print(f"FAIL universal statements: {exc}", file=out)
        return 1


@dataclass
class Fetched:
    """What ``fetch_pinned`` did: one line per pinned file (as ``fetch`` prints them) and the failures."""

    lines: list[str]
    failures: list[str]  # "path: why", one per file not cached
    summary: str  # "cache <dir>: n of m files"

    @property
    def ok(self) -> bool:
        return not self.failures


def fetch_pinned(registry: Registry, say=None) -> Fetched:
    """Put every pinned file in the local cache (downloading what is not there yet); ``say`` (if
    given) gets each file's line as soon as that file is done."""
    resolver = Resolver(registry)
    lines: list[str] = []
    failures: list[str] = []
    by_path: dict[str, list[Site]] = {}
    for site in registry.sites:
        by_path.setdefault(site.path, []).append(site)
    for path, sites in by_path.items():
        results = [resolver.resolve(s) for s in sites]
        good = [r for r in results if r.status == "ok"]
        if len(good) == len(results):
            res = good[0]
            if res.origin and res.origin.startswith("cache "):
                lines.append(f"ok   {path} (already cached)")
            else:
                target = resolver.write_cache(path, res.text or "")
                lines.append(f"ok   {path} -> {target} (from {res.origin})")
        else:
            why = [p for r in results for p in r.problems] or [
                f"site {r.site.id}: hash mismatch" for r in results if r.status == "mismatch"
            ]
            failures.append(f"{path}: " + " | ".join(dict.fromkeys(why)))
            lines.append(f"FAIL {failures[-1]}")
        if say is not None:
            say(lines[-1])
    done = len(by_path) - len(failures)
    summary = f"cache {cache_root() / registry.commit}: {done} of {len(by_path)} files"
    return Fetched(lines, failures, summary)


def cmd_fetch(registry: Registry, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    fetched = fetch_pinned(registry, say=lambda line: print(line, file=out))
    print(fetched.summary, file=out)
    return 0 if fetched.ok else 1


@dataclass
class Relocation:
    site: Site
    status: str  # "unchanged", "moved", "changed", "missing"
    start: int | None = None
    end: int | None = None
    sha256: str | None = None
    note: str = ""


def relocate_site(site: Site, old_text: str | None, new_text: str | None) -> Relocation:
    """Find ``site`` in ``new_text`` by its symbol (AST) and anchor; shift the span with the anchor."""
    if new_text is None:
        return Relocation(site, "missing", note=f"{site.path} is absent at the new commit")
    old_lines = old_text.splitlines() if old_text is not None else None
    length = site.end - site.start
    old_anchor = _anchor_line(old_lines, site) if old_lines is not None else None
    offset = (old_anchor - site.start) if old_anchor is not None else 0
    occurrence = 0
    if old_text is not None and old_anchor is not None:
        try:
            occurrence = _occurrences(old_text, site).index(old_anchor)
        except (SyntaxError, ValueError):
            occurrence = 0
    try:
        candidates = _occurrences(new_text, site)
    except SyntaxError as exc:
        return Relocation(site, "missing", note=f"{site.path} does not parse at the new commit: {exc}")
    if not candidates:
        names = {name for name, _, _ in _symbol_table(new_text)}
        what = "symbol" if site.symbol not in names and site.symbol != MODULE_SYMBOL else "anchor in symbol"
        return Relocation(site, "missing", note=f"{what} not found: {site.symbol} / {site.anchor!r}")

    def span_for(line: int) -> tuple[int, int]:
        start = max(1, line - offset)
        return start, start + length

    chosen = next(
        (c for c in candidates if span_sha256(new_text, *span_for(c)) == site.sha256),
        candidates[min(occurrence, len(candidates) - 1)],
    )
    start, end = span_for(chosen)
    digest = span_sha256(new_text, start, end)
    n_lines = len(new_text.splitlines())
    if end > n_lines:
        end = n_lines
        digest = span_sha256(new_text, start, end)
    if digest == site.sha256:
        status = "unchanged" if start == site.start else "moved"
    else:
        status = "changed"
    note = f"{site.start}-{site.end} -> {start}-{end}" if start != site.start else f"{start}-{end}"
    if old_text is None:
        note += " (old text unavailable: took the first anchor in the symbol)"
    return Relocation(site, status, start, end, digest, note)


def _occurrences(text: str, site: Site) -> list[int]:
    """Lines containing the anchor that lie inside the site's symbol (in it or in a def nested in it)."""
    lines = text.splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if site.anchor in line]
    if not hits:
        return []

    def inside(name: str) -> bool:
        return site.symbol == MODULE_SYMBOL or name == site.symbol or name.startswith(site.symbol + ".")

    return [n for n in hits if inside(enclosing_symbol(text, n))]


def cmd_relocate(registry: Registry, to: str, write: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    to = to.strip().lower()
    if not _COMMIT_RE.match(to):
        print(f"--to must be a full 40-hex commit id, got {to!r}", file=out)
        return 2
    resolver = Resolver(registry)
    results: list[Relocation] = []
    for site in registry.sites:
        try:
            old = resolver.read_at(registry.commit, site.path)
        except SourceProblem:
            old = None
        try:
            new = resolver.read_at(to, site.path)
        except SourceProblem as exc:
            if exc.absent:
                results.append(Relocation(site, "missing", note=f"{site.path} is absent at {to[:7]}"))
                continue
            print(f"cannot read {site.path} at {to[:7]}: {exc}", file=out)
            return 2
        results.append(relocate_site(site, old, new))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
        print(f"{r.status:<9} {r.site.id:<4} {r.site.path} {r.site.symbol}: {r.note}", file=out)
    print(
        f"relocate {registry.short_commit} -> {to[:7]}: "
        + ", ".join(f"{counts.get(k, 0)} {k}" for k in ("unchanged", "moved", "changed", "missing")),
        file=out,
    )
    if not write:
        print("registry not written (pass --write to update it)", file=out)
        return 1 if counts.get("missing") else 0
    if counts.get("missing"):
        print("not writing: fix or remove the missing sites by hand first", file=out)
        return 1
    write_relocated(registry, to, results)
    print(
        f"wrote {registry.path}"
        + (" -- review the explanations of changed sites" if counts.get("changed") else ""),
        file=out,
    )
    return 0


def write_relocated(registry: Registry, commit: str, results: Iterable[Relocation]) -> None:
    import tomli_w

    data = {k: v for k, v in registry.raw.items()}
    data["meta"] = dict(data["meta"], commit=commit)
    by_id = {r.site.id: r for r in results}
    new_sites = []
    for entry in data["site"]:
        entry = dict(entry)
        r = by_id.get(entry.get("id"))
        if r is not None and r.start is not None:
            entry.update(start=r.start, end=r.end, sha256=r.sha256)
        new_sites.append(entry)
    data["site"] = new_sites
    _atomic_write(registry.path, tomli_w.dumps(data, multiline_strings=True).encode("utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.sites", description=__doc__.split("\n")[0])
    parser.add_argument("--registry", default=None, help="registry file (default: lab_snippets/sites.toml)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="every site resolves at the pinned commit and matches")
    sub.add_parser("fetch", help="fill the per-user cache for the pinned commit")
    rel = sub.add_parser("relocate", help="re-find every site in another commit")
    rel.add_argument("--to", required=True, metavar="COMMIT", help="full commit id to move to")
    rel.add_argument("--write", action="store_true", help="rewrite the registry")
    args = parser.parse_args(argv)
    try:
        registry = load_registry(args.registry, strict=False)
    except RegistryError as exc:
        print(f"FAIL {exc}", file=sys.stdout)
        return 1
    if args.command == "check":
        return cmd_check(registry)
    if registry.errors:
        for error in registry.errors:
            print(f"FAIL registry: {error}")
        return 1
    if args.command == "fetch":
        return cmd_fetch(registry)
    return cmd_relocate(registry, args.to, args.write)


if __name__ == "__main__":
    sys.exit(main())
