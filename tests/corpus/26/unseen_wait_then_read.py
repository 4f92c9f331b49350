# mistake: waits for the exit first (wait_for(proc.wait())), then reads stdout and stderr
# violates: a child writing
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "return (returncode, stdout, stderr), with both outputs complete whatever their sizes" (never deadlocks)
# breaks: a child that writes more than a pipe buffer blocks on its write, never exits, and the call times out
# how: a tool writing 200 kB to stderr with timeout 2: TimeoutError instead of its output
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    try:
        await asyncio.wait_for(proc.wait(), timeout)
        out = await proc.stdout.read()
        err = await proc.stderr.read()
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
        raise
    return proc.returncode, out, err
