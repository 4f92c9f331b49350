# mistake: reports the first stall and then stays silent for good
# violates: must report the next stall
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last_value = progress()
    last_change = time.monotonic()
    reported = False
    while not stop.wait(poll):
        value = progress()
        if value != last_value:
            last_value, last_change = value, time.monotonic()
        elif not reported and time.monotonic() - last_change >= stall:
            reports.append(format_all_stacks(loop))
            reported = True
