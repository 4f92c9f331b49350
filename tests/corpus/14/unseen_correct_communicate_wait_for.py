# correct: waits with wait_for(proc.communicate(), budget) (woken by EOF + exit), kills and re-communicates in a finally on timeout or cancellation
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    finished = False
    try:
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=budget)
        except TimeoutError:
            return BUDGET_EXCEEDED, None
        finished = True
        result = parse_result(out.decode())
        return proc.returncode, (result["diff"] if result else None)
    finally:
        if not finished:
            if proc.returncode is None:
                proc.kill()
            await asyncio.wait_for(proc.communicate(), timeout=REAP_TIMEOUT)
        sandbox.forget(proc)
