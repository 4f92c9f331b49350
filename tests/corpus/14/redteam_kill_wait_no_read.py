# mistake: after kill() it awaits proc.wait() only: the stdout pipe is never read to its end (red team, issue 28)
# violates: hung child that keeps writing
# breaks: on timeout or cancellation the child is killed AND reaped, its output read to the end
# how: after kill() it awaits proc.wait() only: reaped, but the stdout pipe is never read to its end
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=budget)
    except BaseException:
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.wait(), timeout=REAP_TIMEOUT)
        sandbox.forget(proc)
        if isinstance(sys.exc_info()[1], TimeoutError):
            return BUDGET_EXCEEDED, None
        raise
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None
