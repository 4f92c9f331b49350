# mistake: tests whether the process is alive with os.kill(pid, 0), which succeeds for a child that has exited but is not reaped yet (a zombie), so an already exited process gets SIGTERM and is reported "terminated"
# violates: no signal at all for a process that had already exited
# from: red team, session 4 (unseen tests)
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""

    def alive() -> bool:
        try:
            os.kill(proc.pid, 0)
        except ProcessLookupError:
            return False
        return True

    if not alive():
        proc.join(timeout=5)
        return "exited"
    os.kill(proc.pid, signal.SIGTERM)
    proc.join(timeout=grace)
    if proc.exitcode is not None:
        return "terminated"
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(timeout=5)
    return "killed"
