# mistake: sends SIGKILL but returns without joining, leaving a zombie
# violates: the process was not reaped when the function returned
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if not proc.is_alive():
        return "terminated"
    proc.kill()  # SIGKILL cannot be caught: it is dead now
    return "killed"
