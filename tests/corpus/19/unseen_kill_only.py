# mistake: "leave nothing behind" read as SIGKILL to the group right away
# violates: the leader, which honours SIGTERM, ended with
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "send SIGTERM to the whole group, give it grace seconds, then send SIGKILL" (SIGTERM before SIGKILL)
# breaks: a job that would have stopped politely is killed: the leader's code is -9, not -15
# how: ["sleep", "3"] with budget 0.3: returns -9 instead of -15
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return proc.wait(timeout=5)
