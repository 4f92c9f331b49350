# mistake: kills and reaps on the budget path but forgets to call sandbox.forget there
# violates: the step must forget
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "on every path, call sandbox.forget(proc) once the child has been reaped"
# breaks: the registry still counts the child as held after a budget overrun
# how: a hanging child with budget 0.5: after the step the registry holds 1 "child"
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=budget)
    except TimeoutError:
        proc.kill()
        await proc.communicate()
        return BUDGET_EXCEEDED, None
    except asyncio.CancelledError:
        proc.kill()
        await proc.communicate()
        sandbox.forget(proc)
        raise
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, (result["diff"] if result else None)
