# mistake: polls is_alive() every 0.5 s while waiting for the grace period, so SIGKILL comes up to 0.5 s late (red team, issue 28)
# violates: of a process that ignores SIGTERM overran its budget
# breaks: wait at most grace seconds before SIGKILL (the escalation overshoots the grace period)
# how: polls is_alive() every 0.5 s while waiting for the grace period, so SIGKILL comes up to 0.5 s late
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join(timeout=1)
        return "exited"
    proc.terminate()
    waited = 0.0
    while waited < grace:
        time.sleep(0.5)
        waited += 0.5
        if not proc.is_alive():
            proc.join(timeout=1)
            return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
