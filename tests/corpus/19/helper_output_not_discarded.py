# mistake: lets the job write to the notebook's own stdout instead of discarding its output
# violates: the job's output went to
# from: written by the helper who wrote the generators (issue 37)
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    for stop_signal, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(leader.pid, stop_signal)
        except ProcessLookupError:
            pass
        try:
            leader.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass
    return leader.returncode
