import subprocess
import sys
import threading

import pytest

from lab_snippets.thread_workers import CLEANUP_PREFIX, RESULT_PREFIX, join_all, main, parse_daemon_exit


def test_join_all_returns_nothing_when_every_thread_ends():
    threads = [threading.Thread(target=lambda: None) for _ in range(3)]
    for t in threads:
        t.start()
    assert join_all(threads, timeout=2) == []


def test_join_all_returns_the_threads_still_running_within_one_budget():
    release = threading.Event()
    stuck = threading.Thread(target=release.wait, args=(5,))
    quick = threading.Thread(target=lambda: None)
    stuck.start()
    quick.start()
    try:
        assert join_all([stuck, quick], timeout=0.05) == [stuck]
    finally:
        release.set()
        stuck.join(2)
    assert not stuck.is_alive()


def test_parse_daemon_exit_reads_result_and_cleanups():
    out = f"{CLEANUP_PREFIX}joined\n{RESULT_PREFIX}" + '{"steps_done": {"joined": 1}}\n'
    parsed = parse_daemon_exit(out)
    assert parsed["steps_done"] == {"joined": 1}
    assert parsed["cleanups_printed"] == ["joined"]


def test_parse_daemon_exit_without_result_line_raises():
    with pytest.raises(ValueError, match="RESULT"):
        parse_daemon_exit("CLEANUP joined\n")


def test_daemon_exit_child_waits_for_normal_thread_and_drops_daemon():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lab_snippets.thread_workers",
            "daemon-exit",
            "--joined-steps",
            "3",
            "--daemon-steps",
            "40",
            "--step",
            "0.03",
        ],
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    report = parse_daemon_exit(proc.stdout)
    assert report["steps_done"]["joined"] == 3
    assert report["steps_done"]["daemon"] < 40
    assert report["daemon_alive_at_exit"] is True
    assert report["joined_alive_at_exit"] is False
    assert report["cleanups_printed"] == ["joined"]
    names = [(e["thread"], e["event"]) for e in report["events"]]
    assert names.index(("joined", "finished all steps")) < names.index(("main", "atexit handler"))
    assert ("daemon", "finished all steps") not in names


def test_main_rejects_a_daemon_that_would_finish_with_the_joined_thread():
    with pytest.raises(SystemExit):
        main(["daemon-exit", "--joined-steps", "10", "--daemon-steps", "10", "--step", "0.05"])
