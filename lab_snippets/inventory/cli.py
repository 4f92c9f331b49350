"""``python -m lab_snippets.inventory scan|render|regenerate``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from lab_snippets.inventory.render import default_notebooks_dir, render_pages
from lab_snippets.inventory.rules import CATEGORIES, DEFAULT_OUT, JSON_NAME, METHODS_CATEGORY, SLIME_REPO_URL
from lab_snippets.inventory.sources import InventoryError, dump_json, load_json, scan_tree
from lab_snippets.sites.registry import RegistryError, load_registry

# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def pinned_commit() -> str:
    """The slime commit the course is pinned to: ``[meta] commit`` of ``lab_snippets/sites.toml``."""
    try:
        return load_registry(strict=False).commit
    except RegistryError as exc:
        raise InventoryError(str(exc)) from exc


def slime_src() -> Path:
    value = os.environ.get("SLIME_SRC")
    if not value:
        raise InventoryError("no PATH given and SLIME_SRC is not set: point SLIME_SRC at a clone or bare "
                             "mirror of THUDM/slime, or pass a PATH")
    path = Path(value).expanduser()
    if not path.is_dir():
        raise InventoryError(f"SLIME_SRC={value} is not a directory")
    return path


def write_pages(inventory: dict, out: Path, notebooks_dir: Path | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_pages(inventory, notebooks_dir or default_notebooks_dir(out)).items():
        target = out / name
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def _summary(inventory: dict) -> str:
    lines = [f"{inventory['files_scanned']} files scanned, {len(inventory['unparsable'])} unparsable"]
    for cat in CATEGORIES:
        lines.append(f"  {cat.title:32} {inventory['totals'][cat.key]:6}")
    lines.append(f"  {'(total)':32} {sum(inventory['totals'].values()):6}")
    lines.append(f"  {METHODS_CATEGORY.title + ' (apart)':32} {inventory['candidates_total']:6}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.inventory",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_scan = sub.add_parser("scan", help="scan a tree and write the inventory JSON")
    p_scan.add_argument("path", nargs="?", type=Path,
                        help="directory or git repository (default: $SLIME_SRC)")
    p_scan.add_argument("--commit", help="read the tree at this commit through git (no checkout)")
    p_scan.add_argument("--json", required=True, type=Path, help="output JSON file ('-' for stdout)")
    p_scan.add_argument("--repo-url", default=SLIME_REPO_URL,
                        help="base URL for location links (default: %(default)s; '' for no links)")
    p_render = sub.add_parser("render", help="render the Markdown pages from an inventory JSON")
    p_render.add_argument("json", type=Path)
    p_render.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p_render.add_argument("--notebooks", type=Path, default=None,
                          help="where chapter notebooks live (default: OUT/../../notebooks)")
    p_regen = sub.add_parser("regenerate", help="scan $SLIME_SRC at the pinned commit, then render")
    p_regen.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p_regen.add_argument("--commit", default=None, help="override the pin (default: sites.toml or built-in)")
    args = parser.parse_args(argv)
    try:
        if args.command == "scan":
            path = args.path if args.path is not None else slime_src()
            inventory = scan_tree(path, args.commit, repo_url=args.repo_url or None,
                                  label="THUDM/slime" if args.path is None else None)
            text = dump_json(inventory)
            if str(args.json) == "-":
                sys.stdout.write(text)
            else:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(text, encoding="utf-8")
                print(_summary(inventory), file=sys.stderr)
        elif args.command == "render":
            inventory = load_json(args.json)
            for target in write_pages(inventory, args.out, args.notebooks):
                print(f"wrote {target}", file=sys.stderr)
        else:
            commit = args.commit or pinned_commit()
            inventory = scan_tree(slime_src(), commit, repo_url=SLIME_REPO_URL, label="THUDM/slime")
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / JSON_NAME).write_text(dump_json(inventory), encoding="utf-8")
            print(_summary(inventory), file=sys.stderr)
            for target in write_pages(inventory, args.out):
                print(f"wrote {target}", file=sys.stderr)
    except InventoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
