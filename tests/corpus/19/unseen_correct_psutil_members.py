# correct: Popen(start_new_session) + wait(budget); killpg(TERM); polls psutil for live (non-zombie) members until grace; killpg(KILL) tolerant of a gone group; bounded reap
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    pgid = proc.pid

    def members_alive() -> bool:
        proc.poll()  # reap the leader as soon as it exits
        for p in psutil.process_iter(["status"]):
            try:
                if os.getpgid(p.pid) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                    return True
            except (ProcessLookupError, psutil.Error):
                continue
        return False

    def signal_group(sig) -> None:
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass

    signal_group(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while members_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if members_alive():
        signal_group(signal.SIGKILL)
    return proc.wait(timeout=5)
