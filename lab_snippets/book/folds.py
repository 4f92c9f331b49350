"""One fold per experiment on a chapter page: the check and the Why go inside the answer's fold.

A chapter's source keeps three things apart after an experiment, each folded: the answer (a cell
whose output, or input and output, is folded), its check (a ``claim`` cell folded with
``hide-cell``) and the explanation (a ``:::{dropdown} Why``). Readers met them as three or more
folds in a row after every experiment (sessions 14 and 15: "I stopped predicting and just clicked
through"). On the page, this extension moves the checks and the Why that follow an answer fold into
it: opening the answer shows the result, then the explanation in view under a small title, then
each check as a fold of its own (the proof stays one click away). The source, the notebooks and
their downloads are unchanged; only the HTML of chapter pages is rearranged.

What moves is found by structure and by the course's own fold titles: the siblings right after a
cell whose fold holds its output, as long as each is a folded check (a ``claim`` cell, or a cell
folded whole under the check label of the page's edition, ``CHECK_LABELS``) or the dropdown whose
title is the edition's Why title (``WHY_TITLES``); anything else (a paragraph, a heading, a "Going
further" dropdown) ends the run. Likewise the cells folded whole right after any other dropdown
("Going further", "Python versions") are that dropdown's experiments and go inside it, unless the
dropdown follows another one (which of the two they belong to is then not clear) or they are an
exercise's cells.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, Tag

WHY_TITLES = ("Why", "为什么会这样")
CHECK_LABELS = ("Show the check", "显示检查")
EXERCISE_TAGS = ("tag_solution", "tag_tests", "tag_hidden-tests")


def _fold(cell: Tag) -> Tag | None:
    """The cell's own fold (MyST-NB's ``details.hide``), if it holds the cell's output."""
    for child in cell.find_all("details", recursive=False):
        if "hide" in (child.get("class") or []) and child.find("div", class_="cell_output"):
            return child
    return None


def _next(tag: Tag) -> Tag | None:
    sib = tag.next_sibling
    while sib is not None and not isinstance(sib, Tag):
        sib = sib.next_sibling
    return sib


def _folded_whole(tag: Tag) -> bool:
    classes = tag.get("class") or []
    return (tag.name == "div" and "cell" in classes and "tag_hide-cell" in classes
            and not any(t in classes for t in EXERCISE_TAGS))


def _label(cell: Tag) -> str:
    title = cell.find("p", class_="collapsed")
    return title.get_text(strip=True) if title else ""


def _is_check(tag: Tag) -> bool:
    return _folded_whole(tag) and ("tag_claim" in tag["class"] or _label(tag) in CHECK_LABELS)


def _is_dropdown(tag: Tag | None) -> bool:
    return tag is not None and tag.name == "details" and "sd-dropdown" in (tag.get("class") or [])


def _why_title(tag: Tag) -> str | None:
    if tag.name != "details" or "sd-dropdown" not in (tag.get("class") or []):
        return None
    text = tag.find(class_="sd-summary-text")
    title = text.get_text(strip=True) if text else ""
    return title if title in WHY_TITLES else None


def merge(body: str) -> tuple[str, int]:
    """``body`` with each answer fold holding the checks and the Why that follow it; and how many
    folds were moved into another."""
    soup = BeautifulSoup(body, "html.parser")
    moved = 0
    for cell in soup.select("div.cell"):
        fold = _fold(cell)
        if fold is None or _is_check(cell) or cell.find_parent("details") is not None:
            continue
        checks, why, sib = [], None, _next(cell)
        while sib is not None:
            if _is_check(sib):
                checks.append(sib)
            elif why is None and _why_title(sib):
                why = sib
            else:
                break
            sib = _next(sib)
        if why is not None:
            title = _why_title(why)
            content = why.find("div", class_="sd-summary-content")
            box = soup.new_tag("div", attrs={"class": "answer-why"})
            head = soup.new_tag("p", attrs={"class": "answer-why-title"})
            head.string = title
            box.append(head)
            for child in list(content.children) if content else []:
                box.append(child.extract())
            why.decompose()
            fold.append(box)
            moved += 1
        for check in checks:
            fold.append(check.extract())
            moved += 1
    for drop in soup.select("details.sd-dropdown"):
        if _why_title(drop) or drop.find_parent("details") is not None:
            continue
        prev = drop.previous_sibling
        while prev is not None and not isinstance(prev, Tag):
            prev = prev.previous_sibling
        content = drop.find("div", class_="sd-summary-content")
        if _is_dropdown(prev) or content is None:
            continue
        sib = _next(drop)
        while sib is not None and _folded_whole(sib):
            after = _next(sib)
            content.append(sib.extract())
            moved += 1
            sib = after
    return (str(soup), moved) if moved else (body, 0)


def _merge_folds(app, pagename, templatename, context, doctree) -> None:
    if doctree is None or "body" not in context or not pagename.startswith("notebooks/"):
        return
    context["body"], _ = merge(context["body"])


def setup(app):
    app.connect("html-page-context", _merge_folds)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
