# mistake: tests "already exited" with `if proc.exitcode:`, so a process that exited with status 0 is treated as still running
# violates: "exited" for a process that had exited before the call, whatever its exit code, 0 included
# from: red team, session 6 (unseen tests)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if proc.exitcode:  # it already ended (exitcode polls and reaps)
        proc.join(timeout=5)
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if proc.exitcode is not None:
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
