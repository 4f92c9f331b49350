# correct: remembers the value and the time it last changed; a reported flag reset on progress; stop.wait(poll) as the sleep
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
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
            reports.append(format_all_stacks(loop))
            reported = True
