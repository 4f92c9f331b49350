# mistake: kills the group only while the leader is alive (returncode is None), so a leader that exits while a member still holds the pipes leaves that member running after the timeout (the chapter's reference solution until issue 28)
# violates: still running after the timeout although the tool process had exited
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
        return proc.returncode, out, err
    finally:
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await asyncio.wait_for(proc.wait(), 5)
