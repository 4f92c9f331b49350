"""The slime quotes in a build: the pinned files made readable for the kernels, the pages whose
quote fell back run again once a source is there, and the one-line summary of the fallbacks."""

from __future__ import annotations

import collections
import io
import json
import os
import re
from collections.abc import MutableMapping
from pathlib import Path

from lab_snippets.book.preexec import cache_path, probe_cache


def quote_log(root: Path) -> Path:
    return Path(root) / "_build" / "slime_quotes.jsonl"


def prepare_quotes(log=print, registry=None, kernel_env: MutableMapping[str, str] | None = None) -> str:
    """Make the pinned slime files readable for the chapters' kernels; how: ``src``, ``cache``,
    ``fetched`` or ``none`` (no source: the quotes fall back). When its own download failed, it
    turns the download off in ``kernel_env`` (the environment the kernels will inherit), saying
    why: the kernels then fall back at once instead of each waiting for the same dead network."""
    from lab_snippets import sites
    from lab_snippets.sites.resolver import OFFLINE_ENV, OFFLINE_WHY_ENV

    if os.environ.get("SLIME_SRC"):
        return "src"
    registry = registry or sites.load_registry(strict=False)
    resolver = sites.Resolver(registry)
    paths = sorted({site.path for site in registry.sites})
    if paths and all(resolver.cache_file(path).is_file() for path in paths):
        return "cache"
    if not resolver.network_allowed():
        return "none"
    out = io.StringIO()
    from lab_snippets.sites.admin import cmd_fetch

    status = cmd_fetch(registry, out=out)
    lines = out.getvalue().strip().splitlines()
    log(f"slime quotes: fetched the pinned files into {sites.cache_root() / registry.commit} "
        f"({lines[-1] if lines else 'no output'})")
    if status == 0:
        return "fetched"
    if kernel_env is not None:
        failed = next((line.removeprefix("FAIL ") for line in lines if line.startswith("FAIL ")), "no output")
        kernel_env[OFFLINE_ENV] = "1"
        kernel_env[OFFLINE_WHY_ENV] = f"the book build's own download of the pinned files failed ({failed})"
        log("slime quotes: the chapters' kernels will not try the download again")
    return "none"


def drop_stale_fallbacks(root: Path, probed: dict[Path, int | None] | None = None) -> list[str]:
    """Remove cached executions whose quote fell back, so those chapters run again with the source
    (and mark them uncached in ``probed``, when given)."""
    from jupyter_cache import get_cache

    if not (cache_path(root) / "global.db").exists():
        return []
    probed = probe_cache(root) if probed is None else probed
    cache = get_cache(str(cache_path(root)))
    pages = quote_counts(Path(root) / "_build" / "html")
    dropped = []
    for path, pk in probed.items():
        page = pages.get(path.stem)
        if page is not None and not page["fallback"]:
            continue  # its page shows the quote: no need to open the cached notebook
        if pk is not None and "slime-fallback" in json.dumps(cache.get_cache_bundle(pk).nb.cells):
            cache.remove_cache(pk)
            probed[path] = None
            dropped.append(path.name)
    return dropped


QUOTE_CLASS = re.compile(r'class="slime-quote( slime-(?:fallback|mismatch))?[ "]')


def quote_counts(html: Path) -> dict[str, dict[str, int]]:
    """``{chapter stem: {"ok": n, "fallback": n, "mismatch": n}}`` from the built chapter pages."""
    counts = {}
    for page in sorted((Path(html) / "notebooks").glob("*.html")):
        found = collections.Counter()
        for m in QUOTE_CLASS.finditer(page.read_text(encoding="utf-8", errors="replace")):
            found[(m.group(1) or " slime-ok").split("-")[-1]] += 1
        counts[page.stem] = {k: found.get(k, 0) for k in ("ok", "fallback", "mismatch")}
    return counts


def quote_summary(root: Path) -> str:
    """One line for the person building: how many quotes fell back, and why."""
    counts = quote_counts(Path(root) / "_build" / "html")
    total = sum(sum(c.values()) for c in counts.values())
    bad = {stem: c["fallback"] + c["mismatch"] for stem, c in counts.items() if c["fallback"] + c["mismatch"]}
    if not bad:
        return f"slime quotes: all {total} shown from slime's source"
    reasons: collections.Counter[str] = collections.Counter()
    log_file = quote_log(root)
    latest = {}
    if log_file.exists():
        for line in log_file.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            latest[entry.get("site")] = entry
    chapters = {stem[:2] for stem in bad}
    for entry in latest.values():
        if entry.get("chapter") in chapters:
            reasons[entry.get("reason", "?")] += 1
    why = (reasons.most_common(1)[0][0] if reasons
           else "not recorded (the pages came from an earlier build's cache)")
    return (f"slime quotes: {sum(bad.values())} of {total} fell back to the permalink in {len(bad)} chapters "
            f"(why: {why}); to quote them, set SLIME_SRC to a slime clone or build with network access")
