# correct: exitcode check, terminate + join(grace), kill + join(5); every branch ends with a join
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if proc.exitcode is not None:
        proc.join()
        return "exited"
    proc.terminate()
    proc.join(grace)
    if proc.exitcode is not None:
        return "terminated"
    proc.kill()
    proc.join(5)
    return "killed"
