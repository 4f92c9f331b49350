"""The Chinese edition's catalogues: extract, update, prefill, check and report (issue 19).

    python -m lab_snippets.book.i18n update     # new templates from the sources, merged into the .po files
    python -m lab_snippets.book.i18n status     # translated / fuzzy / untranslated per page
    python -m lab_snippets.book.i18n check      # kept markup (code, links, roles), zhterms rules; exit 1
    python -m lab_snippets.book.i18n report     # regenerate book/reference/translation_status.md
    python -m lab_snippets.book.i18n export locale/zh_CN/LC_MESSAGES/notebooks/02_await.po > todo.txt
    python -m lab_snippets.book.i18n apply  locale/zh_CN/LC_MESSAGES/notebooks/02_await.po answers.txt

One catalogue per page, in ``locale/zh_CN/LC_MESSAGES/<page>.po``, made the ecosystem's way:
Sphinx's ``gettext`` builder writes the templates (``_build/gettext``, prose of markdown cells
and pages only: nothing is executed) and ``sphinx-intl update`` merges them into the ``.po``
files, marking a message whose English changed as fuzzy. The call-site titles and
explanations (``lab_snippets/sites.toml``) are rendered by code, not by Sphinx, so they have
their own catalogues, one per chapter: ``locale/zh_CN/sites/<chapter>.po`` (``msgctxt`` is
``"<site id> title"`` or ``"<site id> explanation"``), merged with Babel, the library
sphinx-intl itself uses.

``prefill`` copies a message into its translation when it has nothing to translate: only code
spans, paths, numbers and punctuation, or Chinese already (the chapters' original Chinese
subtitles). Everything else is translated by a person.
"""

from __future__ import annotations

import argparse
import collections
import io
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lab_snippets import REPO_ROOT
from lab_snippets.book.cjk import ROLE_TITLE, allow_chinese_emphasis, code_spans
from lab_snippets.book.zhterms import problems as zh_rules  # terms, variants, code spacing (issue 42)

LANG = "zh_CN"
ROOT = REPO_ROOT


def locale_dir(root: Path = ROOT) -> Path:
    return Path(root) / "locale"


def pages_dir(root: Path = ROOT) -> Path:
    return locale_dir(root) / LANG / "LC_MESSAGES"


def sites_dir(root: Path = ROOT) -> Path:
    return locale_dir(root) / LANG / "sites"


# Settings shared by every Sphinx run of the Chinese edition and of the extraction.
GETTEXT_SETTINGS = {
    "gettext_compact": False,    # one catalogue per page
    "gettext_location": False,   # no "file:line" comments: moving a cell does not touch a catalogue
    "gettext_uuid": False,
    "gettext_additional_targets": [],
}


def sphinx_overrides(root: Path) -> dict:
    """What ``jupyter-book build`` passes to Sphinx besides ``_config.yml`` (its CLI adds these)."""
    return {"external_toc_path": (Path(root) / "_toc.yml").as_posix(), "latex_individualpages": False}


def extract(root: Path = ROOT, out: Path | None = None, quiet: bool = True) -> Path:
    """Write the templates (``.pot``) of every page into ``out`` (default ``_build/gettext``)."""
    from jupyter_book.sphinx import build_sphinx

    root = Path(root)
    out = Path(out) if out else root / "_build" / "gettext"
    overrides = {**sphinx_overrides(root), **GETTEXT_SETTINGS, "nb_execution_mode": "off",
                 # nothing runs, so myst-nb has no kernel to name the cells' language: say it
                 "suppress_warnings": ["mystnb.unknown_mime_type", "myst-nb.lexer"]}
    status = build_sphinx(root, out, noconfig=True, path_config=str(root / "_config.yml"),
                          confoverrides=overrides, doctreedir=out.parent / ".doctrees-gettext",
                          builder="gettext", freshenv=True, keep_going=True, quiet=quiet, really_quiet=quiet)
    if status != 0:
        raise RuntimeError(f"sphinx gettext builder failed (status {status!r})")
    return out


# ----------------------------------------------------------------------------- catalogues


def read_po(path: Path):
    from babel.messages.pofile import read_po as babel_read

    with open(path, "rb") as handle:
        return babel_read(handle, locale=LANG)


