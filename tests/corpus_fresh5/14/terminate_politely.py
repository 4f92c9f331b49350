# mistake: stops the child with terminate() (SIGTERM), which a child that ignores SIGTERM survives
# violates: the child is killed with SIGKILL, reaped and forgotten before the step returns or raises
# from: red team, session 5 (unseen tests)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        async with asyncio.timeout(budget):
            out, _ = await proc.communicate()
    except BaseException as exc:  # TimeoutError or CancelledError: stop the child first
        if proc.returncode is None:
            proc.terminate()  # let it shut down cleanly
        await asyncio.wait_for(proc.communicate(), timeout=REAP_TIMEOUT)
        sandbox.forget(proc)
        if isinstance(exc, TimeoutError):
            return BUDGET_EXCEEDED, None
        raise
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None
