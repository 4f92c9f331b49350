# mistake: sends SIGTERM to the group but ends the overrun with proc.kill(), which sends SIGKILL to the leader alone, so children that ignore SIGTERM keep running
# violates: SIGKILL to the whole group only after `grace`
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
        return proc.wait(timeout=5)
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(timeout=5)
