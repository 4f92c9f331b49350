"""The package's layout rules: notebook helpers at the top, tooling in subpackages, one of each.

Each test names the rule it keeps (README "Layout", CONTRIBUTING.md) and fails with the fix.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import lab_snippets
from lab_snippets.book import chapters

ROOT = lab_snippets.REPO_ROOT
PKG = lab_snippets.PACKAGE_DIR
TOOLING = ("labs", "inventory", "testing", "book", "bench")
ALIASES = {"chapters", "selfcheck"}  # kept for their documented `python -m` commands
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
# Functions allowed over MAX_FUNCTION_LINES, each with the reason (none today).
LONG_FUNCTIONS: dict[str, str] = {}


def _modules():
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_every_module_is_under_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_MODULE_LINES}
    assert not long, f"split these modules (limit {MAX_MODULE_LINES} lines): {long}"


def test_no_function_over_80_lines():
    long = {}
    for p in _modules():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                where = f"{p.relative_to(ROOT)}:{node.name}"
                if n > MAX_FUNCTION_LINES and where not in LONG_FUNCTIONS:
                    long[where] = n
    assert not long, f"split these functions (or add them to LONG_FUNCTIONS with the reason): {long}"


def test_top_level_holds_only_what_notebooks_import():
    top = {p.stem for p in PKG.glob("*.py") if p.stem != "__init__"}
    top |= {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    notebook_top = {m.split(".")[0] for m in lab_snippets.NOTEBOOK_MODULES}
    assert top == notebook_top | set(TOOLING) | ALIASES, (
        "a new top-level module must be a notebook helper (add it to lab_snippets.NOTEBOOK_MODULES) "
        "or go into a tooling subpackage: " + str(sorted(top - notebook_top - set(TOOLING) - ALIASES)))


def test_notebooks_import_only_notebook_modules():
    imported = set()
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        imported |= {m for m in _imports(nb) if m.startswith("lab_snippets.")}
    wanted = {f"lab_snippets.{m}" for m in lab_snippets.NOTEBOOK_MODULES}
    assert imported <= wanted, (f"notebooks import {sorted(imported - wanted)}: add them to "
                                "lab_snippets.NOTEBOOK_MODULES (the grading sandbox mounts only those)")


def test_notebook_modules_never_import_tooling():
    for name in lab_snippets.NOTEBOOK_MODULES:
        file = PKG / (name.replace(".", "/") + ".py")
        if not file.exists():
            file = PKG / name.replace(".", "/") / "__init__.py"
        bad = {m for m in _imports(file) if m.startswith(tuple(f"lab_snippets.{t}" for t in TOOLING))
               or m == "lab_snippets.sites.admin"}
        assert not bad, f"{name} imports course tooling {bad}: a student kernel cannot import it"
        local = {m for m in _imports(file) if m.startswith("lab_snippets.")}
        missing = {m for m in local if m.removeprefix("lab_snippets.") not in lab_snippets.NOTEBOOK_MODULES}
        assert not missing, f"{name} imports {missing}, which the sandbox does not mount"


def test_one_pin():
    pin = re.compile(r"\b[0-9a-f]{40}\b")
    holders = [str(p.relative_to(ROOT)) for p in _modules() if pin.search(p.read_text(encoding="utf-8"))]
    assert holders == [], f"the slime pin lives only in lab_snippets/sites.toml, also found in {holders}"
    assert pin.search((PKG / "sites.toml").read_text(encoding="utf-8"))


def test_one_repository_root_helper():
    computes = re.compile(r"__file__\)?\.resolve\(\)\.(parents\[|parent\.parent)"
                          r"|Path\(__file__\)\.resolve\(\)\.parent\b")
    found = [str(p.relative_to(ROOT)) for p in _modules()
             if p != PKG / "__init__.py" and computes.search(p.read_text(encoding="utf-8"))]
    assert found == [], f"use lab_snippets.REPO_ROOT / PACKAGE_DIR instead of computing them in {found}"


def test_one_git_wrapper():
    runs_git = re.compile(r"""\[\s*["']git["']""")
    found = [str(p.relative_to(ROOT)) for p in _modules()
             if p.name != "gitcmd.py" and runs_git.search(p.read_text(encoding="utf-8"))]
    assert found == [], f"run git through lab_snippets.sites.gitcmd.run_git (it has a timeout): {found}"


def test_one_chapter_table():
    """inventory's titles and the README's table come from book.chapters.CHAPTERS."""
    from lab_snippets import inventory
    assert inventory.CHAPTER_BY_NUM == {c.number: (c.slug, c.title) for c in chapters.CHAPTERS}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert chapters.readme_with_table(readme) == readme, (
        "the README's chapter table is out of step with lab_snippets/book/chapters.py: "
        "run `python -m lab_snippets.chapters toc`")


def test_readme_layout_table_matches_the_tree():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme[readme.index("## Layout"):]
    paths = re.findall(r"^\| `([^`]+)`", layout, flags=re.M)
    assert paths, "README has no layout table"
    for path in paths:
        for one in path.split("`, `"):
            assert (ROOT / one.rstrip("/")).exists(), f"README layout names {one}, which does not exist"
    for sub in TOOLING:
        assert f"`lab_snippets/{sub}/`" in layout, f"README layout does not say what lab_snippets/{sub}/ is"
    assert (ROOT / "CONTRIBUTING.md").exists()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in it (lazy imports count: a circle
    through a function-level import is still a circle)."""
    modules = {_module_name(p): p for p in _modules()}
    graph = {}
    for name, path in modules.items():
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                out |= {node.module} & set(modules)
                out |= {f"{node.module}.{a.name}" for a in node.names} & set(modules)
            elif isinstance(node, ast.Import):
                out |= {a.name for a in node.names} & set(modules)
        graph[name] = out - {name}
    return graph


def test_no_import_circles():
    graph = _import_graph()
    circles = []
    for start in sorted(graph):
        stack, seen = [(start, (start,))], set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start and len(path) > 1:
                    circles.append(" -> ".join((*path, start)))
                elif nxt not in seen and nxt > start:  # each circle once, from its smallest module
                    seen.add(nxt)
                    stack.append((nxt, (*path, nxt)))
    assert not circles, ("modules import each other (move what both need into a module both import): "
                         + "; ".join(circles))


def test_no_merge_conflict_markers_are_committed():
    # a catalogue merged with its markers still parsed and every test passed (session 16, theme.po);
    # counterfactual: a line "<<<<<<< HEAD" in any tracked text file
    import subprocess
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True, timeout=60).stdout.split("\n")
    marked = []
    for rel in filter(None, tracked):
        path = ROOT / rel
        if path.suffix in {".po", ".py", ".md", ".toml", ".yml", ".txt", ".json", ".css", ".cfg"} \
                and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            if any(line.startswith(("<<<<<<< ", ">>>>>>> ")) for line in text.split("\n")):
                marked.append(rel)
    assert not marked, f"merge conflict markers in {marked}"
