# mistake: sends SIGTERM straight away and only then asks whether it ended, without a separate "already exited" check
# violates: a process that had already exited was reported as
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if it has already exited, reap it and return 'exited'"
# breaks: a process that had already exited is reported as "terminated"
# how: a worker that exits on its own, stopped after it exited: "terminated" instead of "exited"
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    proc.terminate()
    proc.join(grace)
    if proc.exitcode is not None:
        return "terminated"
    proc.kill()
    proc.join(5)
    return "killed"
