# mistake: captures the job's output in a pipe it never reads, so a job that writes a lot blocks and overruns
# violates: discard it (stdout=subprocess.DEVNULL)
# from: written by the helper who wrote the generators (issue 37)
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    leader = subprocess.Popen(command, stdout=subprocess.PIPE, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    for stop_signal, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(leader.pid, stop_signal)
        except ProcessLookupError:
            pass
        try:
            leader.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass
    leader.stdout.close()
    return leader.returncode
