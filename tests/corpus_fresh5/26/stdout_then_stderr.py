# mistake: reads stdout to its end, then stderr, so a tool that fills the stderr pipe first never closes stdout (pipe deadlock until the timeout)
# violates: both outputs complete whatever their sizes: a tool that ends in time returns its result, not TimeoutError
# from: red team, session 5 (unseen tests)
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)

    async def collect():
        out = await proc.stdout.read()
        err = await proc.stderr.read()
        await proc.wait()
        return out, err

    try:
        out, err = await asyncio.wait_for(collect(), timeout)
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
        raise
    return proc.returncode, out, err
