# mistake: waits for the leader's exit first and reads the pipes afterwards, so output larger than a pipe holds blocks the child and the call times out
# violates: a tool that ends within timeout returns both outputs complete, whatever their sizes
# from: red team, session 5 (unseen tests)
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        code = await asyncio.wait_for(proc.wait(), timeout)
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
        raise
    return code, out, err