def write_po(catalog, path: Path) -> None:
    from babel.messages.pofile import write_po as babel_write

    buffer = io.BytesIO()
    babel_write(buffer, catalog, width=0, omit_header=False, sort_output=False, ignore_obsolete=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())


def _messages(catalog):
    return [m for m in catalog if m.id]


def sites_template(chapter: str, registry=None):
    """A Babel catalogue of the chapter's call-site titles and explanations (English)."""
    from babel.messages.catalog import Catalog

    from lab_snippets.sites import load_registry

    registry = registry or load_registry(strict=False)
    catalog = Catalog(locale=None, project="slime course: call sites", fuzzy=False)
    for site in registry.sites:
        if site.chapter == chapter:
            catalog.add(site.title.strip(), context=f"{site.id} title")
            catalog.add(site.explanation.strip(), context=f"{site.id} explanation")
    return catalog


def update_sites(root: Path = ROOT, registry=None) -> list[str]:
    """Merge the registry's English into ``locale/zh_CN/sites/<chapter>.po``; the files changed."""
    from babel.messages.catalog import Catalog

    from lab_snippets.sites import load_registry

    registry = registry or load_registry(strict=False)
    changed = []
    for chapter in sorted({s.chapter for s in registry.sites}):
        template = sites_template(chapter, registry)
        path = sites_dir(root) / f"{chapter}.po"
        catalog = read_po(path) if path.exists() else Catalog(locale=LANG, project="slime course: call sites")
        before = path.read_bytes() if path.exists() else b""
        if before:
            template.creation_date = catalog.creation_date  # no churn: the date moves only with the texts
        catalog.update(template, no_fuzzy_matching=False)
        write_po(catalog, path)
        if path.read_bytes() != before:
            changed.append(str(path.relative_to(root)))
    return changed


def site_translations(root: Path = ROOT) -> dict[tuple[str, str], str]:
    """``{(site id, "title"|"explanation"): Chinese}`` for every translated, current, non-fuzzy entry,
    keyed also by the English it translates (so a changed English text shows in English)."""
    found = {}
    folder = sites_dir(root)
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.po")):
        for message in _messages(read_po(path)):
            if message.string and not message.fuzzy and message.context:
                site_id, _, kind = message.context.partition(" ")
                found[(site_id, kind)] = (message.id, message.string)
    return found


def update(root: Path = ROOT, quiet: bool = True, _second_pass: bool = False) -> str:
    """Templates from the sources, merged into every ``.po`` (pages and sites); a summary line."""
    root = Path(root)
    pot = extract(root, quiet=quiet)
    import subprocess

    intl = Path(sys.executable).with_name("sphinx-intl")
    result = subprocess.run([str(intl) if intl.exists() else "sphinx-intl", "update", "-p", str(pot),
                             "-l", LANG, "-d", str(locale_dir(root)), "-w", "0"],
                            cwd=root, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"sphinx-intl update failed:\n{result.stdout}\n{result.stderr}")
    _drop_stale_pages(root, pot)
    sites_changed = update_sites(root)
    from lab_snippets.book import zhsearch

    zhsearch.write(root)  # the search's user dictionary follows TERMS.md and the chapter titles
    filled = prefill(root)
    if write_report(root) and not _second_pass:
        # the status page changed: its catalogue takes the new numbers (they fill themselves)
        return update(root, quiet=quiet, _second_pass=True)
    return (f"templates in {pot.relative_to(root)}; page catalogues updated "
            f"({sum(1 for line in result.stdout.splitlines() if line.startswith(('Update', 'Create')))} "
            f"touched), site catalogues changed: {len(sites_changed)}; prefilled {filled} messages")


def _drop_stale_pages(root: Path, pot: Path) -> None:
    """Remove the catalogue of a page that no longer exists (sphinx-intl keeps it)."""
    pages = {p.relative_to(pot).with_suffix("") for p in pot.rglob("*.pot")}
    for po in pages_dir(root).rglob("*.po"):
        if po.relative_to(pages_dir(root)).with_suffix("") not in pages:
            po.unlink()
    for mo in pages_dir(root).rglob("*.mo"):
        mo.unlink()


