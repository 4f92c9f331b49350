# mistake: kills the group only while the leader has no return code; a leader that exited early leaves its members (red team, issue 28)
# violates: still running after the timeout although the tool process had exited
# breaks: on timeout the whole process group is killed (a member outliving its leader keeps running)
# how: kills the group only while the leader has no return code; a leader that exited early leaves its members
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    finished = False
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
        finished = True
        return proc.returncode, out, err
    finally:
        if not finished:
            if proc.returncode is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            await proc.wait()
