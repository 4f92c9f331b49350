# mistake: after SIGKILL reaps with proc.wait(), never reading the rest of the child's output
# violates: what is left -- "reaped and its output read to the end before the step returns" (step 4: "wait for it and read its output to the end")
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
            proc.kill()
        async with asyncio.timeout(REAP_TIMEOUT):
            await proc.wait()
        sandbox.forget(proc)
        if isinstance(exc, TimeoutError):
            return BUDGET_EXCEEDED, None
        raise
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None