# ----------------------------------------------------------------------------- prefill

_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_URL = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>\s]+)>|https?://\S+")
_ROLE = re.compile(r"\{[a-z:]+\}")
_TITLED_ROLE = re.compile(r"\{ref\}`([^`<]*?)\s*<[^`>]*>`")  # {ref}`All locations <inventory-x>`
_CJK = re.compile(r"[\u3400-\u9fff]")


def nothing_to_translate(text: str) -> bool:
    """True for a message made only of code, links' targets, numbers and punctuation, or already Chinese."""
    rest = _TITLED_ROLE.sub(r" \1 ", text)  # a {ref} title names a section: words to translate
    rest = _CODE.sub(" ", rest)
    rest = _URL.sub(" ", rest)
    rest = _ROLE.sub(" ", rest)
    cjk = len(_CJK.findall(rest))
    if cjk >= 4 and len(re.findall(r"[A-Za-z]+", rest)) * 3 <= cjk:
        return True  # Chinese already (the chapters' original titles), perhaps naming an API
    # file names, ids and symbols written bare (e.g. "slime/utils/http_utils.py", "05b", "N/A")
    rest = re.sub(r"[\w./-]*[_/.][\w./-]*", " ", rest)
    return not re.search(r"[A-Za-z]{2,}", rest)


def glossary_terms(root: Path = ROOT) -> set[str]:
    """The term names of the glossary page: they stay in English in the Chinese edition, because
    the chapters' ``{term}`` references name them (the definitions are translated)."""
    path = Path(root) / "book" / "glossary.md"
    if not path.exists():
        return set()
    block = re.search(r"```\{glossary\}\n(.*?)\n```", path.read_text(encoding="utf-8"), re.S)
    return {line.strip() for line in (block.group(1).splitlines() if block else [])
            if line.strip() and not line[:1].isspace()}


def original_titles() -> set[str]:
    """The chapters' original Chinese titles as their pages show them (italic, under the English
    title): already Chinese, so they are their own translation, however many API names they hold."""
    from lab_snippets.book.chapters import CHAPTERS

    return {f"*{chapter.original}*" for chapter in CHAPTERS}


def translation_memory(root: Path = ROOT) -> dict[str, str]:
    """English -> Chinese from every current translation (a chapter title translated on its own page
    serves the tables that repeat it), as gettext's compendia do."""
    memory: dict[str, str] = {}
    # a chapter's own catalogue first: its title is translated there, and the tables follow it
    for path in sorted(_all_catalogues(root), key=lambda p: "notebooks" not in p.parts):
        for message in _messages(read_po(path)):
            if message.string and not message.fuzzy and not message.context:
                memory.setdefault(message.id, message.string)
    return memory


def _translate_role_titles(text: str, memory: dict[str, str]) -> str:
    """``text`` with the titles of its titled cross-references translated where the memory knows them."""
    def swap(m):
        title = m.group(3)
        return f"{m.group(1)}{m.group(2)}{memory.get(title, title)} <{m.group(4)}>{m.group(2)}"

    return ROLE_TITLE.sub(swap, text)


def prefill(root: Path = ROOT) -> int:
    """Fill every untranslated message that has nothing to translate, or whose English is already
    translated in another catalogue; how many were filled."""
    filled = 0
    memory = translation_memory(root)
    terms = glossary_terms(root)
    originals = original_titles()
    for path in _all_catalogues(root):
        catalog = read_po(path)
        touched = False
        for message in _messages(catalog):
            if message.fuzzy and not message.context and nothing_to_translate(message.id):
                message.string = message.id  # e.g. a count on the status page that changed
                message.flags.discard("fuzzy")
                filled += 1
                touched = True
                continue
            if message.string and message.string != message.id:
                continue
            titled = _translate_role_titles(message.id, memory)
            if titled != message.id and message.string != titled:
                message.string = titled  # a cross-reference whose title another catalogue translates
                message.flags.discard("fuzzy")
                filled += 1
                touched = True
                continue
            if message.string:
                continue
            known = memory.get(message.id) if not message.context else None
            if (path.stem == "glossary" and message.id in terms) or message.id in originals:
                known = message.id
            if known or nothing_to_translate(message.id):
                message.string = known or message.id
                message.flags.discard("fuzzy")
                filled += 1
                touched = True
        if touched:
            write_po(catalog, path)
    return filled


