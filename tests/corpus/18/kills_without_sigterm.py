# mistake: goes straight to SIGKILL, never giving the process the chance to stop politely
# violates: SIGTERM must be sent before SIGKILL
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join()
        return "exited"
    proc.kill()  # terminate() can be ignored, kill() cannot
    proc.join(timeout=5)
    return "killed"
