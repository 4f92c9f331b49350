# correct: SIGTERM to the group, wait(timeout=grace) for the leader, then SIGKILL to the group (guarded) whether or not the leader is alive, bounded reap: the reference's steps, written out
# from: red team, session 5 (unseen tests), filed as a wrong answer (SIGKILL before the grace is over when the leader exits early); it does what the reference does (both sent SIGKILL 0.30 s into spawn-children 2 4 --ignore-sigterm, budget 0.3, grace 1.0, on 3.11.7): the statement now says SIGKILL goes once the leader has exited or grace has run out
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
