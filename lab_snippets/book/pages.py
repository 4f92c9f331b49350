"""The chapter pages in the book: a Sphinx extension (``_config.yml`` lists it under
``sphinx.extra_extensions``). It offers each chapter's executed ``.ipynb`` for download beside its
``.py`` (without what the page hides), keeps launch buttons off until a repository URL is
configured, reads a page again when its notebook was executed again, and leaves Thebe out. The
role ``{build-python}`version``` shows the Python that built the book (the Status page).
Which pages are chapters comes from the chapter table (``lab_snippets.book.chapters``)."""

from __future__ import annotations

import json
from pathlib import Path

from lab_snippets.book.chapters import chapter_page, existing

LAUNCH_KEYS = ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url", "jupyterlite_url")


def _launch_needs_repository(app, config) -> None:
    """Drop the launch providers while no repository URL is configured.

    sphinx-book-theme builds Binder/JupyterHub links from ``repository.url``; without one it has
    nothing to launch (and fails on notebook pages), so the buttons stay off until it is set.
    """
    options = config.html_theme_options
    if str(options.get("repository_url") or "").strip():
        return
    launch = dict(options.get("launch_buttons") or {})
    for key in LAUNCH_KEYS:
        launch.pop(key, None)
    options["launch_buttons"] = launch


def _chapters_are_launchable(app, pagename, templatename, context, doctree) -> None:
    """sphinx-book-theme offers launch buttons only on pages whose metadata has a ``kernelspec``;
    the chapters are jupytext ``.py`` files without one (``jupytext.toml`` filters notebook
    metadata out), so give chapter pages the kernel they are executed with."""
    if chapter_page(pagename) is None:
        return
    metadata = app.env.metadata.get(pagename)
    if metadata is not None and "kernelspec" not in metadata:
        metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}


def executed_notebook(outdir: str | Path, docname: str) -> Path:
    """Where myst-nb writes the executed notebook of ``docname`` for a build into ``outdir``."""
    return Path(outdir).parent / "jupyter_execute" / f"{docname}.ipynb"


def page_notebook(executed: dict, edition: str = "en") -> dict:
    """The executed notebook as the page shows it: cells tagged ``remove-cell`` left out, and the
    figures drawn for the other edition (``lab_snippets.figlang``) dropped from the outputs."""
    from lab_snippets.figlang import EDITION_KEY

    def mine(output: dict) -> bool:
        return output.get("metadata", {}).get(EDITION_KEY, edition) == edition

    nb = dict(executed)
    nb["cells"] = [dict(c, outputs=[o for o in c["outputs"] if mine(o)]) if "outputs" in c else c
                   for c in executed.get("cells", [])
                   if "remove-cell" not in c.get("metadata", {}).get("tags", [])]
    return nb


def with_cached_outputs(notebook: dict, cache_dir: str | Path) -> dict:
    """The notebook with the outputs of its execution stored in the jupyter cache at ``cache_dir``.

    myst-nb 1.4.0 writes the *input* notebook to ``jupyter_execute`` whenever a page comes from
    the cache (it renders the cached outputs but saves the notebook it read), so after a cached or
    pre-executed build that file has no outputs. When the cache holds an execution of this
    notebook's code, its code cells (outputs, execution counts) are merged in; otherwise, and when
    there is no cache, the notebook is returned unchanged.
    """
    if not (Path(cache_dir) / "global.db").exists():
        return notebook
    import nbformat
    from jupyter_cache import get_cache

    try:
        _, merged = get_cache(str(cache_dir)).merge_match_into_notebook(nbformat.from_dict(notebook))
    except KeyError:  # no execution of this code in the cache
        return notebook
    return json.loads(json.dumps(merged))


def _cache_dir(app) -> Path:
    config = getattr(app.env, "mystnb_config", None)
    path = getattr(config, "execution_cache_path", "") if config is not None else ""
    return Path(path) if path else Path(app.outdir).parent / ".jupyter_cache"


def _offer_ipynb(app, pagename, templatename, context, doctree) -> None:
    """Put the chapter's executed notebook in ``_sources`` and tell the theme to offer it."""
    if chapter_page(pagename) is None or context.get("ipynb_source"):
        return
    executed = executed_notebook(app.outdir, pagename)
    if not executed.exists():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    from lab_snippets.book.cjk import is_chinese

    edition = "zh_CN" if is_chinese(app.config.language) else "en"
    nb = page_notebook(with_cached_outputs(json.loads(executed.read_text(encoding="utf-8")), _cache_dir(app)),
                       edition)
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    context["ipynb_source"] = f"{pagename}.ipynb"


