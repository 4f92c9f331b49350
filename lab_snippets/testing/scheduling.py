"""How ``pytest -n 2 --dist loadfile`` shares the suite between its two workers.

pytest-xdist's ``loadfile`` sends each file to one worker as one work unit: a notebook's cells
must run in order in one kernel, and a test module's fixtures are made once. Two kinds of test are
the exception, each of which starts a fresh kernel of its own and shares nothing with its
neighbours in the file, so each is a work unit of its own and the workers share them:

- a claim's counterfactual (``tests/test_claims.py::test_counterfactual_kills_its_claim[...]``);
- a corpus verdict (``tests/test_corpus.py::test_corpus_verdict[...]``): one corpus submission
  graded in a fresh kernel (``labs.corpus.grade_one``). Kept as one file, the corpus was one
  worker's work for the whole first phase (1,420 of the phase's 1,432 s in a clean run of
  76113e8, while the other worker ran every other file in 906 s and then waited).

``conftest.py`` installs the scheduler through pytest-xdist's ``pytest_xdist_make_scheduler`` hook.
"""

from __future__ import annotations

# The test functions whose parametrized cases are each a work unit of their own.
OWN_UNIT = ("test_counterfactual_kills_its_claim", "test_corpus_verdict")


def work_unit(file_scope):
    """A node id's work unit: the node id itself for a case of a test named in ``OWN_UNIT``, else
    what ``file_scope`` (loadfile's own split) says: its file."""
    def split(nodeid: str) -> str:
        _, _, test = nodeid.partition("::")
        name, bracket, _ = test.partition("[")
        if bracket and name in OWN_UNIT:
            return nodeid
        return file_scope(nodeid)
    return split


def xdist_scheduler(config, log):
    """pytest-xdist's ``loadfile`` scheduler, except that each test named in ``OWN_UNIT`` is its own
    work unit."""
    from xdist.scheduler import LoadFileScheduling

    class SpreadScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(super()._split_scope)(nodeid)

    return SpreadScheduling(config, log)
