# mistake: sends SIGTERM, then sleeps the whole grace period before looking
# violates: a return as soon as the process has ended, well before grace for one that ends at SIGTERM
# from: red team, session 6 (unseen tests)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join(timeout=5)
        return "exited"
    proc.terminate()
    time.sleep(grace)  # give it its grace period
    if not proc.is_alive():
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
