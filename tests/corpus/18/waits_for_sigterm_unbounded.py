# mistake: after SIGTERM joins without a timeout, so a process slow to honour it is waited for, not killed
# violates: after the grace period the process must be killed, not waited for
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if proc.exitcode is not None:
        return "exited"
    proc.terminate()
    proc.join()  # give it the time it needs to clean up
    if proc.exitcode == -signal.SIGTERM:
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
