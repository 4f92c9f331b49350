# mistake: sends SIGTERM to the group, sleeps the whole grace, then SIGKILL (guarded) and reaps
# violates: run_group_with_budget, whose group ended at SIGTERM, did not return when the work was done
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "a return as soon as the group has ended (not after the whole grace)"
# breaks: even a group that ends on SIGTERM at once costs the full grace period
# how: lone leader honouring SIGTERM, budget 0.3, grace 2: returns after ~2.3 s instead of ~0.3 s
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
    time.sleep(grace)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return proc.wait(timeout=5)
