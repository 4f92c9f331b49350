# mistake: reaps the leader during the grace period, then sends SIGKILL to the group without guarding against a gone group
# violates: ProcessLookupError escaped: by the time SIGKILL is sent the whole group may already be
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "no error when the group is already gone"
# breaks: when SIGTERM ended every member, killpg(SIGKILL) raises ProcessLookupError out of the function
# how: a lone leader that honours SIGTERM, budget 0.3, grace 0.3: ProcessLookupError instead of -15
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    time.sleep(0.05)  # let the rest of the group go too
    os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait(timeout=5)
