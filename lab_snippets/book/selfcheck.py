"""The source inventory's scanner, run on the course's own notebooks: does each chapter use what it teaches?

    python -m lab_snippets.selfcheck            # write book/reference/notebook_self_check.md
    python -m lab_snippets.selfcheck --check    # exit 1 when that page is out of step with notebooks/

For every chapter the page lists the mechanisms the scanner finds in its notebook that the
mechanism-to-chapter map (``lab_snippets.inventory.chapters_for``) assigns to that chapter,
and the mechanisms of other chapters it uses along the way. The capstone (chapter 14)
teaches no mechanism of its own: its row shows which chapters it draws on.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

from lab_snippets.book import chapters
from lab_snippets.inventory import chapters_for, scan_tree

PAGE = chapters.ROOT / "book" / "reference" / "notebook_self_check.md"
CAPSTONE = "14"


def usage_by_chapter(notebooks: Path = chapters.NOTEBOOKS) -> dict[str, Counter]:
    """API -> count of static occurrences, per chapter number, in the chapter notebooks."""
    inventory = scan_tree(notebooks, repo_url=None, label="notebooks")
    per: dict[str, Counter] = defaultdict(Counter)
    for occ in inventory["occurrences"]:
        number = Path(occ["path"]).name[:2]
        if number in chapters.BY_NUMBER:
            per[number][occ["api"]] += 1
    return per


def taught_here(number: str, usage: Counter) -> list[tuple[str, int]]:
    found = [(api, n) for api, n in usage.items() if number in chapters_for(api)]
    return sorted(found, key=lambda item: (-item[1], item[0]))


def borrowed(number: str, usage: Counter) -> list[str]:
    """Other chapters whose mechanisms this notebook uses (main chapter of each API)."""
    others = {chapters_for(api)[0] for api in usage if chapters_for(api) and number not in chapters_for(api)}
    return sorted(others)


def render(per: dict[str, Counter]) -> str:
    lines = [
        "(reference-notebook-self-check)=",
        "# Self-check: the scanner on the course's own notebooks",
        "",
        "The [source inventory](inventory.md) scanner, run on this course's chapter notebooks. For each",
        "chapter: the mechanisms the scanner finds in its notebook that the",
        "[mechanism ↔ chapter map](chapter_map.md) assigns to it (static occurrences, not run counts),",
        "and the other chapters whose mechanisms it uses along the way. A chapter with nothing in the",
        "second column would teach a mechanism without ever using it; the test suite fails if that",
        "happens. Regenerate with `python -m lab_snippets.selfcheck`.",
        "",
        "| chapter | mechanisms it teaches, found in its notebook | also uses mechanisms of chapters |",
        "|---|---|---|",
    ]
    for chapter in chapters.existing():
        usage = per.get(chapter.number, Counter())
        found = taught_here(chapter.number, usage)
        if chapter.number == CAPSTONE and not found:
            shown = "*(capstone: combines the chapters on the right)*"
        else:
            shown = ", ".join(f"`{api}` ×{n}" for api, n in found[:8]) or "**nothing found**"
            if len(found) > 8:
                shown += f", and {len(found) - 8} more"
        others = ", ".join(borrowed(chapter.number, usage)) or "—"
        lines.append(f"| {chapter.number} · {chapter.title} | {shown} | {others} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.selfcheck",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the page is up to date")
    parser.add_argument("--out", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    wanted = render(usage_by_chapter())
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != wanted:
            print(f"{args.out} is out of step with notebooks/: run `python -m lab_snippets.selfcheck`")
            return 1
        print(f"{args.out.name} is up to date")
        return 0
    args.out.write_text(wanted, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
