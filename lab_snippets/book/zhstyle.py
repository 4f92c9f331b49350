"""Chinese typesetting rules of the zh catalogues, and a measure of translationese (issue 26).

    python -m lab_snippets.book.zhstyle          # "一个" per 1,000 CJK characters, per chapter catalogue
    python -m lab_snippets.book.zhstyle --unitalicize   # rewrite *CJK* as **CJK** (short) or plain
    python -m lab_snippets.book.zhstyle --terms         # zhterms' rules: term links, variants, spacing
    python -m lab_snippets.book.zhstyle --fix-terms     # rewrite term links and code spacing

Chinese typesetting has no italics: a CJK run in ``*...*`` renders as slanted Han characters,
which Chinese technical writing does not use. An English emphasis becomes **bold** (a word being
defined, a stressed word) or nothing (a long phrase) in the Chinese. ``allow_chinese_emphasis``
is the rule ``i18n check`` applies: a translation may show an English italic span as bold or plain.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from lab_snippets import REPO_ROOT
from lab_snippets.book import zhterms
from lab_snippets.book.cjk import allow_chinese_emphasis  # noqa: F401 (re-exported)

ROOT = REPO_ROOT
_CJK = re.compile(r"[\u3400-\u9fff]")
_CODE = re.compile(r"(`+).+?\1", re.S)
# a single-asterisk span (not part of ``**``), as CommonMark opens and closes it
_EM = re.compile(r"(?<![*\\])\*(?![*\s])(.+?)(?<![\s*\\])\*(?!\*)", re.S)
BOLD_UP_TO = 12  # CJK characters: a term or a stressed word is bold; a longer phrase is plain


def _masked(text: str):
    spans = []

    def keep(m):
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    return _CODE.sub(keep, text), spans


def _unmasked(text: str, spans: list[str]) -> str:
    return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], text)


def cjk_emphasis(text: str) -> list[str]:
    """The italic spans of ``text`` (markdown) that hold CJK characters."""
    masked, spans = _masked(text)
    return [_unmasked(m.group(1), spans) for m in _EM.finditer(masked) if _CJK.search(m.group(1))]


def unitalicize(text: str) -> str:
    """``text`` with each italic span holding CJK made bold (up to ``BOLD_UP_TO`` CJK characters)
    or plain; code spans are left alone."""
    masked, spans = _masked(text)

    def swap(m):
        inner = m.group(1)
        if not _CJK.search(inner):
            return m.group(0)
        return f"**{inner}**" if len(_CJK.findall(inner)) <= BOLD_UP_TO else inner

    return _unmasked(_EM.sub(swap, masked), spans)


def chapter_catalogues(root: Path = ROOT) -> list[Path]:
    from lab_snippets.book.i18n import pages_dir

    return sorted((pages_dir(root) / "notebooks").glob("*.po"))


def yige_density(paths: list[Path]) -> tuple[int, int]:
    """(occurrences of 一个, CJK characters) over the translations in ``paths``."""
    from lab_snippets.book.i18n import _messages, read_po

    count = chars = 0
    for path in paths:
        for message in _messages(read_po(path)):
            text = _CODE.sub(" ", message.string or "")
            count += text.count("一个")
            chars += len(_CJK.findall(text))
    return count, chars


def unitalicize_catalogues(root: Path = ROOT) -> int:
    """Rewrite every translation's CJK italics (``unitalicize``) where the result keeps its markup;
    how many messages changed."""
    from lab_snippets.book.i18n import _all_catalogues, _messages, markup_problems, read_po, write_po

    changed = 0
    for path in _all_catalogues(root):
        catalog = read_po(path)
        touched = False
        for message in _messages(catalog):
            if not message.string or message.id == message.string:
                continue
            new = unitalicize(message.string)
            if new != message.string and not markup_problems(message.id, new):
                message.string = new
                touched = True
                changed += 1
        if touched:
            write_po(catalog, path)
    return changed


def fix_term_catalogues(root: Path = ROOT) -> tuple[int, int]:
    """Apply rules 1 and 3 to every translation where the result keeps its markup; returns
    (messages changed, catalogues written)."""
    from lab_snippets.book.i18n import _all_catalogues, _messages, markup_problems, read_po, write_po

    changed = written = 0
    for path in _all_catalogues(root):
        catalog, touched = read_po(path), False
        for message in _messages(catalog):
            if not message.string or message.string == message.id:
                continue
            new = zhterms.space_code(zhterms.chinese_term_roles(message.string))
            if new != message.string and not markup_problems(message.id, new):
                message.string, touched = new, True
                changed += 1
        if touched:
            write_po(catalog, path)
            written += 1
    return changed, written


def term_report(root: Path = ROOT) -> list[str]:
    from lab_snippets.book.i18n import _all_catalogues, _messages, _page_name, read_po

    lines = []
    for path in _all_catalogues(root):
        for message in _messages(read_po(path)):
            if message.string and message.string != message.id and not message.fuzzy:
                where = f"{_page_name(root, path)}: {message.id[:50]!r}"
                lines += [f"{where}: {p}" for p in zhterms.problems(message.string, root)]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab_snippets.book.zhstyle",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--unitalicize", action="store_true", help="rewrite CJK italics in every catalogue")
    ap.add_argument("--terms", action="store_true", help="list what breaks zhterms' rules; exit 1 if any")
    ap.add_argument("--fix-terms", action="store_true", help="Chinese term links, spaced code, everywhere")
    args = ap.parse_args(argv)
    if args.fix_terms:
        changed, written = fix_term_catalogues(ROOT)
        print(f"{changed} messages rewritten in {written} catalogues")
    if args.terms or args.fix_terms:
        lines = term_report(ROOT)
        print("\n".join(lines) if lines else "no term, variant or spacing problems")
        return 1 if lines else 0
    if args.unitalicize:
        print(f"{unitalicize_catalogues(ROOT)} messages rewritten")
    total = [0, 0]
    for path in chapter_catalogues(ROOT):
        n, chars = yige_density([path])
        total[0] += n
        total[1] += chars
        print(f"{path.stem:28} {n:4} 一个 in {chars:6} CJK chars: {1000 * n / max(chars, 1):5.1f} per 1,000")
    density = 1000 * total[0] / max(total[1], 1)
    print(f"{'all chapters':28} {total[0]:4} 一个 in {total[1]:6} CJK chars: {density:5.1f} per 1,000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
