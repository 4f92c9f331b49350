# mistake: tests liveness with os.kill(pid, 0), which also succeeds for a zombie, so an exited process gets SIGTERM
# violates: not 'exited'
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    def exists() -> bool:
        try:
            os.kill(proc.pid, 0)
        except ProcessLookupError:
            return False
        return True

    if not exists():
        proc.join(timeout=5)
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if proc.exitcode is not None:
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
