"""Every chapter notebook follows the course skeleton, and _toc.yml lists exactly the chapters that exist."""

import re
from pathlib import Path

import jupytext
import pytest
import yaml

from lab_snippets.book import chapters, pages
from lab_snippets.sites import load_registry

EXISTING = chapters.existing()
IDS = [c.stem for c in EXISTING]


def test_every_notebook_file_is_a_known_chapter():
    names = sorted(p.name for p in chapters.NOTEBOOKS.glob("*.py"))
    known = {c.path.name for c in chapters.CHAPTERS}
    assert [n for n in names if n not in known] == [], "notebooks/ holds files that are not chapters"
    assert not list(chapters.NOTEBOOKS.glob("*.ipynb")), ".ipynb files are build products, never sources"


def toc_entries(entries):
    """The toc's entries, depth first (a part page's chapters are its sections)."""
    for entry in entries:
        yield entry
        yield from toc_entries(entry.get("sections", []))


def test_toc_lists_exactly_the_existing_chapters():
    toc = yaml.safe_load(chapters.TOC.read_text(encoding="utf-8"))
    files = [entry["file"] for part in toc["parts"] for entry in toc_entries(part["chapters"])]
    listed = [f for f in files if f.startswith("notebooks/")]
    assert sorted(listed) == sorted(f"notebooks/{c.stem}" for c in EXISTING)
    for f in files:
        assert (chapters.ROOT / f"{f}.py").exists() or (chapters.ROOT / f"{f}.md").exists(), f
    assert chapters.main(["check"]) == 0, "run `python -m lab_snippets.chapters toc`"


def test_toc_groups_chapters_in_their_parts():
    toc = yaml.safe_load(chapters.TOC.read_text(encoding="utf-8"))
    part_of_page = {page: part for part, page in chapters.PART_PAGES.items()}
    for part in toc["parts"]:
        for entry in part["chapters"]:
            for section in entry.get("sections", []):
                number = section["file"].split("/")[1][:2]
                assert chapters.BY_NUMBER[number].part == part_of_page[entry["file"]], section["file"]


def test_each_part_opens_with_its_page_and_the_other_pages_follow():
    toc = yaml.safe_load(chapters.TOC.read_text(encoding="utf-8"))
    first, *rest = toc["parts"]
    assert first["caption"] == chapters.CHAPTERS_CAPTION
    entries = [e["file"] for e in first["chapters"]]
    assert entries[0] == chapters.READING_GUIDE, "the reading guide comes before the first part"
    wanted_parts = [chapters.PART_PAGES[p] for p in chapters.PARTS if any(c.part == p for c in EXISTING)]
    assert entries[1:] == wanted_parts, "one entry per part: its page, holding its chapters"
    for entry in first["chapters"][1:]:
        assert (chapters.ROOT / f"{entry['file']}.md").exists(), entry["file"]
        assert entry["sections"], "the part's chapters are the page's sections"
        assert "title" not in entry, "a part's entry is its page's own heading (no 'Part overview')"
    others = [e["file"] for p in rest for e in p["chapters"]]
    wanted = [p for p in chapters.REFERENCE_PAGES + chapters.GUIDE_PAGES if chapters.page_exists(p)]
    assert others == wanted
    assert "book/glossary" in others
    captions = {p["caption"]: [e["file"] for e in p["chapters"]] for p in rest}
    learner = captions[chapters.REFERENCE_CAPTION]
    assert not set(learner) & set(chapters.MAINTAINER_PAGES), (
        "the learner's Reference section holds only learner pages; maintainer pages go under "
        f"{chapters.GUIDE_CAPTION!r}")


def test_render_toc_without_part_pages_lists_chapters_flat(monkeypatch):
    monkeypatch.setattr(chapters, "PART_PAGES", {})
    toc = yaml.safe_load(chapters.render_toc())
    for part in toc["parts"]:
        assert all("sections" not in e for e in part["chapters"])


def test_downloadable_notebook_leaves_out_removed_cells():
    nb = {"cells": [{"metadata": {"tags": ["tests", "remove-cell"]}, "source": "hidden"},
                    {"metadata": {}, "source": "shown"}], "nbformat": 4}
    assert [c["source"] for c in pages.page_notebook(nb)["cells"]] == ["shown"]
    assert len(nb["cells"]) == 2, "the executed notebook itself is left alone"


