# mistake: looks the group up with os.getpgid(proc.pid) before killpg; once the leader has exited and been reaped that lookup fails and the children are never killed
# violates: the whole group is killed even when the leader has already exited and its children still hold the pipes
# from: red team, session 5 (unseen tests)
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException:
        try:
            os.killpg(os.getpgid(proc.pid), signal.SIGKILL)
        except ProcessLookupError:
            pass  # the group is already gone
        await proc.wait()
        raise
    return proc.returncode, out, err
