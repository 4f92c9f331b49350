"""The slime quotes in a build: the pinned files made readable for the kernels, the pages whose
quote fell back run again once a source is there, and the one-line summary of the fallbacks.

Each reads a quote's status from the record ``show_call_site`` left on its output's metadata
(``lab_snippets.sites.markup``), in the executions in the book's jupyter cache (what the pages
show): no page's HTML is parsed for it."""

from __future__ import annotations

import collections
import json
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from lab_snippets.book.preexec import cache_path, probe_cache
from lab_snippets.sites.markup import COUNTED_AS, records_in


def cached_records(root: Path, probed: dict[Path, int | None] | None = None) -> dict[str, list[dict]]:
    """``{chapter stem: [quote record, ...]}`` of each chapter's execution in the book's jupyter cache,
    the outputs its page shows (myst-nb's ``jupyter_execute`` copy of a cached page has none)."""
    from jupyter_cache import get_cache

    if not (cache_path(root) / "global.db").exists():
        return {}
    probed = probe_cache(root) if probed is None else probed
    cache = get_cache(str(cache_path(root)))
    return {path.stem: list(records_in(cached_notebook(cache, pk)))
            for path, pk in sorted(probed.items()) if pk is not None}


def cached_notebook(cache, pk: int) -> dict:
    """The executed notebook of cache record ``pk``, read without touching the cache's database
    (``get_cache_bundle`` records the access, and the database's time is in the build's fingerprint)."""
    path = cache._get_notebook_path_cache(cache.get_cache_record(pk).hashkey)
    return json.loads(path.read_text(encoding="utf-8"))


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
    from lab_snippets.sites.admin import fetch_pinned

    fetched = fetch_pinned(registry)
    log(f"slime quotes: fetched the pinned files into {sites.cache_root() / registry.commit} "
        f"({fetched.summary})")
    if fetched.ok:
        return "fetched"
    if kernel_env is not None:
        failed = fetched.failures[0]
        kernel_env[OFFLINE_ENV] = "1"
        kernel_env[OFFLINE_WHY_ENV] = f"the book build's own download of the pinned files failed ({failed})"
        log("slime quotes: the chapters' kernels will not try the download again")
    return "none"


QUOTE_CALLS = ("show_call_site(", "show_chapter_sites(")


def stale(nb, fallbacks: bool = True, current: Mapping[str, tuple[str, str]] | None = None) -> bool:
    """Whether a cached execution ``nb`` must run again: a quote in it fell back (when ``fallbacks``),
    it calls the call-site view but carries no record (an execution by an older lab_snippets), or a
    box shows a title or explanation its site no longer has in ``current`` (``{site id: (title,
    explanation)}`` of ``lab_snippets/sites.toml`` as it is now: the page would show the old English,
    which the Chinese edition's catalogue no longer translates)."""
    records = list(records_in(nb))
    if not records:
        return any(call in "".join(cell.get("source", "")) for cell in nb.get("cells", [])
                   for call in QUOTE_CALLS)
    if current and any(r.get("site") in current
                       and (r.get("title", ""), r.get("explanation", "")) != current[r["site"]]
                       for r in records):
        return True
    return fallbacks and any(COUNTED_AS.get(r.get("status")) == "fallback" for r in records)


def site_texts(root: Path) -> dict[str, tuple[str, str]]:
    """``{site id: (title, explanation)}`` as a call-site box records them, from ``root``'s
    ``lab_snippets/sites.toml`` (empty when it has none or it cannot be read)."""
    from lab_snippets.sites.registry import RegistryError, load_registry

    path = Path(root) / "lab_snippets" / "sites.toml"
    if not path.is_file():
        return {}
    try:
        registry = load_registry(path, strict=False)
    except RegistryError:
        return {}
    return {site.id: (site.title.strip(), site.explanation.strip()) for site in registry.sites}


def drop_stale_fallbacks(root: Path, probed: dict[Path, int | None] | None = None,
                         fallbacks: bool = True) -> list[str]:
    """Remove cached executions that are ``stale`` (their quote fell back, when ``fallbacks``; they
    carry no quote record; or a box's title or explanation has changed in ``sites.toml`` since), so
    those chapters run again (and mark them uncached in ``probed``, when given)."""
    from jupyter_cache import get_cache

    if not (cache_path(root) / "global.db").exists():
        return []
    probed = probe_cache(root) if probed is None else probed
    cache = get_cache(str(cache_path(root)))
    dropped = []
    current = site_texts(root)
    for path, pk in probed.items():
        if pk is not None and stale(cached_notebook(cache, pk), fallbacks, current):
            cache.remove_cache(pk)
            probed[path] = None
            dropped.append(path.name)
    return dropped


def quote_counts(root: Path) -> dict[str, dict[str, int]]:
    """``{chapter stem: {"ok": n, "fallback": n, "mismatch": n}}`` from the cached executions."""
    return {stem: {k: sum(COUNTED_AS.get(r.get("status")) == k for r in records)
                   for k in ("ok", "fallback", "mismatch")}
            for stem, records in cached_records(root).items()}


def quote_summary(root: Path) -> str:
    """One line for the person building: how many quotes fell back, and why."""
    records = cached_records(root)
    total = sum(len(found) for found in records.values())
    bad = [r for found in records.values() for r in found if r.get("status") != "ok"]
    if not bad:
        return f"slime quotes: all {total} shown from slime's source"
    reasons = collections.Counter(r.get("reason") or r.get("status") for r in bad)
    chapters = sum(1 for found in records.values() if any(r.get("status") != "ok" for r in found))
    return (f"slime quotes: {len(bad)} of {total} fell back to the permalink in {chapters} chapters "
            f"(why: {reasons.most_common(1)[0][0]}); to quote them, set SLIME_SRC to a slime clone or build "
            "with network access")
