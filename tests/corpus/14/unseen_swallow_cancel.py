# mistake: one `except BaseException` that kills, reaps and reports BUDGET_EXCEEDED, for timeouts and cancellations alike
# violates: the cancellation must propagate: after cleaning up, re-raise CancelledError instead of
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if the step is cancelled ... let the cancellation propagate"
# breaks: a cancelled step returns (BUDGET_EXCEEDED, None) instead of raising CancelledError
# how: cancel the step while the child hangs: awaiting the task gives a result, not CancelledError
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=budget)
    except BaseException:
        if proc.returncode is None:
            proc.kill()
        await proc.communicate()
        sandbox.forget(proc)
        return BUDGET_EXCEEDED, None
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, (result["diff"] if result else None)
