# mistake: keeps slime's polling loop and only adds the kill + reap at the end
# violates: the step polled: it was woken
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait for it to finish ... without polling" ("a wait that is woken by the child's end, not by a timer")
# breaks: the step learns of the child's exit only at the next 20 ms tick, and the loop wakes up every 20 ms meanwhile
# how: a child that finishes: the step returns up to a poll period after the child's exit; a spy on asyncio.sleep counts dozens of timer wake-ups
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    deadline = time.monotonic() + budget
    try:
        while time.monotonic() < deadline:
            await asyncio.sleep(0.02)
            if proc.returncode is not None:
                out, _ = await proc.communicate()
                sandbox.forget(proc)
                result = parse_result(out.decode())
                return proc.returncode, result["diff"] if result else None
    except asyncio.CancelledError:
        proc.kill()
        await proc.communicate()
        sandbox.forget(proc)
        raise
    proc.kill()
    await proc.communicate()
    sandbox.forget(proc)
    return BUDGET_EXCEEDED, None
