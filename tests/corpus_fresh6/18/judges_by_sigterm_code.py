# mistake: decides "terminated" from the exit code (-SIGTERM, as the visible test checks), so a process that cleaned up and exited with its own code is reported "killed"
# violates: "terminated" for a process that ended after SIGTERM within grace, whatever its exit code
# from: red team, session 6 (unseen tests)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if not proc.is_alive():
        proc.join(timeout=5)
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if proc.exitcode == -signal.SIGTERM:
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
