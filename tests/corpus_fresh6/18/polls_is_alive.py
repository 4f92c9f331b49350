# mistake: waits out the grace period by polling is_alive() every 50 ms instead of joining
# violates: a return as soon as the process has ended, from a wait that the process's end wakes, not a loop that wakes itself to look
# from: red team, session 6 (unseen tests)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join(timeout=5)
        return "exited"
    proc.terminate()
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not proc.is_alive():  # is_alive() reaps it
            return "terminated"
        time.sleep(0.05)
    proc.kill()
    proc.join(timeout=5)
    return "killed"
