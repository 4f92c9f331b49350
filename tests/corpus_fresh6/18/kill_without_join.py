# mistake: sends SIGKILL and returns at once, trusting SIGKILL to be instant, so the killed process is never reaped
# violates: in every case the process is reaped when the function returns: no zombie left
# from: red team, session 6 (unseen tests)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join(timeout=5)
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if not proc.is_alive():
        return "terminated"
    proc.kill()  # SIGKILL cannot be caught: it is gone now
    return "killed"