def _all_catalogues(root: Path) -> list[Path]:
    return sorted(pages_dir(root).rglob("*.po")) + sorted(sites_dir(root).glob("*.po"))


# ----------------------------------------------------------------------------- status and check


@dataclass
class PageStatus:
    page: str
    translated: int = 0
    fuzzy: int = 0
    untranslated: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.translated + self.fuzzy + self.untranslated

    @property
    def complete(self) -> bool:
        return self.fuzzy == 0 and self.untranslated == 0


def _page_name(root: Path, path: Path) -> str:
    if path.is_relative_to(sites_dir(root)):
        return f"call sites of chapter {path.stem}"
    if path.is_relative_to(pages_dir(root)):
        return path.relative_to(pages_dir(root)).with_suffix("").as_posix()
    return path.name


_INLINE_KINDS = ("strong_open", "em_open", "code_inline", "link_open")


def inline_markup(text: str) -> collections.Counter:
    """How many bold, italic, code and link spans CommonMark finds in ``text`` (MyST parses with
    markdown-it too). Delimiters that look right can still fail to close: ``**预测。**接下来`` is no
    bold at all, because a closing ``**`` after punctuation must be followed by a space or punctuation."""
    from markdown_it import MarkdownIt

    found = collections.Counter()
    for block in MarkdownIt("commonmark").parse(text):
        for token in block.children or []:
            if token.type in _INLINE_KINDS:
                found[token.type] += 1
    return found


def markup_problems(source: str, translation: str, english_ok: bool = False) -> list[str]:
    """What the translation lost or changed of the markup it must keep verbatim."""
    problems = []
    spans_en, bolded = allow_chinese_emphasis(inline_markup(source), spans_zh := inline_markup(translation))
    if spans_en != spans_zh:
        problems.append(f"rendered spans differ: {dict(spans_en)} in English, {dict(spans_zh)} here "
                        "(a '**' or '*' next to Chinese punctuation may not close; move the punctuation "
                        "outside it or add a space)")
    code_en, code_zh = code_spans(source), code_spans(translation)
    if code_en != code_zh:
        lost = list((code_en - code_zh).elements())
        added = list((code_zh - code_en).elements())
        problems.append("code spans differ" + (f"; missing {lost[:3]}" if lost else "")
                        + (f"; new {added[:3]}" if added else ""))
    links_en = sorted(m.group(0) for m in _URL.finditer(_CODE.sub(" ", source)))
    links_zh = sorted(m.group(0) for m in _URL.finditer(_CODE.sub(" ", translation)))
    if links_en != links_zh:
        problems.append(f"link targets differ: {links_en[:3]} vs {links_zh[:3]}")
    roles_en = collections.Counter(_ROLE.findall(_CODE.sub(" ", source)))
    roles_zh = collections.Counter(_ROLE.findall(_CODE.sub(" ", translation)))
    if roles_en != roles_zh:
        problems.append(f"roles differ: {dict(roles_en)} vs {dict(roles_zh)}")
    for mark in ("**", "$"):  # an English italic may be bold in Chinese (zhstyle)
        if source.count(mark) + (2 * bolded if mark == "**" else 0) != translation.count(mark):
            problems.append(f"number of {mark!r} differs ({source.count(mark)} vs {translation.count(mark)})")
    if (translation.strip() and translation.strip() == source.strip() and not english_ok
            and not nothing_to_translate(source)):
        problems.append("left in English (the translation is the source text)")
    return problems


def page_status(root: Path, path: Path) -> PageStatus:
    status = PageStatus(_page_name(root, path))
    english_ok = (glossary_terms(root) if status.page == "book/glossary" else set()) | original_titles()
    for message in _messages(read_po(path)):
        if message.fuzzy:
            status.fuzzy += 1
        elif not message.string:
            status.untranslated += 1
        else:
            status.translated += 1
            found = markup_problems(message.id, message.string, message.id in english_ok)
            for problem in found + zh_rules(message.string, root):
                status.problems.append(f"{message.id[:60]!r}: {problem}")
    return status


