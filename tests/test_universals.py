"""Universal statements about slime have a recorded check or a reason (lab_snippets/sites/universals.py).

The prose tests read only this repository. The checks themselves search slime's whole tree, so
here they run against a small git repository made in the test; `python -m lab_snippets.sites
check` with SLIME_SRC runs them against slime at the pin.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from lab_snippets.sites import universals as U
from lab_snippets.sites.registry import load_registry

# -- the course's own prose ------------------------------------------------------------------


@pytest.fixture(scope="module")
def prose() -> list[tuple[str, str]]:
    return list(U.prose(load_registry()))


@pytest.fixture(scope="module")
def statements() -> list[U.Statement]:
    return U.load_statements()


def test_every_universal_sentence_has_a_check_or_a_reason(prose, statements):
    missing = U.unaccounted(statements, prose)
    assert not missing, (
        f"{len(missing)} sentence(s) say every/all/never/only/no other/always without a recorded check or "
        "reason; add a [[statement]] to lab_snippets/sites/universals.toml for each:\n"
        + "\n".join(f"  {where}: {sentence[:140]}" for where, sentence in missing))


def test_no_statement_outlives_its_sentence(statements):
    gone = U.stale(statements, U.prose(load_registry(), whole_chapters=True))
    assert not gone, ("these statements carry a sentence that is no longer in the prose (edited or removed); "
                      "update or drop them:\n" + "\n".join(f"  {st.label}" for st in gone))


def test_the_prose_reaches_the_in_slime_sections(prose):
    chapters = {where for where, _ in prose if where.startswith("chapter ")}
    assert len(chapters) >= 27, f"In slime sentences found in only {len(chapters)} chapters"
    assert any("slime has no `threading.Timer`" in s for w, s in prose if w == "chapter 16")


def test_a_statement_may_carry_a_sentence_outside_in_slime(statements):
    """Issue 38, B01: chapter 28 says in an experiment how the teacher server reads Ray results."""
    b01 = [st for st in statements
           if st.where == "chapter 28" and "read their Ray results that way" in st.sentence]
    assert b01 and b01[0].pattern, "chapter 28's sentence about the teacher server's Ray reads has a check"
    in_slime = list(U.prose(load_registry()))
    whole = list(U.prose(load_registry(), whole_chapters=True))
    assert U.stale(b01, in_slime) == b01, "the sentence is outside the In slime section"
    assert U.stale(b01, whole) == [], "the whole chapter's prose carries it"


def test_the_words_are_whole_words():
    assert U.UNIVERSAL_WORDS.search("Every request") and U.UNIVERSAL_WORDS.search("no other place")
    assert not U.UNIVERSAL_WORDS.search("overall, the smallest finally")


@pytest.mark.parametrize("entry, fragment", [
    ({"where": "site 2", "sentence": "x", "reason": "r"}, "'where' must look like"),
    ({"where": "site 02", "sentence": " ", "reason": "r"}, "'sentence'"),
    ({"where": "site 02", "sentence": "x"}, "either a check"),
    ({"where": "site 02", "sentence": "x", "reason": "r", "pattern": "a"}, "either a check"),
    ({"where": "site 02", "sentence": "x", "pattern": "a"}, "needs 'paths'"),
    ({"where": "site 02", "sentence": "x", "pattern": "(", "paths": [""], "expect": []}, "bad pattern"),
    ({"where": "site 02", "sentence": "x", "reason": "r", "colour": "red"}, "unknown field"),
])
def test_malformed_statements_are_named(tmp_path, entry, fragment):
    import tomli_w

    path = tmp_path / "u.toml"
    path.write_text(tomli_w.dumps({"statement": [entry]}), encoding="utf-8")
    with pytest.raises(U.UniversalsError, match="statement #1") as info:
        U.load_statements(path)
    assert fragment in str(info.value)


# -- the checks, against a tree made here -------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          timeout=30, env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                                           "HOME": str(repo), "PATH": "/usr/bin:/bin"}).stdout.strip()


@pytest.fixture
def tree(tmp_path) -> tuple[Path, str, str]:
    """A git repo at two commits: the second adds a second poster of /generate."""
    repo = tmp_path / "slime"
    (repo / "pkg").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "pkg" / "http.py").write_text("async def post(url):\n    return await send(url + '/generate')\n")
    (repo / "pkg" / "other.py").write_text("def unrelated():\n    return 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "stream.py").write_text(
        "class S:\n    def go(self):\n        return open_stream('/generate')\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two")
    return repo, first, _git(repo, "rev-parse", "HEAD")


def _only_post(expect=("pkg/http.py::post",)) -> U.Statement:
    return U.Statement("site 02", "goes only through post", pattern=r"/generate\b", paths=("pkg/",),
                       expect=tuple(expect))


def test_a_check_holds_where_the_statement_is_true(tree):
    repo, first, _ = tree
    assert U.check(_only_post(), U.Tree(repo, first)) == []


def test_a_check_fails_when_slime_gains_another_place(tree):
    repo, _, second = tree
    problems = U.check(_only_post(), U.Tree(repo, second))
    assert problems == [r"//generate\b/ also matches pkg/stream.py::S.go"], problems


def test_a_check_fails_when_an_expected_place_is_gone(tree):
    repo, first, _ = tree
    problems = U.check(_only_post(("pkg/http.py::post", "pkg/other.py::unrelated")), U.Tree(repo, first))
    assert problems and "no longer matches pkg/other.py::unrelated" in problems[0]


def test_file_granularity_and_a_bare_clone(tree, tmp_path):
    repo, _, second = tree
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True, timeout=30)
    statement = _only_post(("pkg/http.py",))
    assert U.check(statement, U.Tree(bare, second)) == [r"//generate\b/ also matches pkg/stream.py"]


def test_a_plain_tree_is_searched_too(tree, tmp_path):
    import shutil

    repo, _, _ = tree
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    assert U.places(_only_post(("pkg/http.py",)), U.Tree(plain, "unused")) == {"pkg/http.py", "pkg/stream.py"}


def test_report_counts_failures_and_says_when_it_cannot_run(tree):
    repo, _, second = tree
    out = io.StringIO()
    assert U.report([_only_post()], U.Tree(repo, second), out) == 1
    assert "FAIL universal site 02" in out.getvalue()
    out = io.StringIO()
    assert U.report([_only_post()], None, out) == 0
    assert "checks not run" in out.getvalue() and "SLIME_SRC" in out.getvalue()
