# mistake: kills and reaps only when the budget runs out; a cancellation leaves the child to the sandbox
# violates: the exercise, step 5 -- "if the step is cancelled, kill and reap the child, and let the cancellation propagate"
# from: red team, session 8 (unseen tests)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        async with asyncio.timeout(budget):
            out, _ = await proc.communicate()
    except TimeoutError:
        proc.kill()
        async with asyncio.timeout(REAP_TIMEOUT):
            await proc.communicate()
        sandbox.forget(proc)
        return BUDGET_EXCEEDED, None
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None
