# mistake: no new session; on timeout kills the leader's process tree as psutil sees it, which misses children whose leader has already exited
# violates: still running after the timeout
# from: written by the helper who wrote the generators (issue 37)
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        async with asyncio.timeout(timeout):
            out, err = await proc.communicate()
    except BaseException:
        try:
            tree = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            tree = []
        for p in tree:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.wait(), 5)
        raise
    return proc.returncode, out, err
