# mistake: looks the group up with os.getpgid(proc.pid) when it sends SIGKILL; once the leader has been reaped that lookup fails, the error is taken for "the group is gone", and members that ignored SIGTERM are never killed
# violates: no member of the group running
# from: red team, session 4 (unseen tests)
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        return proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    os.killpg(os.getpgid(proc.pid), signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    try:
        os.killpg(os.getpgid(proc.pid), signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is already gone
    return proc.wait(timeout=5)
