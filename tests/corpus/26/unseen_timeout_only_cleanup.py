# mistake: cleans up only on TimeoutError
# violates: processes were left running after run_tool was cancelled: clean up on cancellation too
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if the caller cancels run_tool, do the same cleanup and let the cancellation through"
# breaks: a cancelled call leaves the tool's whole process group running
# how: cancel run_tool 0.2 s into a `sleep 5` tool: the sleep is still running afterwards
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
        raise
    return proc.returncode, out, err
