"""The HTML/text view of a call site, and ``show_call_site`` (what the cells that end a chapter call)."""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass, field

from lab_snippets.sites.markup import (
    CHAIN,
    META_KEY,
    STATUS_CLASSES,
    explanation_open,
    prose_html,
    record,
    title_open,
)
from lab_snippets.sites.registry import HOW_TO_SEE, Registry, RegistryError, Site, _anchor_line, load_registry
from lab_snippets.sites.resolver import Resolution, Resolver, _env_flag, process_resolver

# The book build (lab_snippets.book.bookbuild) sets this for the kernels it runs: a quote that falls
# back shows readers a calm note instead of the resolver's problems. Why it fell back travels on the
# output's metadata (lab_snippets.sites.META_KEY), for the summary printed to the person building.
READER_FALLBACK_ENV = "SLIME_READER_FALLBACK"


def reader_fallback_note(registry: Registry, site: Site) -> str:
    """What a reader of the published book sees when the build had no slime source: what the
    site is, where to read it, how to see it here. No build problem is shown to readers."""
    return (
        f"This copy of the book was built without slime's source, so the lines are not quoted here: "
        f"they are {site.span} ({site.symbol}) in {registry.repo} at commit {registry.short_commit}. "
        "Read them on GitHub through the link below, or run this chapter with a slime clone "
        "(SLIME_SRC=path/to/slime) to see them here."
    )


# --------------------------------------------------------------------------- display

_CODE_BG = "#f6f8fa"
_CODE_FG = "#1f2328"
_MARK_BG = "#fff1a8"
# Line numbers: muted, yet 5.6:1 or more on both backgrounds (#6e7781 gave 3.98:1 on _MARK_BG).
_LINENO_FG = "#57606a"
_STYLE_NAME = "default"


def _highlight_lines(code: str) -> list[str]:
    """Pygments-highlight ``code`` into one inline-styled HTML string per line (no CSS classes)."""
    n = code.count("\n") + 1
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:  # pragma: no cover - pygments is a course dependency
        return [html.escape(line) for line in code.split("\n")]
    formatter = HtmlFormatter(noclasses=True, nowrap=True, style=_STYLE_NAME)
    out = highlight(code, PythonLexer(stripnl=False, ensurenl=True), formatter).split("\n")
    return (out + [""] * n)[:n]


