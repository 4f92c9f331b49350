# mistake: sends SIGTERM, then time.sleep(grace) before looking, so a process that ends at once is still waited for the whole grace period
# violates: did not return when the work was done
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    proc.join(timeout=0)
    if not proc.is_alive():
        return "exited"
    proc.terminate()
    time.sleep(grace)
    if not proc.is_alive():
        proc.join(timeout=1)
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
