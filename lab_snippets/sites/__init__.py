"""Slime call sites: a pinned registry, live quotes from slime's real source, an offline fallback.

The course never stores slime's source text. ``lab_snippets/sites.toml`` keeps only where each
call site is (path, line span, enclosing symbol, anchor fragment, sha256 of the span) and the
course's own explanation. The quote is read from slime's source when a cell runs, in this order:

1. ``SLIME_SRC`` -- a slime git checkout or bare git directory (read ``<commit>:<path>``
   through git), or a plain source tree (read the file, check the hash);
2. a per-user cache: ``$SLIME_COURSE_CACHE`` or ``$XDG_CACHE_HOME/slime-course`` or
   ``~/.cache/slime-course``, laid out as ``<commit>/<path>``;
3. a download of just that file from GitHub's raw host at the pinned commit
   (``SLIME_RAW_BASE`` overrides the base URL, ``SLIME_FETCH_TIMEOUT`` the timeout;
   never when ``SLIME_OFFLINE`` is 1, true, yes or on: ``resolver.offline()``, the one reading of it);
   the views of one process share one resolver, so a kernel tries a dead network once;
4. the fallback: caption, permalink and explanation, and how to see the quote.

A notebook's "In slime" section ends with cells like ``show_call_site("06")``; it never raises for
lack of source.

Modules: ``registry`` (schema, loading, span/anchor/symbol helpers), ``resolver`` (finding the
source), ``view`` (``show_call_site`` and its HTML/text), ``gitcmd`` (the one git wrapper),
``admin`` (the maintainers' command line, not imported by notebooks)::

    python -m lab_snippets.sites check              # every site resolves and matches
    python -m lab_snippets.sites fetch              # fill the cache for the pinned commit
    python -m lab_snippets.sites relocate --to SHA [--write]
"""

from __future__ import annotations

from lab_snippets.sites.registry import (
    DEFAULT_REGISTRY,
    Registry,
    RegistryError,
    Site,
    enclosing_symbol,
    load_registry,
    span_sha256,
    spanning_symbol,
)
from lab_snippets.sites.resolver import Resolver, cache_root
from lab_snippets.sites.view import CallSitesView, CallSiteView, show_call_site, show_chapter_sites

__all__ = [
    "DEFAULT_REGISTRY",
    "CallSiteView",
    "CallSitesView",
    "Registry",
    "RegistryError",
    "Resolver",
    "Site",
    "cache_root",
    "enclosing_symbol",
    "load_registry",
    "show_call_site",
    "show_chapter_sites",
    "span_sha256",
    "spanning_symbol",
]

