# mistake: skips the polite step: "for sure" read as SIGKILL first
# violates: SIGTERM must be sent before SIGKILL: ask politely first, so a process can clean up
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "otherwise send SIGTERM and wait at most grace seconds"; "the signal that ended it (SIGTERM before SIGKILL)"
# breaks: a polite process is ended by SIGKILL (exitcode -9) and the step says "killed"
# how: pid_after(3) worker, grace 2: exitcode -9 and "killed" instead of -15 and "terminated"
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join()
        return "exited"
    proc.kill()
    proc.join(grace + 5)
    return "killed"