def page_source(text: str) -> str:
    """A chapter's ``.py`` source as the page shows it: cells tagged ``remove-cell`` left out."""
    import jupytext

    nb = jupytext.reads(text, fmt="py:percent")
    nb.cells = [c for c in nb.cells if "remove-cell" not in c.metadata.get("tags", [])]
    return jupytext.writes(nb, fmt="py:percent")


def _strip_downloaded_sources(app, exception) -> None:
    """The ``.py`` download must not carry what the page hides (the hidden tests of the exercises).

    Sphinx copies a chapter's source into ``_sources`` only when it writes the page; a copy that no
    longer equals the source was stripped by an earlier build and is left as it is (a rebuild with
    nothing changed parses no chapter)."""
    if exception is not None:
        return
    for chapter in existing():
        copied = Path(app.outdir) / "_sources" / "notebooks" / chapter.path.name
        if not copied.exists():
            continue
        text = chapter.path.read_text(encoding="utf-8")
        if "remove-cell" in text and copied.read_text(encoding="utf-8") == text:
            copied.write_text(page_source(text), encoding="utf-8")


def latest_executions(cache_dir: str | Path) -> dict[str, float]:
    """``{notebook path: time of its newest execution}`` in the jupyter cache at ``cache_dir``
    (one query; no notebook is read)."""
    if not (Path(cache_dir) / "global.db").exists():
        return {}
    from jupyter_cache import get_cache

    latest: dict[str, float] = {}
    for record in get_cache(str(cache_dir)).list_cache_records():
        key = str(Path(record.uri).resolve())
        latest[key] = max(latest.get(key, 0.0), record.created.timestamp())
    return latest


def _reexecuted_pages(app, env, added, changed, removed) -> list[str]:
    """Pages whose notebook was executed again since Sphinx read them, to be read again.

    Sphinx re-reads a page when its source changes; myst-nb takes the outputs from the jupyter
    cache only when it reads the page. So a chapter executed again into the cache with unchanged
    code (``bookbuild`` runs a chapter again when its cached quote fell back and slime's source has
    become readable) would keep its old outputs on the page. myst-nb records the time of the
    execution it used (``exec_data.mtime``, the cache record's creation time); a newer execution of
    the same notebook makes the page outdated."""
    latest = latest_executions(_cache_dir(app))
    if not latest:
        return []
    stale = []
    for docname in env.found_docs - set(added) - set(changed) - set(removed):
        data = getattr(env, "nb_metadata", {}).get(docname, {}).get("exec_data")
        if not data or data.get("mtime") is None:
            continue
        newest = latest.get(str(Path(env.doc2path(docname)).resolve()))
        if newest is not None and newest > data["mtime"]:
            stale.append(docname)
    return sorted(stale)


def _is_thebe_asset(asset) -> bool:
    name = str(getattr(asset, "filename", None) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return "sphinx-thebe" in name or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree) -> None:
    """No Thebe in this book: leave out sphinx-thebe's assets, which Jupyter Book always adds (and
    adds twice: the second ``const THEBE_JS_URL`` is a script error on every page)."""
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _is_thebe_asset(a)]


# Pages that show the Python that built them (the role below): read again when it changes.
PYTHON_PAGES = ("book/status",)


