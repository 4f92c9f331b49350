# mistake: time.sleep(budget) and then poll(), so a 10 ms job makes the caller wait the whole budget (red team, issue 28)
# violates: whose job ended in time, did not return when the work was done
# breaks: a job that exits within its budget returns as soon as it exits
# how: time.sleep(budget) and then poll(), so a 10 ms job makes the caller wait the whole budget
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    time.sleep(budget)
    if proc.poll() is not None:
        return proc.returncode
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return proc.wait(timeout=5)