def test_launch_buttons_need_a_repository_url():
    class Config:
        html_theme_options = {"repository_url": "", "launch_buttons": {"binderhub_url": "https://mybinder.org",
                                                                       "notebook_interface": "jupyterlab"}}
    pages._launch_needs_repository(None, Config)
    assert Config.html_theme_options["launch_buttons"] == {"notebook_interface": "jupyterlab"}
    Config.html_theme_options = {"repository_url": "https://github.com/o/r",
                                 "launch_buttons": {"binderhub_url": "https://mybinder.org"}}
    pages._launch_needs_repository(None, Config)
    assert Config.html_theme_options["launch_buttons"] == {"binderhub_url": "https://mybinder.org"}


@pytest.fixture(params=EXISTING, ids=IDS)
def chapter(request):
    return request.param, jupytext.read(request.param.path, fmt="py:percent")


def test_title_objectives_and_needs(chapter):
    info, nb = chapter
    head = nb.cells[0]
    assert head.cell_type == "markdown"
    lines = head.source.splitlines()
    assert lines[0] == f"# {info.number} · {info.title}", \
        "first line: '# NN · English title' as in the syllabus"
    assert lines[1] == f"*{info.original}*", "second line: the original Chinese title in italics"
    assert "**The question.**" in head.source
    assert re.search(r"\*\*You will\*\*\s*\n1\. ", head.source), "numbered objectives under **You will**"
    assert "**Needs**" in head.source


def test_experiments_assert_their_claims(chapter):
    _, nb = chapter
    plain = [c for c in nb.cells if c.cell_type == "code" and not set(c.metadata.get("tags", []))
             & {"solution", "tests", "hidden-tests"}]
    assert sum("assert " in c.source for c in plain) >= 2, "at least two experiments end in asserts"
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    from tests.test_reading import MEASURE_HEADING, PREDICT_HEADING

    assert PREDICT_HEADING.search(markdown), "a '## Predict: <the question>?' section"
    assert MEASURE_HEADING.search(markdown), "a '## Measure: <what is measured>' section"


def test_graded_exercise_cells(chapter):
    _, nb = chapter
    tagged = {tag: [c for c in nb.cells if tag in c.metadata.get("tags", [])]
              for tag in ("solution", "tests", "hidden-tests")}
    assert tagged["solution"], "a solution cell"
    for cell in tagged["solution"]:
        assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
    visible = [c for c in tagged["tests"] if "hidden-tests" not in c.metadata["tags"]]
    assert visible, "a visible test cell"
    assert tagged["hidden-tests"], "a hidden test cell"
    for cell in tagged["hidden-tests"]:
        assert {"tests", "remove-cell"} <= set(cell.metadata["tags"]), \
            "hidden tests: tags tests + remove-cell"
        assert "### BEGIN HIDDEN TESTS" in cell.source and "### END HIDDEN TESTS" in cell.source
    headings = [line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()]
    assert any(line.startswith("## Exercise") for line in headings), "an '## Exercise N.M' heading"


def test_ends_with_in_slime_and_the_quote(chapter):
    info, nb = chapter
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "## In slime" in markdown
    assert "reference/inventory.md" in markdown, "the In slime section links to the source inventory"
    heading = next(i for i, c in enumerate(nb.cells)
                   if c.cell_type == "markdown" and "## In slime" in c.source)
    quoted = "\n".join(c.source for c in nb.cells[heading:] if c.cell_type == "code")
    # It ends with a quote, or with a run of our own model of the quoted code after the quotes,
    # its consequence asserted in a claim cell (the brief of round s20: "In slime ends with a run").
    # (a run's explanation may follow it as prose: what the run shows about slime)
    last = next(c for c in reversed(nb.cells) if c.cell_type == "code")
    ends_with_run = "claim" in last.metadata.get("tags", []) and "show_call_site(" in quoted
    assert "show_call_site(" in last.source or ends_with_run, (
        "the chapter's last code cell is a quote, or a claimed run after its quotes")
    assert nb.cells[-1].cell_type == "code" or ends_with_run, "only a run's explanation follows the last code"
    # the quotes follow the prose's order (tests/test_reading.py), so the chapter's own site need not be last
    assert f'show_call_site("{info.number}")' in quoted, "the In slime section quotes the chapter's call site"
    assert info.number in {s.chapter for s in load_registry().sites}


