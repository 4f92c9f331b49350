"""The two xdist workers share the claim mutations and the corpus verdicts, test by test, and
keep every other file (a notebook's cells above all) on one worker (lab_snippets.testing.scheduling)."""

from __future__ import annotations

import re

import pytest
from xdist.scheduler import LoadFileScheduling

from lab_snippets import REPO_ROOT
from lab_snippets.testing import scheduling


@pytest.fixture
def split():
    class Fake(LoadFileScheduling):
        def __init__(self):  # no config needed to split node ids
            pass

    return scheduling.work_unit(Fake._split_scope.__get__(Fake()))


@pytest.mark.parametrize("a, b", [
    ("tests/test_claims.py::test_counterfactual_kills_its_claim[06-a-x]",
     "tests/test_claims.py::test_counterfactual_kills_its_claim[06-b-y]"),
    ("tests/test_corpus.py::test_corpus_verdict[04/reference]",
     "tests/test_corpus.py::test_corpus_verdict[04/redteam_polls_with_timeout]"),
])
def test_each_mutation_and_each_verdict_is_a_work_unit(split, a, b):
    assert split(a) != split(b), f"{a} and {b} would queue on one worker"
    assert split(a) == a


def test_a_notebook_and_any_other_test_file_stay_on_one_worker(split):
    assert split("notebooks/06_semaphore.py::Cell 3") == split("notebooks/06_semaphore.py::Cell 4")
    assert split("tests/test_claims.py::test_apply_needs_exactly_one_occurrence") == "tests/test_claims.py"
    assert split("tests/test_corpus.py::test_entries_are_well_formed_and_enough") == "tests/test_corpus.py"
    # the name must be the test's, not text in another test's parameters
    other = ("tests/test_scheduling.py::test_each_mutation_and_each_verdict_is_a_work_unit"
             "[tests/test_corpus.py::test_corpus_verdict[04/reference]-x]")
    assert split(other) == "tests/test_scheduling.py"


@pytest.mark.parametrize("name", scheduling.OWN_UNIT)
def test_each_name_is_a_test_that_exists(name):
    # a renamed test would silently go back to queueing on one worker
    found = [p.name for p in (REPO_ROOT / "tests").glob("test_*.py")
             if re.search(rf"^def {name}\(", p.read_text(encoding="utf-8"), re.M)]
    assert found, f"no test function {name} under tests/: OWN_UNIT names a test that is gone"


def test_conftest_installs_the_scheduler(monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("root_conftest", REPO_ROOT / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    monkeypatch.setattr(LoadFileScheduling, "__init__", lambda self, config, log=None: None)

    class Config:
        def getvalue(self, name):
            return {"dist": "loadfile"}[name]

    sched = conftest.pytest_xdist_make_scheduler(Config(), None)
    verdict = "tests/test_corpus.py::test_corpus_verdict[04/reference]"
    assert sched is not None and sched._split_scope(verdict) == verdict, (
        "conftest.py does not install lab_snippets.testing.scheduling's scheduler under --dist loadfile")
