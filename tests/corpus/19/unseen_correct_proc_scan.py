# correct: same protocol, but finds live group members by scanning /proc/<pid>/stat (pgrp field, state != Z); SIGKILL always sent to whatever is left after grace
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    pgid = proc.pid

    def live_members() -> int:
        proc.poll()
        count = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            state, pgrp = fields[0], int(fields[2])
            if pgrp == pgid and state != "Z":
                count += 1
        return count

    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    end = time.monotonic() + grace
    while live_members() and time.monotonic() < end:
        time.sleep(0.01)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        return proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return proc.returncode
