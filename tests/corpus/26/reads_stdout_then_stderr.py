# mistake: reads stdout to its end before reading stderr, so a child that fills stderr first never finishes
# violates: pipe deadlock
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                start_new_session=True)
    try:
        async with asyncio.timeout(timeout):
            out = await proc.stdout.read()
            err = await proc.stderr.read()
            await proc.wait()
        return proc.returncode, out, err
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
