# mistake: starts the job with stdout=subprocess.PIPE, as the chapter's experiment does, and never reads it, so a job that writes more than a pipe holds blocks and overruns
# violates: the output is discarded, so a job that writes a lot still ends in time with its own code
# from: red team, session 5 (unseen tests)
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, start_new_session=True)
    try:
        try:
            return proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return proc.wait(timeout=5)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            proc.poll()
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return proc.wait(timeout=5)
            time.sleep(0.01)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return proc.wait(timeout=5)
    finally:
        proc.stdout.close()
