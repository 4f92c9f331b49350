# mistake: trusts wait_for to stop the child; the timeout only stops the waiting
# violates: the tool process itself is still running after the timeout
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                start_new_session=True)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out, err
