# mistake: after SIGTERM and the grace period reports -SIGTERM or -SIGKILL by what it sent, not the leader's own code
# violates: the leader's own return code once it is reaped
# from: written by the helper who wrote the generators (issue 37)
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    os.killpg(leader.pid, signal.SIGTERM)
    try:
        leader.wait(timeout=grace)
        sent = -signal.SIGTERM
    except subprocess.TimeoutExpired:
        sent = -signal.SIGKILL
    try:
        os.killpg(leader.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    leader.wait(timeout=5)
    return sent
