# mistake: after SIGKILL sleeps a fixed few seconds "to be sure" instead of joining with a timeout, so every kill costs the whole wait
# violates: overran its budget
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    proc.join(timeout=0)
    if not proc.is_alive():
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if not proc.is_alive():
        return "terminated"
    proc.kill()
    time.sleep(3)
    proc.join(timeout=0)
    return "killed"
