# mistake: sends SIGKILL to the group only when the leader survived SIGTERM, so members that ignore it live on
# violates: whether or not the leader is still alive
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    os.killpg(leader.pid, signal.SIGTERM)
    try:
        return leader.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(leader.pid, signal.SIGKILL)
        return leader.wait(timeout=5)
