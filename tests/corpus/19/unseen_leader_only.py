# mistake: starts the job in its own session but stops only the leader (proc.terminate / proc.kill)
# violates: 2 member(s) of the group that ignore SIGTERM were left runni
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "send SIGTERM to the whole group ... then send SIGKILL to the whole group"; "no member of the group left running"
# breaks: the leader's children keep running after the function returns
# how: a leader that starts a child ignoring SIGTERM, budget 0.3: the child is still running on return
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        proc.terminate()
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(timeout=5)
