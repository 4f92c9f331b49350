# mistake: after SIGTERM to the group sleeps the whole grace period before SIGKILL, so a group that ended at SIGTERM still costs the full grace
# violates: did not return when the work was done
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(leader.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    time.sleep(grace)
    try:
        os.killpg(leader.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    leader.wait(timeout=5)
    return leader.returncode
