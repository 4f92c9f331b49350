# mistake: stops the child with terminate() (SIGTERM), which a child may ignore, and reaps with a bounded wait
# violates: what is left -- "the child killed (SIGKILL, which no child can ignore), reaped and its output read to the end before the step returns"
# from: red team, session 8 (unseen tests)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        async with asyncio.timeout(budget):
            out, _ = await proc.communicate()
    except BaseException as exc:
        if proc.returncode is None:
            proc.terminate()  # let it clean up
        try:
            async with asyncio.timeout(REAP_TIMEOUT):
                await proc.communicate()
        except TimeoutError:
            pass
        if proc.returncode is not None:
            sandbox.forget(proc)
        if isinstance(exc, TimeoutError):
            return BUDGET_EXCEEDED, None
        raise
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None