@dataclass
class CallSiteView:
    """What ``show_call_site`` returns: renders as HTML in Jupyter/Jupyter Book, text elsewhere."""

    registry: Registry | None
    site: Site | None
    status: str  # "ok", "mismatch", "fallback", "error"
    lines: list[tuple[int, str]] = field(default_factory=list)
    anchor_line: int | None = None
    origin: str | None = None
    problems: list[str] = field(default_factory=list)

    @classmethod
    def from_resolution(cls, registry: Registry, res: Resolution) -> CallSiteView:
        site = res.site
        lines: list[tuple[int, str]] = []
        anchor = None
        if res.text is not None:
            all_lines = res.text.splitlines()
            lines = [(n, all_lines[n - 1]) for n in range(site.start, min(site.end, len(all_lines)) + 1)]
            anchor = _anchor_line(all_lines, site)
        return cls(registry, site, res.status, lines, anchor, res.origin, list(res.problems))

    @classmethod
    def error(cls, message: str) -> CallSiteView:
        return cls(None, None, "error", problems=[message])

    # ----- shared text

    def _caption(self) -> str:
        assert self.registry is not None and self.site is not None
        return self.registry.caption(self.site)

    def _notes(self) -> list[str]:
        notes = list(self.problems)
        if self.status == "mismatch":
            assert self.site is not None
            notes.insert(
                0,
                f"slime changed here since the course was pinned: {self.site.span} no longer has the "
                f"hash in the registry. These are the lines found (from {self.origin}). "
                "Fix: `python -m lab_snippets.sites relocate` or correct the entry.",
            )
        elif self.status == "fallback":
            if _env_flag(READER_FALLBACK_ENV):
                assert self.registry is not None and self.site is not None
                return [reader_fallback_note(self.registry, self.site)]
            notes.append(HOW_TO_SEE)
        return notes

    @property
    def css_class(self) -> str:
        return STATUS_CLASSES[self.status]

    def record(self) -> dict:
        """This box's status record (``lab_snippets.sites.markup.record``)."""
        site = self.site
        return record(site.id if site else None, site.chapter if site else None, self.status,
                             self.problems, site.title.strip() if site else "",
                             site.explanation.strip() if site else "")

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The HTML, and the box's record on the output's metadata (the other forms IPython adds)."""
        return {"text/html": self._repr_html_()}, {META_KEY: [self.record()]}

    # ----- HTML

    def _repr_html_(self) -> str:
        box = (
            "border:1px solid rgba(128,128,128,.55);border-radius:6px;padding:.6em .8em;"
            "margin:.5em 0;max-width:100%;overflow:hidden"
        )
        parts = [f'<div class="{self.css_class}" style="{box}">']
        if self.status == "error" or self.registry is None or self.site is None:
            parts.append('<div style="font-weight:bold">slime call site unavailable</div>')
            parts += [f'<div style="white-space:pre-wrap">{html.escape(p)}</div>' for p in self.problems]
            parts.append("</div>")
            return "".join(parts)
        site, link = self.site, self.registry.permalink(self.site)
        parts.append(
            '<div style="font-family:monospace;font-size:.9em;margin-bottom:.4em">'
            f'<a href="{html.escape(link)}" style="color:inherit">{html.escape(self._caption())}</a>'
            f' <span style="opacity:.7">\u2014 {title_open(site.id)}'
            f'{html.escape(site.title)}</span></span></div>'
        )
        notes = self._notes()
        if notes:
            warn = self.status == "mismatch"
            border = "#d1242f" if warn else "rgba(128,128,128,.7)"
            parts.append(f'<div style="border-left:3px solid {border};padding-left:.6em;margin:.4em 0">')
            parts += [f'<div style="white-space:pre-wrap">{html.escape(n)}</div>' for n in notes]
            parts.append("</div>")
        if self.lines:
            parts.append(self._code_html())
        parts.append(
            f'<div style="margin-top:.4em"><a href="{html.escape(link)}" style="color:inherit">'
            f"view these lines on GitHub</a></div>"
        )
        # class and data-site let the Chinese edition put the site's translated explanation here
        parts.append(f'{explanation_open(site.id)}{prose_html(site.explanation)}</div>')
        parts.append("</div>")
        return "".join(parts)

    def _code_html(self) -> str:
        highlighted = _highlight_lines("\n".join(text for _, text in self.lines))
        width = len(str(self.lines[-1][0]))
        rows = []
        for (n, _), code in zip(self.lines, highlighted, strict=True):
            marked = n == self.anchor_line
            bg = f"background:{_MARK_BG};" if marked else ""
            edge = "#bf8700" if marked else "transparent"
            rows.append(
                f'<span class="slime-line{" slime-anchor" if marked else ""}" data-line="{n}" '
                f'style="display:block;min-width:100%;width:max-content;box-sizing:border-box;{bg}'
                f'border-left:3px solid {edge}">'
                f'<span style="color:{_LINENO_FG};user-select:none;padding:0 .6em 0 .3em">{n:>{width}}</span>'
                f"{code}</span>"
            )
        pre = (
            f"background:{_CODE_BG};color:{_CODE_FG};border:1px solid rgba(128,128,128,.4);"
            "border-radius:4px;padding:.4em 0;margin:.3em 0;overflow-x:auto;font-size:.85em;line-height:1.4"
        )
        return f'<pre style="{pre}">{"".join(rows)}</pre>'

    # ----- text

    def _text(self, markdown: bool) -> str:
        if self.status == "error" or self.registry is None or self.site is None:
            return "slime call site unavailable:\n" + "\n".join(self.problems)
        site, link = self.site, self.registry.permalink(self.site)
        head = f"{self._caption()} \u2014 {site.title}"
        blocks = [f"**{head}**" if markdown else head]
        blocks += [("> " if markdown else "! ") + n for n in self._notes()]
        if self.lines:
            width = len(str(self.lines[-1][0]))
            body = "\n".join(
                f"{'>' if n == self.anchor_line else ' '}{n:>{width}}  {text}" for n, text in self.lines
            )
            if markdown:
                ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
                body = f"{ticks}\n{body}\n{ticks}"
            blocks.append(body)
        blocks.append(f"[view these lines on GitHub]({link})" if markdown else link)
        blocks.append(site.explanation.strip())
        return ("\n\n" if markdown else "\n").join(blocks)

    def _repr_markdown_(self) -> str:
        return self._text(markdown=True)

    def __repr__(self) -> str:
        return self._text(markdown=False)


@dataclass
class CallSitesView:
    """Several call sites shown in order (chapter 14's task chain)."""

    views: list[CallSiteView]

    def _repr_html_(self) -> str:
        return f'<div class="{CHAIN}">' + "".join(v._repr_html_() for v in self.views) + "</div>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self._repr_html_()}, {META_KEY: [v.record() for v in self.views]}

    def _repr_markdown_(self) -> str:
        return "\n\n---\n\n".join(v._repr_markdown_() for v in self.views)

    def __repr__(self) -> str:
        return "\n\n".join(repr(v) for v in self.views)


def _load_for_display(registry: str | os.PathLike[str] | Registry | None) -> Registry:
    if isinstance(registry, Registry):
        return registry
    return load_registry(registry, strict=False)


def show_call_site(
    site_id: str, *, registry: str | os.PathLike[str] | Registry | None = None
) -> CallSiteView:
    """The quote of one slime call site (exactly ``site_id``). Never raises: a missing source, a dead
    network or a bad registry entry give a view with a clear message and the fallback."""
    try:
        reg = _load_for_display(registry)
        site = reg.get(str(site_id))
    except RegistryError as exc:
        return CallSiteView.error(f"{exc}\nFix the entry, then run `python -m lab_snippets.sites check`.")
    return _view(reg, site, process_resolver(reg))


def show_chapter_sites(
    chapter: str, *, registry: str | os.PathLike[str] | Registry | None = None
) -> CallSitesView:
    """All sites of ``chapter`` in registry order (e.g. chapter 14's chain '14', '14b', '14c')."""
    try:
        reg = _load_for_display(registry)
        sites = reg.chapter_sites(str(chapter))
    except RegistryError as exc:
        return CallSitesView([CallSiteView.error(f"{exc}\nFix the registry, then run `check`.")])
    resolver = process_resolver(reg)
    return CallSitesView([_view(reg, s, resolver) for s in sites])


def _view(reg: Registry, site: Site, resolver: Resolver) -> CallSiteView:
    try:
        res = resolver.resolve(site)
    except Exception as exc:  # noqa: BLE001 - a notebook cell must never fail here
        res = Resolution(site, "fallback", problems=[f"unexpected error while reading slime: {exc!r}"])
    return CallSiteView.from_resolution(reg, res)


