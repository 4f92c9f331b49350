# mistake: on timeout kills the leader with proc.kill() instead of the whole process group
# violates: run_tool did not return within || kill the whole process group
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "kill the whole process group with SIGKILL"; "no process of theirs is left running"
# breaks: the tool's own children survive the timeout
# how: `sh -c 'sleep 5 & exit 0'` with timeout 0.3: after TimeoutError the background sleep (holding the pipes) is still running
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        raise
    return proc.returncode, out, err
