# mistake: sends SIGTERM, sleeps the grace period, then looks
# violates: stop_with_escalation of a process that ended at SIGTERM did not return when the work was
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "a return as soon as the process has ended (well before grace for one that honours SIGTERM at once)"
# breaks: stopping a polite process always takes the full grace period
# how: a polite worker with grace 2: the call takes 2 s instead of a few ms
import time as _time

def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join()
        return "exited"
    proc.terminate()
    _time.sleep(grace)
    if not proc.is_alive():
        proc.join()
        return "terminated"
    proc.kill()
    proc.join(5)
    return "killed"
