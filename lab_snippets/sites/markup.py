"""A call-site box, declared once: its HTML classes (written by ``lab_snippets.sites.view``, found by
the Chinese edition's extension and the tests) and the record of its status that travels with it.

The record is the one place a quote's status is kept: ``show_call_site`` puts one record per box on
its output's metadata under ``META_KEY``; the book build, its fallback check, its summary and the
Chinese edition read it from the executed notebooks (nothing parses the HTML for a status)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping
from typing import Any

BOX = "slime-quote"
CHAIN = "slime-quotes"  # several boxes in order (chapter 14)
TITLE = "slime-title"
EXPLANATION = "slime-explanation"
STATUS_CLASSES = {
    "ok": BOX,
    "mismatch": f"{BOX} slime-mismatch",
    "fallback": f"{BOX} slime-fallback",
    "error": f"{BOX} slime-fallback slime-error",
}
# How a status counts in the build's summary: an error box is a fallback the reader sees.
COUNTED_AS = {"ok": "ok", "mismatch": "mismatch", "fallback": "fallback", "error": "fallback"}

# The output metadata key of a quote's records (a list: one ``show_chapter_sites`` shows several).
META_KEY = "slime_quotes"


def title_open(site_id: str) -> str:
    return f'<span class="{TITLE}" data-site="{html.escape(site_id)}">'


def explanation_open(site_id: str) -> str:
    return f'<div class="{EXPLANATION}" data-site="{html.escape(site_id)}" style="margin-top:.4em">'


def element(kind: str, site_id: str) -> re.Pattern[str]:
    """The title (``kind="title"``) or explanation of site ``site_id`` in a page: groups open, text, close."""
    sid = re.escape(html.escape(site_id))
    if kind == "title":
        return re.compile(rf'(<span class="{TITLE}" data-site="{sid}">)(.*?)(</span>)', re.S)
    return re.compile(rf'(<div class="{EXPLANATION}" data-site="{sid}"[^>]*>)(.*?)(</div>)', re.S)


def prose_html(text: str) -> str:
    """An explanation as HTML: escaped, with its `code spans` shown as code."""
    parts = re.split(r"(`[^`]+`)", text.strip())
    return "".join(f"<code>{html.escape(p[1:-1])}</code>"
                   if p.startswith("`") and p.endswith("`") and len(p) > 1
                   else html.escape(p) for p in parts)


def record(site_id: str | None, chapter: str | None, status: str, problems: list[str],
           title: str = "", explanation: str = "") -> dict[str, Any]:
    """One box's record: which site, whether it was quoted (``status``), why not (``reason``), and the
    English title and explanation it shows (what the Chinese edition's translation must match)."""
    return {"site": site_id, "chapter": chapter, "status": status,
            "reason": "" if status == "ok" else (" | ".join(problems) or status),
            "title": title, "explanation": explanation}


def records_in(nb: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The quote records on the outputs of notebook ``nb`` (nbformat JSON or node), in order."""
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) or []:
            yield from (output.get("metadata") or {}).get(META_KEY, [])
