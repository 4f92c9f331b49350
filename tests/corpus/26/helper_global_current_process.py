# mistake: keeps the running process in a module-level variable and cleans up that one, so of two calls at once the one that times out kills the other's group
# violates: processes of the tool were left running
# from: written by the helper who wrote the generators (issue 37)
_current = {}


async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    _current["proc"] = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        async with asyncio.timeout(timeout):
            out, err = await _current["proc"].communicate()
    except BaseException:
        proc = _current["proc"]
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await asyncio.wait_for(proc.wait(), 5)
        raise
    return _current["proc"].returncode, out, err