def all_status(root: Path = ROOT) -> list[PageStatus]:
    return [page_status(root, path) for path in _all_catalogues(root)]


def in_step_problems(root: Path = ROOT, pot: Path | None = None) -> list[str]:
    """Messages of the current sources that a catalogue lacks (run ``update``), and catalogues of no page."""
    root = Path(root)
    pot = Path(pot) if pot else extract(root)
    problems = []
    for template in sorted(pot.rglob("*.pot")):
        page = template.relative_to(pot).with_suffix("")
        po = pages_dir(root) / page.with_suffix(".po")
        if not po.exists():
            problems.append(f"{page}: no catalogue")
            continue
        wanted = {m.id for m in _messages(read_po(template))}
        have = {m.id for m in _messages(read_po(po))}
        if wanted - have:
            problems.append(f"{page}: {len(wanted - have)} messages of the page are not in its catalogue")
    from lab_snippets.sites import load_registry

    registry = load_registry(strict=False)
    for chapter in sorted({s.chapter for s in registry.sites}):
        po = sites_dir(root) / f"{chapter}.po"
        wanted = {(m.context, m.id) for m in _messages(sites_template(chapter, registry))}
        have = {(m.context, m.id) for m in _messages(read_po(po))} if po.exists() else set()
        if wanted - have:
            problems.append(f"call sites of chapter {chapter}: {len(wanted - have)} texts not in its "
                            "catalogue")
    return problems


REPORT_PAGE = "book/reference/translation_status"


def render_report(statuses: list[PageStatus]) -> str:
    """The translation status page. Everything on it that changes (catalogue names, counts) is code
    or numbers, so its own catalogue fills itself; its prose does not change with the counts."""
    total = collections.Counter()
    rows = []
    for s in statuses:
        if s.page == REPORT_PAGE:
            continue  # its own counts would change with every report
        total.update(translated=s.translated, fuzzy=s.fuzzy, untranslated=s.untranslated)
        share = s.translated / s.total if s.total else 1.0
        name = f"sites/{s.page.rsplit(' ', 1)[-1]}" if s.page.startswith("call sites") else s.page
        rows.append(f"| `{name}` | {s.translated} | {s.fuzzy} | {s.untranslated} | {share:.0%} |")
    n = sum(total.values())
    lines = [
        "# Translation status (zh_CN)",
        "",
        "<!-- Generated by `python -m lab_snippets.book.i18n update` (or `report`); "
        "tests/test_i18n.py checks it is in step. -->",
        "",
        "The Chinese edition is built from the same source as this one. Each page's prose has a",
        "catalogue in `locale/zh_CN/LC_MESSAGES/`, and the call-site titles and explanations have one",
        "per chapter in `locale/zh_CN/sites/`. When the English of a message changes, the update marks",
        "its translation *fuzzy*, and the Chinese edition shows the English until a translator has",
        "looked again. The test suite fails while any message is fuzzy or untranslated.",
        "",
        "| Catalogue | Translated | Fuzzy | Untranslated | Done |",
        "|---|---:|---:|---:|---:|",
        f"| **Σ** | {total['translated']} | {total['fuzzy']} | {total['untranslated']} | "
        f"{(total['translated'] / n if n else 1.0):.0%} |",
        *rows,
        "",
    ]
    return "\n".join(lines)


def write_report(root: Path = ROOT) -> bool:
    """Regenerate the status page; whether it changed."""
    path = report_path(root)
    text = render_report(all_status(root))
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def report_path(root: Path = ROOT) -> Path:
    return Path(root) / "book" / "reference" / "translation_status.md"


# ----------------------------------------------------------------------------- export and apply
# A translator's round trip without retyping the English: ``export`` numbers the messages of one
# catalogue (by position among all its messages, so the numbers do not move as work is applied);
# ``apply`` reads a file of "=== N" blocks in the same form, with the translation as each body.

_BLOCK = re.compile(r"^=== (\d+)[^\n]*\n", re.M)


