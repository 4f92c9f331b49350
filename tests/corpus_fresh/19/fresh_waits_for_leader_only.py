# mistake: after SIGTERM it waits only for the leader and sends SIGKILL only if the leader is still alive after grace, so group members that ignore SIGTERM outlive a leader that obeyed it
# violates: no member of the group running
# from: red team, session 4 (unseen tests)
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        return proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return proc.wait(timeout=5)