def test_page_source_drops_only_the_hidden_cells():
    text = chapters.NOTEBOOKS.joinpath("01_async_def.py").read_text(encoding="utf-8")
    stripped = pages.page_source(text)
    assert "BEGIN HIDDEN TESTS" in text and "BEGIN HIDDEN TESTS" not in stripped
    assert "BEGIN SOLUTION" in stripped and 'show_call_site("01")' in stripped
    cells = len(jupytext.reads(text, fmt="py:percent").cells)
    assert len(jupytext.reads(stripped, fmt="py:percent").cells) == cells - 1


def test_chapter_files_and_pages_come_from_the_table(tmp_path):
    from lab_snippets.book import preexec

    (tmp_path / "notebooks").mkdir()
    for name in ("02_await.py", "01_async_def.py", "99_not_a_chapter.py", "notes.py"):
        (tmp_path / "notebooks" / name).write_text("# %%\n")
    assert [p.name for p in chapters.files_in(tmp_path)] == ["01_async_def.py", "02_await.py"]
    assert sorted(p.name for p in preexec.chapter_files(tmp_path)) == ["01_async_def.py", "02_await.py"], \
        "a file that only looks like a chapter is not pre-executed"
    assert chapters.chapter_page("notebooks/02_await") is chapters.BY_NUMBER["02"]
    assert chapters.chapter_page("notebooks/99_not_a_chapter") is None
    assert chapters.chapter_page("book/02_await") is None


def test_ray_chapters_run_alone_after_the_others_in_the_preexecution():
    """A Ray chapter never shares the machine with another kernel: the pre-execution runs the other
    chapters ``jobs`` at a time, then the Ray chapters one at a time."""
    from types import SimpleNamespace

    from lab_snippets.book import preexec

    ray_chapters = [c for c in chapters.CHAPTERS if c.part == chapters.RAY]
    assert ray_chapters and all(chapters.runs_alone(c) for c in ray_chapters)
    assert not chapters.runs_alone("06") and chapters.runs_alone(ray_chapters[0].number)
    assert chapters.runs_alone(ray_chapters[0].path)
    assert not chapters.runs_alone(chapters.BY_NUMBER["06"].path)
    numbers = ("06", ray_chapters[0].number, "07")
    records = [SimpleNamespace(uri=str(chapters.BY_NUMBER[n].path)) for n in numbers]
    batches = preexec.batches(records, jobs=2)
    assert [([Path(r.uri).name[:2] for r in batch], width) for batch, width in batches] == [
        (["06", "07"], 2), ([ray_chapters[0].number], 1)], batches
    assert preexec.batches(records[:1], jobs=2) == [(records[:1], 1)], "one chapter needs one worker"


def test_a_chapter_whose_experiment_needs_the_cores_runs_alone(tmp_path):
    """12 and 24 compare one core with two: tagged ``needs-cores``, they run by themselves in the build
    and in the serial phase (beside another chapter their pages showed no gain from processes).
    Counterfactual: drop the tag from 12 (this test names it), or ignore it in ``batches``."""
    from types import SimpleNamespace

    from lab_snippets.book import preexec

    tagged = [c.number for c in chapters.CHAPTERS if preexec.needs_the_cores(c.path)]
    assert tagged == ["12", "24"], tagged
    plain = tmp_path / "x.py"
    plain.write_text('# %% tags=["hide-output"]\nprint("needs-cores")\n', encoding="utf-8")
    assert not preexec.needs_the_cores(plain), "only a cell tag counts, not the words"
    records = [SimpleNamespace(uri=str(chapters.BY_NUMBER[n].path)) for n in ("06", "12", "07")]
    assert [([Path(r.uri).name[:2] for r in batch], width)
            for batch, width in preexec.batches(records, jobs=2)] == [(["06", "07"], 2), (["12"], 1)]


def test_ray_chapters_are_serial_under_nbval():
    """nbval marks a Ray chapter ``serial``: the main run (``-m "not book and not serial"``) leaves it
    to the serial phase of .ci/test, where no second worker runs beside it."""
    import subprocess
    import sys

    ray_chapter = next(c for c in chapters.existing() if chapters.runs_alone(c))
    other = chapters.BY_NUMBER["06"]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-m", "serial",
         f"notebooks/{ray_chapter.path.name}", f"notebooks/{other.path.name}"],
        cwd=chapters.ROOT, capture_output=True, text=True, timeout=300).stdout
    assert f"{ray_chapter.path.name}::Cell 1" in out, out[-2000:]
    assert other.path.name not in out, f"chapter {other.number} is not a Ray chapter, yet it is serial"
