# mistake: tests `if proc.exitcode:` for "already exited", which is false for a process that exited with 0
# violates: 'exited' for a process that had ended before the call
# from: written by the helper who wrote the generators (issue 37)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if proc.exitcode:
        proc.join(timeout=1)
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if not proc.is_alive():
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
