# mistake: fits the grace period inside the budget, so the job is stopped `grace` seconds early
# violates: SIGTERM once the budget has run out, not before || SIGTERM to the group at the budget and SIGKILL only after the grace period
# from: written by the helper who wrote the generators (issue 37)
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return leader.wait(timeout=max(0.0, budget - grace))
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
