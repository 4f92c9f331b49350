# mistake: sends SIGKILL and returns "killed" at once ("SIGKILL cannot fail")
# violates: the process was not reaped when the function returned: it is a zombie until its parent
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "send SIGKILL, wait for it (bounded ...)"; "In every case the process must be reaped when the function returns: no zombie left"
# breaks: the killed child is not reaped when the function returns (exitcode still None; it becomes a zombie)
# how: a worker that ignores SIGTERM, grace 0.2: on return proc.exitcode is None (nobody waited for it)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join()
        return "exited"
    proc.terminate()
    proc.join(grace)
    if not proc.is_alive():
        return "terminated"
    proc.kill()
    return "killed"
