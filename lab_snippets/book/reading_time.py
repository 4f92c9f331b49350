"""How long a chapter takes a reader who predicts, runs and does the exercise.

The rule (stated in the reading guide and CONTRIBUTING.md), applied to the chapter's source:

    minutes = (words of prose + words of visible code) / 150
              + 2 per claim experiment (run it, read its output and its figure)
              + 3 per "Predict" the prose asks for
              + 10 per exercise (one per reference solution)

rounded to the nearest 5 minutes. The chapter's **Needs** line says "about N minutes" with
that N; tests/test_reading.py keeps the two in step. ``python -m lab_snippets.book.reading_time``
prints the table.
"""

import re
from pathlib import Path

import jupytext

WORDS_PER_MINUTE = 150
PER_CLAIM, PER_PREDICT, PER_EXERCISE = 2, 3, 10
FOLDED_SOURCE = {"hide-input", "hide-cell", "remove-input", "remove-cell"}
STATED = re.compile(r"about(\s+(?:#\s*)?)(\d+)(\s+(?:#\s*)?)minutes")


def counts(path: Path) -> dict[str, int]:
    """Prose words, visible code words, claims, predictions and exercises of one chapter."""
    nb = jupytext.read(path, fmt="py:percent")
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    visible = [c for c in nb.cells if c.cell_type == "code"
               and not FOLDED_SOURCE & set(c.metadata.get("tags", []))]

    def tagged(tag: str) -> int:
        return sum(tag in c.metadata.get("tags", []) for c in nb.cells)

    return {"prose words": len(prose.split()), "code words": sum(len(c.source.split()) for c in visible),
            "claims": tagged("claim"), "predictions": len(re.findall(r"\bPredict\b", prose)),
            "exercises": tagged("solution")}


def estimate(path: Path) -> int:
    """The rule's minutes for one chapter, rounded to the nearest 5."""
    n = counts(path)
    minutes = ((n["prose words"] + n["code words"]) / WORDS_PER_MINUTE + PER_CLAIM * n["claims"]
               + PER_PREDICT * n["predictions"] + PER_EXERCISE * n["exercises"])
    return 5 * max(1, round(minutes / 5))


def stated(path: Path) -> int | None:
    """The N of the chapter's "about N minutes" (None when it states none)."""
    found = STATED.search(path.read_text(encoding="utf-8"))
    return int(found.group(2)) if found else None


def main() -> None:
    from lab_snippets.book import chapters

    for chapter in chapters.existing():
        n = counts(chapter.path)
        print(f"{chapter.stem:30} {n['prose words']:5} + {n['code words']:5} words, {n['claims']} claims, "
              f"{n['predictions']} predict, {n['exercises']} exercise: {estimate(chapter.path):3} min "
              f"(stated {stated(chapter.path)})")


if __name__ == "__main__":
    main()
