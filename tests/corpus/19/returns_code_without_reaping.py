# mistake: signals the group with sleeps in between and returns leader.returncode without ever waiting for the leader
# violates: reap the leader with wait()
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    for stop_signal, pause in ((signal.SIGTERM, grace), (signal.SIGKILL, 0.1)):
        try:
            os.killpg(leader.pid, stop_signal)
        except ProcessLookupError:
            break
        time.sleep(pause)
    return leader.returncode
