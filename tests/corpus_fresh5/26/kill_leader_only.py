# mistake: on timeout or cancellation it kills the leader alone (proc.kill()), so children that hold the pipes or ignore signals keep running
# violates: nothing of the tool's group is left running: the whole process group gets SIGKILL
# from: red team, session 5 (unseen tests)
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException:
        try:
            proc.kill()
        except ProcessLookupError:
            pass
        await proc.wait()
        raise
    return proc.returncode, out, err
