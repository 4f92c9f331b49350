# mistake: sends SIGKILL to the group at once, never giving SIGTERM a chance
# violates: send SIGTERM to the group first
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(leader.pid, signal.SIGKILL)  # nothing in the group can ignore this
    except ProcessLookupError:
        pass
    return leader.wait(timeout=5)
