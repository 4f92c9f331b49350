"""Fast unit tests of ``python -m lab_snippets.labs``'s argument handling: each command reaches its
function with what the user typed, and the exit codes are the ones students and CI read
(the functions themselves are replaced: no nbgrader run, no kernel)."""

from __future__ import annotations

import pytest

from lab_snippets.book.chapters import missing_package
from lab_snippets.labs import cli
from lab_snippets.labs.common import DEFAULT_COURSE_DIR, LabError


@pytest.fixture
def released(monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "release", lambda chapters, **kw: calls.append((chapters, kw)))
    return calls


def test_release_defaults_to_every_chapter_in_english_in_the_default_course(released):
    assert cli.main(["release"]) == 0
    assert released == [(None, {"course_dir": DEFAULT_COURSE_DIR, "lang": "en"})]


def test_release_of_named_chapters_passes_them_on(released):
    assert cli.main(["release", "06_semaphore", "notebooks/07_queue.py"]) == 0
    assert released[0][0] == ["06_semaphore", "notebooks/07_queue.py"]


def test_a_chinese_release_gets_a_course_folder_of_its_own(released):
    assert cli.main(["release", "--lang", "zh_CN"]) == 0
    (chapters, kw), = released
    assert kw == {"course_dir": cli.ZH_COURSE_DIR, "lang": "zh_CN"}
    assert cli.ZH_COURSE_DIR != DEFAULT_COURSE_DIR and cli.ZH_COURSE_DIR.parent == DEFAULT_COURSE_DIR.parent
    assert cli.main(["release", "--lang", "zh_CN", "--course-dir", "elsewhere"]) == 0
    assert released[1][1]["course_dir"] == "elsewhere", "an explicit folder wins"


@pytest.mark.parametrize(("passed", "total", "code"), [(3, 3, 0), (2, 3, 1), (0, 3, 1), (0, 0, 1)])
def test_validate_exits_0_only_when_every_test_of_a_notebook_with_tests_passes(monkeypatch, passed, total,
                                                                               code):
    seen = {}
    monkeypatch.setattr(cli, "validate", lambda nb, timeout: seen.update(nb=nb, timeout=timeout)
                        or (passed, total))
    assert cli.main(["validate", "mine.ipynb", "--timeout", "7"]) == code
    assert seen == {"nb": "mine.ipynb", "timeout": 7}


def test_a_lab_error_is_printed_and_exits_2(monkeypatch, capsys):
    def fail(*args, **kwargs):
        raise LabError("no chapter '99'")

    monkeypatch.setattr(cli, "release", fail)
    assert cli.main(["release", "99"]) == 2
    assert capsys.readouterr().err == "error: no chapter '99'\n"


def test_grade_passes_every_option_on(monkeypatch):
    seen = {}
    monkeypatch.setattr(cli, "grade", lambda subs, **kw: seen.update(subs=subs, **kw))
    assert cli.main(["grade", "subs", "--out", "g.csv", "--course-dir", "c", "--timeout", "9",
                     "--submission-timeout", "99", "--jobs", "3", "--memory-mb", "512",
                     "--hide", "a", "--hide", "b"]) == 0
    opts = seen["options"]
    assert (seen["subs"], seen["out"], seen["course_dir"], seen["hide"]) == ("subs", "g.csv", "c", ["a", "b"])
    assert (opts.timeout, opts.submission_timeout, opts.jobs, opts.memory_mb) == (9, 99, 3, 512)


@pytest.mark.skipif(missing_package("28") is not None, reason=missing_package("28") or "")
def test_grade_on_a_ray_address_where_nothing_listens_fails_at_once_naming_the_fix():
    """Counterfactual: without the probe, ``ray.init`` retries a dead address for minutes."""
    import socket

    from lab_snippets.labs import raygrade

    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(LabError, match="no Ray cluster answers there.*ray start --head"):
            with raygrade.connected(f"127.0.0.1:{port}"):
                pass
