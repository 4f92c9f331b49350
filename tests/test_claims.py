"""Every claim a chapter asserts can fail: each registered counterfactual kills its claim cell.

For every entry of ``tests/mutations.toml`` (one test each, so xdist spreads them over the
workers), the chapter is mutated in memory and run in a fresh kernel, in ``notebooks/``, up
to the targeted claim cell: that cell must be the first to fail, with ``AssertionError``. The
unmutated chapters are run by nbval (``pytest --nbval-lax notebooks/``), not again here. A kill
recorded with the same inputs on this Python is kept, not run again (``lab_snippets.testing.claimrecord``;
``COURSE_CLAIMS_FULL=1`` runs every one).
"""

import sys

import jupytext
import nbformat
import pytest

from lab_snippets.book import chapters
from lab_snippets.testing import claimrecord, claims

MUTATIONS = claims.load_mutations()
EXISTING = [c.number for c in chapters.existing()]


# -- the table and the claim cells -----------------------------------------------------

@pytest.mark.parametrize("number", EXISTING)
def test_every_chapter_has_two_claims_each_with_a_counterfactual(number):
    cells = claims.chapter_claims(number)
    assert len(cells) >= 2, (f"chapter {number} has {len(cells)} claim cell(s); every chapter needs at least "
                             "two (tag a cell 'claim', first line '# claim: <slug>')")
    registered = {m.claim for m in MUTATIONS if m.chapter == number}
    missing = [c.slug for c in cells if c.slug not in registered]
    assert not missing, f"chapter {number}: claims with no counterfactual in tests/mutations.toml: {missing}"


def test_every_mutation_targets_a_claim_and_finds_its_text_once():
    problems = []
    texts = {n: chapters.BY_NUMBER[n].path.read_text(encoding="utf-8") for n in EXISTING}
    slugs = {n: {c.slug for c in claims.chapter_claims(n)} for n in {m.chapter for m in MUTATIONS}}
    for m in MUTATIONS:
        if m.chapter not in texts:
            problems.append(f"{m.id}: no chapter {m.chapter}")
            continue
        if m.claim not in slugs[m.chapter]:
            problems.append(f"{m.id}: chapter {m.chapter} has no claim {m.claim!r}")
        try:
            claims.apply(texts[m.chapter], m)
        except claims.ClaimError as exc:
            problems.append(str(exc))
    assert not problems, "\n".join(problems)


def test_mutations_are_listed_in_chapter_order():
    numbers = [m.chapter for m in MUTATIONS]
    assert numbers == sorted(numbers), "keep tests/mutations.toml in chapter order"


def test_claims_page_is_in_step():
    assert claims.check() == []


def test_claims_page_is_in_the_toc():
    assert "book/reference/claims" in chapters.MAINTAINER_PAGES
    assert "book/reference/claims" in chapters.TOC.read_text(encoding="utf-8")


# -- every counterfactual kills its claim ----------------------------------------------

# A counterfactual that needs idle cores (two processes running at once) runs in the serial
# phase: beside the other xdist worker it measured idle cores, then lost one to that worker
# halfway through the mutated run and survived (1 of the 1,364 tests, in a full run).
# A Ray chapter's counterfactuals run there too: each starts a local Ray (chapters.runs_alone).
@pytest.mark.slow
@pytest.mark.parametrize("mutation", [pytest.param(m, id=m.id, marks=[pytest.mark.serial]
                                                   if m.needs_idle_cores or chapters.runs_alone(m.chapter)
                                                   else [])
                                      for m in MUTATIONS])
def test_counterfactual_kills_its_claim(mutation):
    recorded = claimrecord.kept(mutation)
    if recorded:
        pytest.skip(f"{mutation.id}: killed on Python {claimrecord.python_key()} with the same inputs "
                    f"(digest {recorded['digest']}, book/reference/claim_kills.json); "
                    f"{claimrecord.FULL_ENV}=1 runs it again")
    if mutation.needs_idle_cores:
        shares = _core_shares(mutation.needs_idle_cores)
        if min(shares) < 0.5:
            pytest.skip(f"{mutation.id} needs {mutation.needs_idle_cores} idle cores to show itself; the "
                        f"machine gave {mutation.needs_idle_cores} spinning processes only "
                        f"{', '.join(f'{s:.0%}' for s in shares)} of a core each just now")
    if "DEVICE_ENV" in mutation.find and any(c.isspace() for c in sys.executable):
        # measured in a clone under '/tmp/ci final/': with env_vars in its runtime_env, Ray 2.60.0
        # starts the actor's worker through a command line that the venv's path breaks at the space;
        # the actors never start (the cell's 120 s get times out). The same run from a path without
        # a space is killed in 12-17 s.
        pytest.skip(f"{mutation.id} gives its actors a runtime_env, whose worker Ray cannot start from "
                    f"a Python whose path has a space ({sys.executable})")
    verdict = claims.run_mutation(mutation)
    assert verdict.killed, f"{mutation.id} ({mutation.name!r}): {verdict.why}"
    claimrecord.note_kill(mutation, verdict.why, verdict.run.seconds)


