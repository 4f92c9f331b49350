# mistake: time.sleep(grace) after SIGTERM instead of waiting with a timeout, so every overrun costs the whole grace (red team, issue 28)
# violates: whose group ended at SIGTERM, did not return when the work was done
# breaks: the grace period ends as soon as the group is gone (stop latency bounded by the members, not by grace)
# how: time.sleep(grace) after SIGTERM instead of waiting with a timeout, so every overrun costs the whole grace
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
