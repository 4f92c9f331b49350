# mistake: waits for the end by polling is_alive() every 100 ms instead of blocking in join(timeout), so it returns up to 100 ms after the process has ended
# violates: a return as soon as the process has ended
# from: red team, session 4 (unseen tests)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join(timeout=5)
        return "exited"
    proc.terminate()
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not proc.is_alive():
            proc.join(timeout=5)
            return "terminated"
        time.sleep(0.1)
    if not proc.is_alive():
        proc.join(timeout=5)
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
