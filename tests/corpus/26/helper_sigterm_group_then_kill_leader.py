# mistake: asks the group to stop with SIGTERM, gives the leader a grace period, then SIGKILLs only the leader; members that ignore SIGTERM live on
# violates: kill the whole process group
# from: written by the helper who wrote the generators (issue 37)
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        async with asyncio.timeout(timeout):
            out, err = await proc.communicate()
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            await asyncio.wait_for(proc.wait(), 0.2)
        except TimeoutError:
            proc.kill()
            await asyncio.wait_for(proc.wait(), 5)
        raise
    return proc.returncode, out, err
