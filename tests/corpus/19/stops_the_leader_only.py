# mistake: terminates and kills the leader process, not its process group, so its children live on
# violates: that ignore SIGTERM were left running
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    leader.terminate()
    try:
        return leader.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        leader.kill()
        return leader.wait(timeout=5)
