# mistake: treats the leader's exit as the group's end: returns as soon as the leader is reaped, SIGKILL only if the leader is still alive
# violates: 2 member(s) of the group that ignore SIGTERM were left runni
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "then send SIGKILL to the whole group (some members may ignore SIGTERM)"; "no member of the group left running"
# breaks: members that ignore SIGTERM survive when the leader itself honours it
# how: leader honours SIGTERM, its child ignores it, budget 0.3: the child is still running after the return
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
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return proc.wait(timeout=5)