def export(path: Path, everything: bool = False) -> str:
    catalog = read_po(path)
    out = [f"# {path.name}: {'all' if everything else 'untranslated and fuzzy'} messages. "
           "Answer with the same '=== N' headers and the translation as the body.\n"]
    for number, message in enumerate(_messages(catalog), start=1):
        if everything or message.fuzzy or not message.string:
            note = " (fuzzy: was " + repr(message.string[:80]) + ")" if message.fuzzy else ""
            out.append(f"=== {number}{note}\n{message.id}\n")
    return "\n".join(out)


def apply(path: Path, answers: str) -> list[str]:
    """Fill ``path`` from ``answers``; the problems found (markup lost), each naming its number."""
    catalog = read_po(path)
    messages = _messages(catalog)
    heads = list(_BLOCK.finditer(answers))
    problems = []
    for head, following in zip(heads, heads[1:] + [None], strict=True):
        number = int(head.group(1))
        body = answers[head.end(): following.start() if following else len(answers)].strip("\n")
        if not 1 <= number <= len(messages):
            problems.append(f"=== {number}: no such message (the catalogue has {len(messages)})")
            continue
        message = messages[number - 1]
        if not body.strip():
            continue
        for problem in markup_problems(message.id, body):
            problems.append(f"=== {number}: {problem}")
        message.string = body
        message.flags.discard("fuzzy")
    write_po(catalog, path)
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab_snippets.book.i18n",
                                 description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("update", help="extract the templates and merge them into every catalogue")
    sub.add_parser("prefill", help="fill the messages that have nothing to translate")
    st = sub.add_parser("status", help="translated / fuzzy / untranslated per catalogue")
    st.add_argument("--incomplete", action="store_true", help="only catalogues with work left")
    ck = sub.add_parser("check", help="markup problems in translations; exit 1 if any")
    ck.add_argument("paths", nargs="*", type=Path, help="only these .po files")
    sub.add_parser("report", help=f"write {report_path().relative_to(ROOT)}")
    ex = sub.add_parser("export", help="number the messages left to translate in one .po")
    ex.add_argument("po", type=Path)
    ex.add_argument("--all", action="store_true", help="every message, translated or not")
    ap_ = sub.add_parser("apply", help="fill one .po from a file of '=== N' blocks")
    ap_.add_argument("po", type=Path)
    ap_.add_argument("answers", type=Path)
    args = ap.parse_args(argv)
    if args.command == "update":
        start = time.monotonic()
        print(update(ROOT), f"({time.monotonic() - start:.1f} s)")
        return 0
    if args.command == "prefill":
        print(f"prefilled {prefill(ROOT)} messages")
        return 0
    if args.command == "status":
        statuses = all_status(ROOT)
        for s in statuses:
            if args.incomplete and s.complete:
                continue
            print(f"{s.page:45} {s.translated:5} translated {s.fuzzy:4} fuzzy "
                  f"{s.untranslated:5} untranslated")
        done = sum(s.translated for s in statuses)
        print(f"{'all':45} {done:5} of {sum(s.total for s in statuses)} translated")
        return 0
    if args.command == "check":
        paths = [p.resolve() for p in args.paths] or _all_catalogues(ROOT)
        bad = 0
        for path in paths:
            status = page_status(ROOT, path)
            for problem in status.problems:
                print(f"{status.page}: {problem}")
                bad += 1
            if status.fuzzy or status.untranslated:
                print(f"{status.page}: {status.fuzzy} fuzzy, {status.untranslated} untranslated")
                bad += 1
        print("ok" if not bad else f"{bad} problem(s)")
        return 1 if bad else 0
    if args.command == "export":
        print(export(args.po, everything=args.all))
        return 0
    if args.command == "apply":
        problems = apply(args.po, args.answers.read_text(encoding="utf-8"))
        for problem in problems:
            print(problem)
        left = page_status(ROOT, args.po.resolve())
        print(f"{left.page}: {left.translated} translated, {left.fuzzy} fuzzy, "
              f"{left.untranslated} untranslated; {len(problems)} problem(s)")
        return 1 if problems else 0
    if args.command == "report":
        changed = write_report(ROOT)
        print(f"{'wrote' if changed else 'unchanged:'} {report_path(ROOT).relative_to(ROOT)}"
              + (" (run `update` so that its catalogue follows)" if changed else ""))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
