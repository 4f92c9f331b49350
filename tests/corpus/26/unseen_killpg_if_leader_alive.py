# mistake: kills the group only if the leader is still running ("nothing to kill otherwise")
# violates: s child was still running after the timeout although the tool process had exited: kill
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "kill the whole process group with SIGKILL (even when the leader has already exited and one of its children still holds the pipes)"
# breaks: a leader that exited early leaves its child holding the pipes; the child is never killed
# how: `sh -c 'sleep 5 & exit 0'` with timeout 0.3: TimeoutError, and the sleep is still running afterwards
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException:
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        await proc.wait()
        raise
    return proc.returncode, out, err
