"""``labs grade --ray`` on a real local cluster (``ray.cluster_utils.Cluster``), in the serial phase.

Three node starts in all: a head with one CPU whose sandbox probe fails (a node without
bubblewrap: it advertises no ``lab_bwrap``), and two 1-CPU workers that pass it. The head has a
CPU so that a task which did not require ``lab_bwrap`` could land on it (test d's
counterfactual). The submissions: chapter 01's corpus (the reference, the stub and its wrong
solutions), graded in the sandbox on every path. The tests run in order; the last removes a node.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from lab_snippets import labs
from lab_snippets.labs import corpus, journal, raygrade, sandbox
from lab_snippets.labs.common import REPO, LabError

CHAPTER = "01"
OPTS = labs.Options(jobs=2, timeout=30, submission_timeout=240, memory_mb=1024)
pytestmark = [pytest.mark.serial, pytest.mark.timeout(1800)]


def _probe_problem():
    try:
        labs.detect_isolation([REPO], labs.Options())
    except LabError as exc:
        return str(exc)
    return None


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The released chapter, its corpus as submissions, and the cluster (torn down at the end)."""
    problem = _probe_problem()
    if problem is not None:
        pytest.skip(f"grading runs only in the sandbox: {problem}")
    root = tmp_path_factory.mktemp("raygrade")
    course = root / "course"
    labs.release([str(corpus.chapter_path(CHAPTER))], course_dir=course, log=lambda *a: None)
    subs = root / "subs"
    students = corpus.write_submissions(CHAPTER, subs)
    with pytest.MonkeyPatch.context() as mp:  # the head: a node without bubblewrap
        mp.setattr(sandbox, "bwrap_path", lambda: (_ for _ in ()).throw(LabError("no bwrap")))
        head_resources = raygrade.node_resources(1)
    assert head_resources == {}, "a node whose probe fails advertises nothing"
    passing = raygrade.node_resources(1)
    assert passing[raygrade.RESOURCE] == 1
    with raygrade.local_cluster(head_cpus=1, head_resources=head_resources) as lc:
        workers = [lc.add_node(1, passing), lc.add_node(1, passing)]
        yield {"root": root, "course": course, "subs": subs, "students": students, "lc": lc,
               "workers": workers, "head": lc.cluster.head_node.node_id, "results": {}}


def _course(world, name):
    return Path(shutil.copytree(world["course"], world["root"] / name))


def _entries(course):
    return [json.loads(x) for x in (course / journal.JOURNAL_NAME).read_text().splitlines()]


def _graded(world, name, **kw):
    course = _course(world, name)
    out = world["root"] / f"{name}.csv"
    rows = labs.grade(world["subs"], out=out, course_dir=course, options=OPTS, log=lambda s: None,
                      **kw)
    return course, out.read_text(), rows


def _ray_argv(world, course, out):
    return [sys.executable, "-m", "lab_snippets.labs", "grade", str(world["subs"]), "--out", str(out),
            "--course-dir", str(course), "--ray", world["lc"].address, "--jobs", "2",
            "--timeout", str(OPTS.timeout), "--submission-timeout", str(OPTS.submission_timeout),
            "--memory-mb", str(OPTS.memory_mb)]


def _graded_on_ray(world, name, course=None, watch=None, timeout=900):
    """``labs grade --ray`` as an instructor runs it, in a process of its own (the driver). This
    test process never connects to Ray: Ray's core ends a driver's process when it loses its
    connection (exit code 1, nothing printed), which took the whole test session down with it (the
    CI run of e20da1ef); here it fails this test, with the driver's log. ``watch(course, driver)``
    runs while the driver grades. Returns the course folder, the CSV and the log."""
    course = course or _course(world, name)
    out, logfile = world["root"] / f"{name}.csv", world["root"] / f"{name}.log"
    with open(logfile, "wb") as fh:
        driver = subprocess.Popen(_ray_argv(world, course, out), cwd=REPO, stdout=fh,
                                  stderr=subprocess.STDOUT)
    try:
        if watch is not None:
            watch(course, driver)
        code = driver.wait(timeout=timeout)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(timeout=30)
    log = logfile.read_text(errors="replace")
    assert code == 0, f"labs grade --ray ended with exit code {code}; its log ends:\n{log[-3000:]}"
    return course, out.read_text(), log


def _wait_for_results(course, driver, k, patience=600):
    """Until the journal holds ``k`` results (the driver still running), at most ``patience`` s."""
    path, deadline = course / journal.JOURNAL_NAME, time.monotonic() + patience
    while not (path.exists() and len(path.read_text().splitlines()) >= k):
        assert driver.poll() is None, f"the driver ended (code {driver.returncode}) before {k} results"
        assert time.monotonic() < deadline, f"no {k} results within {patience} s"
        time.sleep(0.2)


