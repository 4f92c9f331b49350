# mistake: sends SIGKILL to the group as soon as the leader has exited, even when the grace period has not run out
# violates: SIGKILL goes to the group only after `grace` seconds; members still cleaning up get the whole grace
# from: red team, session 5 (unseen tests)
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    # the leader is gone or out of time: make sure nothing of its group survives
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return proc.wait(timeout=5)
