# mistake: sends SIGTERM to the group and waits for the leader only; a member ignoring SIGTERM keeps running (red team, issue 28)
# violates: kill the whole process group
# breaks: on timeout the whole group is killed with SIGKILL (members that ignore SIGTERM survive)
# how: sends SIGTERM to the group and waits for the leader only; a member ignoring SIGTERM keeps running
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    finished = False
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
        finished = True
        return proc.returncode, out, err
    finally:
        if not finished:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            await proc.wait()
