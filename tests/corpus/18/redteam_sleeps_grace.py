# mistake: terminate(), then time.sleep(grace) instead of join(timeout=grace) (red team, issue 28)
# violates: of a process that ended at SIGTERM did not return when the work was done
# breaks: wait AT MOST grace seconds (a process that ends at once on SIGTERM still costs the whole grace)
# how: terminate(), then time.sleep(grace) instead of join(timeout=grace)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join(timeout=1)
        return "exited"
    proc.terminate()
    time.sleep(grace)
    if not proc.is_alive():
        proc.join(timeout=1)
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
