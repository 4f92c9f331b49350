# mistake: decides "terminated" from the exit code (-SIGTERM) instead of from the process having ended
# violates: the step reported
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "send SIGTERM and wait at most grace seconds; if it ended, return 'terminated'"
# breaks: a worker whose SIGTERM handler exits with its own status (e.g. 143) is reported "killed" though it ended politely
# how: exit_on_signal worker, grace 2: returns "killed" (and sends a useless SIGKILL) although SIGTERM ended it at once
import signal as _signal

def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join()
        return "exited"
    proc.terminate()
    proc.join(grace)
    if proc.exitcode == -_signal.SIGTERM:
        return "terminated"
    proc.kill()
    proc.join(5)
    return "killed"