def test_a_ray_and_the_thread_pool_give_the_same_csv_and_gradebook(world):
    """(a) Counterfactual: a task that dropped the autograded notebook or a cell's score."""
    pool_course, pool_csv, _ = _graded(world, "pool")
    ray_course, ray_csv, _ = _graded_on_ray(world, "ray")
    assert len(_entries(ray_course)) == len(world["students"]) >= 7
    assert ray_csv == pool_csv
    assert journal.gradebook_grades(ray_course) == journal.gradebook_grades(pool_course)
    assert sorted(p.parent.parent.name for p in (ray_course / "autograded").glob("*/*/*.ipynb")) \
        == sorted(world["students"]), "the driver wrote each autograded notebook it got back"
    world["results"].update(csv=ray_csv, grades=journal.gradebook_grades(pool_course),
                            entries=_entries(ray_course))


def test_a_node_that_fails_the_probe_receives_no_task(world):
    """(d) Counterfactual: the task without ``resources={lab_bwrap: 1}`` (the head has a CPU)."""
    nodes = [e["row"].get("node") for e in world["results"]["entries"]]
    passing = {w.node_id for w in world["workers"]}
    assert len(nodes) == len(world["students"]) and set(nodes) <= passing, f"graded on {set(nodes) - passing}"
    assert world["head"] not in nodes


def _sandboxes():
    """Processes of a grading task still alive (their command lines name its labs-ray- folder)."""
    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any("/labs-ray-" in a for a in p.info["cmdline"] or []):
                out.append(p.pid)
        except psutil.Error:
            pass
    return out


def _folders():
    """Private folders of grading tasks still on disk (``grade_task``'s, in the temp dir)."""
    import tempfile
    return sorted(Path(tempfile.gettempdir()).glob("labs-ray-*"))


def test_the_driver_killed_after_k_results_and_rerun_loses_nothing_and_grades_nothing_twice(world):
    """(c) Counterfactuals: a journal written only at the end (the rerun grades them all), or rows
    journaled without their key check (a duplicate)."""
    course = _course(world, "killed")
    out = world["root"] / "killed.csv"
    with open(world["root"] / "killed.log", "wb") as fh:
        driver = subprocess.Popen(_ray_argv(world, course, out), cwd=REPO, stdout=fh,
                                  stderr=subprocess.STDOUT)
    try:
        _wait_for_results(course, driver, 2)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
    kept = len(_entries(course))
    total = len(world["students"])
    assert 2 <= kept < total and not out.exists()
    _, csv_text, log = _graded_on_ray(world, "killed", course=course)
    assert f"grading {total - kept} submission(s) ({kept} already in the journal" in log, log[-2000:]
    keys = [tuple(e["key"]) for e in _entries(course)]
    assert len(keys) == len(set(keys)) == total, "every row journaled exactly once"
    assert csv_text == world["results"]["csv"]
    assert journal.gradebook_grades(course) == world["results"]["grades"]
    deadline = time.monotonic() + 60
    while _sandboxes() and time.monotonic() < deadline:  # the killed driver's tasks: reaped
        time.sleep(0.5)
    assert not _sandboxes(), "a task of the killed driver left its grading processes behind"


def test_a_node_removed_after_the_first_result_leaves_every_row_exactly_once(world):
    """(b) Counterfactual: ``max_retries=0`` (the removed node's submission is lost: an error
    row), or rows written per attempt (a duplicate)."""
    lc, removed = world["lc"], []
    # this run's folders only: one an earlier run leaked (its node killed) is not this run's, and
    # judging the whole temp dir made every later run on the machine fail on it
    earlier = set(_folders())

    def remove_after_the_first_result(course, driver):
        _wait_for_results(course, driver, 1)
        removed.append(world["workers"][1].node_id)
        lc.remove_node(world["workers"][1])

    course, csv_text, _ = _graded_on_ray(world, "removed", watch=remove_after_the_first_result)
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert removed, "no result arrived"
    assert len(rows) == len(world["students"]), "one row per submission"
    assert csv_text == world["results"]["csv"], "a lost task was graded again, once"
    keys = [tuple(e["key"]) for e in _entries(course)]
    assert len(keys) == len(set(keys)) == len(world["students"])
    assert journal.gradebook_grades(course) == world["results"]["grades"]
    deadline = time.monotonic() + 60
    while (set(_folders()) - earlier or _sandboxes()) and time.monotonic() < deadline:  # reaped
        time.sleep(0.5)
    assert not set(_folders()) - earlier and not _sandboxes(), (
        "the removed node's task left its folder or processes")
