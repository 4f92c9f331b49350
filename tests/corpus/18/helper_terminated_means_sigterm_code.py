# mistake: calls it "terminated" only when the exit code is -SIGTERM, so a process that cleans up and exits with its own code is killed
# violates: 'terminated' for one that ended after SIGTERM within the grace period
# from: written by the helper who wrote the generators (issue 37)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    proc.join(timeout=0)
    if not proc.is_alive():
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if proc.exitcode == -signal.SIGTERM:
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