def _build_python_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{build-python}`version```: the interpreter that built the book, e.g. "CPython 3.14.8"
    (the Status page says it; the chapters' version-gated cells show that interpreter's output)."""
    import platform

    from docutils import nodes

    shown = f"{platform.python_implementation()} {platform.python_version()}"
    return [nodes.literal(rawtext, shown)], []


def _python_changed(app, env, added, changed, removed) -> list[str]:
    """The pages in ``PYTHON_PAGES`` when another interpreter builds the book than read them."""
    import platform

    now = platform.python_version()
    if getattr(env, "lab_build_python", None) == now:
        return []
    env.lab_build_python = now
    return [d for d in PYTHON_PAGES if d in env.found_docs and d not in added and d not in changed]


def _skip_unrunnable(app, config) -> None:
    """Chapters whose package is not installed for this Python (``chapters.missing_package``: Ray
    on 3.15) are not executed: their pages show the code and the note at their top."""
    from lab_snippets.book.chapters import CHAPTERS, missing_package

    skip = [f"**/notebooks/{c.path.name}" for c in CHAPTERS if missing_package(c)]
    if skip:
        config.nb_execution_excludepatterns = [*config.nb_execution_excludepatterns, *skip]
        # a notebook that was not executed has no language_info, so myst-nb warns once per code
        # cell that it cannot name the lexer (the pages still show the code)
        config.suppress_warnings = [*config.suppress_warnings, "myst-nb.lexer"]


GRADER_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


#: The line over an exercise's own cell (``your_cell``), in each edition.
YOUR_CELL = {
    "en": "Your turn. In the notebook this cell starts as below: write your code in it, run the "
          "tests under it, and open the solution only to compare.",
    "zh": "轮到你了。下面是这个单元格在 notebook 里的初始内容：在里面写你的代码，运行它下面的测试，"
          "写完再打开参考答案对照。",
}


def student_stub(source: str) -> str:
    """The solution cell as a student's notebook gives it: nbgrader's own ``ClearSolutions``
    (what ``labs release`` runs) replaces each marked region with its stub."""
    from nbformat.v4 import new_code_cell
    from nbgrader.preprocessors import ClearSolutions

    cell = new_code_cell(source)
    ClearSolutions()._replace_solution_region(cell, "python")
    return cell.source


PAGE_COLUMNS = 88  # the width a code block shows without scrolling (tests/test_reading.py)


def fit_to_page(code: str, width: int = PAGE_COLUMNS) -> str:
    """``code`` with its lines within ``width`` columns, for display: ``ruff format`` (pinned in
    requirements.txt) breaks long signatures, and docstring lines are wrapped at their indent.
    Code that does not parse, or a failing formatter, leaves ``code`` as it is."""
    import ast
    import subprocess
    import sys
    import textwrap

    if all(len(line) <= width for line in code.splitlines()):
        return code
    try:
        done = subprocess.run([sys.executable, "-m", "ruff", "format", "--line-length", str(width),
                               "--stdin-filename", "cell.py", "-"], input=code, text=True,
                              capture_output=True, timeout=30)
        formatted = done.stdout if done.returncode == 0 and done.stdout.strip() else code
        tree = ast.parse(formatted)
    except (OSError, subprocess.SubprocessError, SyntaxError):
        return code
    lines = formatted.rstrip("\n").splitlines()
    spans = []  # (first, last) line index of each docstring
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            spans.append((body[0].lineno - 1, body[0].end_lineno - 1))
    for first, last in sorted(spans, reverse=True):  # a long docstring reflowed as paragraphs
        block = lines[first:last + 1]
        if all(len(line) <= width for line in block):
            continue
        indent = block[0][:len(block[0]) - len(block[0].lstrip())]
        paragraphs, current = [], []
        for line in block:
            if line.strip():
                current.append(line.strip())
            elif current:
                paragraphs.append(current)
                current = []
        paragraphs.append(current)
        wrapped = []
        for para in paragraphs:
            if wrapped:
                wrapped.append("")
            wrapped += textwrap.wrap(" ".join(para), width, initial_indent=indent,
                                     subsequent_indent=indent, break_on_hyphens=False)
        lines[first:last + 1] = wrapped
    out = lines
    return "\n".join(out)


def _cell_of(node):
    """The MyST-NB cell container ``node`` is in (classes ``cell``), or None."""
    while node is not None and "cell" not in (getattr(node, "get", lambda *_: [])("classes") or []):
        node = node.parent
    return node


def _drop_grader_markers(app, doctree, docname):
    """A reference solution on the page without nbgrader's region markers (a learner reads them as
    part of the answer); the chapter's .py and .ipynb keep them, the release needs them. In view
    before the folded solution: the cell as a student's notebook gives it (``student_stub``), under
    a line that says what to do with it, so a reader has their own cell before the answer."""
    from docutils import nodes

    from lab_snippets.book.cjk import is_chinese

    for block in list(doctree.findall(nodes.literal_block)):
        text = block.astext()
        if not any(marker in text for marker in GRADER_MARKERS):
            continue
        kept = "\n".join(line for line in text.split("\n") if line.strip() not in GRADER_MARKERS)
        cell = _cell_of(block)
        block.replace_self(nodes.literal_block(kept, kept, **block.attributes))
        if cell is None or cell.parent is None:
            continue
        stub = fit_to_page(student_stub(text))
        line = YOUR_CELL["zh" if is_chinese(app.config.language) else "en"]
        mine = nodes.container("", nodes.paragraph(line, line),
                               nodes.literal_block(stub, stub, language="python"),
                               classes=["your-cell"])
        cell.parent.insert(cell.parent.index(cell), mine)


def setup(app):
    app.add_role("build-python", _build_python_role)
    app.connect("config-inited", _skip_unrunnable)
    app.connect("env-get-outdated", _python_changed)
    app.connect("config-inited", _launch_needs_repository)
    app.connect("html-page-context", _drop_thebe)
    app.connect("doctree-resolved", _drop_grader_markers)
    # before sphinx-book-theme draws its header buttons (priority 501)
    app.connect("html-page-context", _offer_ipynb, priority=400)
    app.connect("html-page-context", _chapters_are_launchable, priority=400)
    app.connect("build-finished", _strip_downloaded_sources)
    app.connect("env-get-outdated", _reexecuted_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
