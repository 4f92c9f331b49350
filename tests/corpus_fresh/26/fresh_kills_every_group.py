# mistake: records every tool's process group in one module-level set ("kill whatever we started") and on a timeout or a cancel sends SIGKILL to all of them, so one caller's timeout kills another caller's tool mid-run
# violates: calls at once do not disturb one another
# from: red team, session 4 (unseen tests)
_groups: set = set()


async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    _groups.add(proc.pid)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
        return proc.returncode, out, err
    except (TimeoutError, asyncio.CancelledError):
        for pgid in list(_groups):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        await proc.wait()
        raise
    finally:
        _groups.discard(proc.pid)
