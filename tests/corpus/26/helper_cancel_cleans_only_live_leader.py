# mistake: on a timeout kills the group, but on a cancel kills it only while the leader is alive, so a cancelled call whose leader already exited leaves its children
# violates: left running after run_tool was cancelled
# from: written by the helper who wrote the generators (issue 37)
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        async with asyncio.timeout(timeout):
            out, err = await proc.communicate()
    except TimeoutError:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await asyncio.wait_for(proc.wait(), 5)
        raise
    except asyncio.CancelledError:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await asyncio.wait_for(proc.wait(), 5)
        raise
    return proc.returncode, out, err
