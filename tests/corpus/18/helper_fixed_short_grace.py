# mistake: waits a fixed 0.1 s after SIGTERM instead of `grace`
# violates: SIGKILL only once grace has passed
# from: written by the helper who wrote the generators (issue 37)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    proc.join(timeout=0)
    if not proc.is_alive():
        return "exited"
    proc.terminate()
    proc.join(timeout=0.1)
    if not proc.is_alive():
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
