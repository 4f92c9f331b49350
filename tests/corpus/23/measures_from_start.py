# mistake: sets a deadline once at the start and forgets to push it back when progress changes
# violates: while progress was being made all along
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    deadline = time.monotonic() + stall
    last_value = progress()
    reported = False
    while not stop.wait(poll):
        value = progress()
        if value != last_value:
            last_value, reported = value, False
        if not reported and time.monotonic() >= deadline:
            reports.append(format_all_stacks(loop))
            reported = True
