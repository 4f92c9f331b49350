# mistake: calls format_all_stacks() without passing `loop` ("it prints every thread anyway")
# violates: the report does not show the loop
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "append one report to reports: format_all_stacks(loop) (every thread's stack, and every task of loop when one is given)"
# breaks: when a loop is given, the report has the threads but none of the loop's tasks
# how: a loop thread with a task parked in `parked_coroutine`: the report does not mention it
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last_value = progress()
    last_change = time.monotonic()
    reported = False
    while not stop.wait(poll):
        value = progress()
        now = time.monotonic()
        if value != last_value:
            last_value, last_change, reported = value, now, False
        elif not reported and now - last_change >= stall:
            reports.append(format_all_stacks())
            reported = True
