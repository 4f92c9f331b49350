# mistake: counts progress as made only when progress() returns a value it has never returned before
# violates: even back to an earlier value
# from: written by the helper who wrote the generators (issue 37)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    seen = {progress()}
    last_change = time.monotonic()
    reported = False
    while not stop.wait(poll):
        value = progress()
        now = time.monotonic()
        if value not in seen:
            seen.add(value)
            last_change, reported = now, False
        elif not reported and now - last_change >= stall:
            reports.append(format_all_stacks(loop))
            reported = True
