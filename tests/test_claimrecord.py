"""Recorded counterfactual kills (lab_snippets.testing.claimrecord): kept only while what the run
executes is unchanged, on the same Python, and never when COURSE_CLAIMS_FULL is set."""

import json

import pytest

from lab_snippets.testing import claimrecord, claims

CHAPTER = '''# %% [markdown]
# Some prose.

# %%
import asyncio
from lab_snippets import timeline

# %% tags=["claim"]
# claim: sleeps-overlap
assert asyncio.sleep is not None

# %%
after = 1
'''

MUT = claims.Mutation("06", "sleeps-overlap", "drop the sleep", "assert asyncio.sleep is not None",
                      "assert False")


def test_prose_and_cells_after_the_claim_do_not_change_the_digest():
    base = claimrecord.run_digest(MUT, CHAPTER)
    assert base
    assert claimrecord.run_digest(MUT, CHAPTER.replace("Some prose.", "Other words.")) == base
    assert claimrecord.run_digest(MUT, CHAPTER.replace("after = 1", "after = 2")) == base
    # a fold changed for the reader: the run executes the same cells
    folded = CHAPTER.replace('# %% tags=["claim"]', '# %% tags=["claim", "hide-cell"]')
    assert claimrecord.run_digest(MUT, folded) == base


@pytest.mark.parametrize("change", [
    ("import asyncio\n", "import asyncio\nx = 2\n"),            # a code cell before the claim
    ('# %% tags=["claim"]', '# %% tags=["claim", "skip-execution"]'),  # its tags
])
def test_code_before_or_at_the_claim_changes_the_digest(change):
    assert claimrecord.run_digest(MUT, CHAPTER.replace(*change)) != claimrecord.run_digest(MUT, CHAPTER)


def test_the_mutation_itself_and_the_imported_modules_are_in_the_digest(tmp_path, monkeypatch):
    other = claims.Mutation(MUT.chapter, MUT.claim, MUT.name, MUT.find, "assert 0")
    assert claimrecord.run_digest(other, CHAPTER) != claimrecord.run_digest(MUT, CHAPTER)
    # a tree whose lab_snippets.timeline differs gives another digest (the module is read, not imported)
    for text in ("A = 1\n", "A = 2\n"):
        pkg = tmp_path / text[4] / "lab_snippets"
        (pkg / "testing").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "testing" / "__init__.py").write_text("")
        (pkg / "testing" / "claims.py").write_text("")
        (pkg / "timeline.py").write_text(text)
    one = claimrecord.run_digest(MUT, CHAPTER, repo=tmp_path / "1")
    two = claimrecord.run_digest(MUT, CHAPTER, repo=tmp_path / "2")
    assert one and two and one != two


def test_a_mutation_that_no_longer_applies_has_no_digest():
    gone = claims.Mutation("06", "sleeps-overlap", "n", "text that is not there", "x")
    assert claimrecord.run_digest(gone, CHAPTER) == ""


def _records(tmp_path, python, digest, killed=True):
    path = tmp_path / "kills.json"
    path.write_text(json.dumps({"pythons": {python: {MUT.id: {"digest": digest, "killed": killed}}}}))
    return path


def test_a_kill_is_kept_only_with_the_same_digest_python_and_without_full(tmp_path, monkeypatch):
    monkeypatch.setattr(claimrecord, "run_digest", lambda m: "abc")
    monkeypatch.delenv(claimrecord.FULL_ENV, raising=False)
    here = claimrecord.python_key()
    assert claimrecord.kept(MUT, _records(tmp_path, here, "abc"))
    assert claimrecord.kept(MUT, _records(tmp_path, here, "abd")) is None
    assert claimrecord.kept(MUT, _records(tmp_path, "3.99.0", "abc")) is None
    assert claimrecord.kept(MUT, _records(tmp_path, here, "abc", killed=False)) is None
    monkeypatch.setenv(claimrecord.FULL_ENV, "1")
    assert claimrecord.kept(MUT, _records(tmp_path, here, "abc")) is None


def test_a_run_writes_its_kills_and_record_merges_them_dropping_unlisted(tmp_path, monkeypatch):
    monkeypatch.setattr(claimrecord, "run_digest", lambda m: "d1")
    monkeypatch.setenv(claimrecord.RECORD_DIR_ENV, str(tmp_path / "run"))
    written = claimrecord.note_kill(MUT, "killed: AssertionError", 3.21)
    assert written and json.loads(written.read_text())["digest"] == "d1"
    path = tmp_path / "kills.json"
    path.write_text(json.dumps({"pythons": {"3.11.7": {"06-gone-x": {"digest": "z", "killed": True}}}}))
    merged, dropped = claimrecord.record(tmp_path / "run", path, mutations=[MUT])
    data = json.loads(path.read_text())
    assert (merged, dropped) == (1, 1)
    assert data["pythons"][claimrecord.python_key()][MUT.id]["digest"] == "d1"
    assert "06-gone-x" not in data["pythons"]["3.11.7"]


def test_no_record_is_written_without_the_folder(monkeypatch):
    monkeypatch.delenv(claimrecord.RECORD_DIR_ENV, raising=False)
    assert claimrecord.note_kill(MUT, "killed", 1.0) is None