def _core_shares(n: int) -> list[float]:
    """The share of a core each of ``n`` processes spinning at the same time got (1.0: an idle core each)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from lab_snippets.measure import cpu_share

    with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(cpu_share, 0.3) for _ in range(n)]
        return [f.result(timeout=60) for f in futures]


# -- the machinery itself --------------------------------------------------------------

def _nb(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def _code(src, tags=()):
    return nbformat.v4.new_code_cell(src, metadata={"tags": list(tags)})


def test_claim_cells_are_read_from_tag_and_first_line():
    nb = _nb(_code("x = 1"), nbformat.v4.new_markdown_cell("# claim: not-code"),
             _code("# claim: first\nassert x == 1", ["claim"]),
             _code("\n# claim: second-one\nassert True", ["claim", "other"]))
    assert claims.claim_cells(nb) == [claims.ClaimCell(2, "first"), claims.ClaimCell(3, "second-one")]


@pytest.mark.parametrize("cells, message", [
    ([_code("assert 1", ["claim"])], "first line is not"),
    ([_code("# claim: a\nassert 1")], "not tagged"),
    ([_code("# claim: a\n", ["claim"]), _code("# claim: a\n", ["claim"])], "used twice"),
    ([_code("# claim: Bad Slug\n", ["claim"])], "first line is not"),
])
def test_malformed_claim_cells_are_reported(cells, message):
    with pytest.raises(claims.ClaimError, match=message):
        claims.claim_cells(_nb(*cells))


def test_apply_needs_exactly_one_occurrence():
    m = claims.Mutation("06", "c", "n", "async with permits:", "if True:")
    assert claims.apply("a\nasync with permits:\nb", m) == "a\nif True:\nb"
    with pytest.raises(claims.ClaimError, match="found 0 times"):
        claims.apply("nothing here", m)
    with pytest.raises(claims.ClaimError, match="found 2 times"):
        claims.apply("async with permits:\nasync with permits:", m)
    with pytest.raises(claims.ClaimError, match="same as"):
        claims.apply("x", claims.Mutation("06", "c", "n", "x", "x"))


def test_mutation_table_format(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[[mutation]]\nchapter = "6"\nclaim = "peak"\nname = "Drop the Semaphore!"\n'
                    'find = "a"\nreplace = "b"\n', encoding="utf-8")
    (m,) = claims.load_mutations(path)
    assert (m.chapter, m.id) == ("06", "06-peak-drop-the-semaphore")
    path.write_text('[[mutation]]\nchapter = "06"\nclaim = "peak"\nname = "x"\nfind = "a"\n',
                    encoding="utf-8")
    with pytest.raises(claims.ClaimError, match="missing keys"):
        claims.load_mutations(path)
    assert claims.load_mutations(tmp_path / "absent.toml") == []


def test_run_notebook_stops_at_the_first_failure_in_the_given_folder(tmp_path):
    (tmp_path / "here.txt").write_text("ok", encoding="utf-8")
    nb = _nb(_code("import os, pathlib\nassert pathlib.Path('here.txt').read_text() == 'ok'"),
             _code("raise ValueError('allowed')", ["raises-exception"]),
             _code("never = 1", ["skip-execution"]),
             _code("# claim: c\nassert 1 + 1 == 3, 'arithmetic'", ["claim"]),
             _code("assert False, 'not reached'"))
    result = claims.run_notebook(nb, cwd=tmp_path, timeout=30)
    assert (result.failed_index, result.ename) == (3, "AssertionError")
    assert "arithmetic" in result.evalue and result.cells_run == 3
    stopped = claims.run_notebook(nb, cwd=tmp_path, stop_after=1, timeout=30)
    assert stopped.failed_index is None and stopped.cells_run == 2


def test_render_lists_each_chapters_claims_and_counterfactuals(monkeypatch):
    first = chapters.existing()[0].number
    monkeypatch.setattr(claims, "chapter_claims",
                        lambda n: [claims.ClaimCell(3, "order")] if n == first else [])
    page = claims.render([claims.Mutation(first, "order", "swap | the order", "a", "b")])
    assert f"| {first} · " in page and "| 1 | 1 | 1 of 1 |" in page
    assert "| `order` | swap \\| the order |" in page


def test_notebook_text_round_trips_through_jupytext():
    # Mutations are applied to the .py text; the claim tag must survive jupytext's reader.
    text = '# %% tags=["claim"]\n# claim: c\nassert True\n'
    nb = jupytext.reads(text, fmt="py:percent")
    assert claims.claim_cells(nb) == [claims.ClaimCell(0, "c")]
