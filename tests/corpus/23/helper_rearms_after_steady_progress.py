# mistake: re-arms only after progress has been steady for `stall` seconds, so a stall after a short burst of work goes unreported
# violates: must report the next stall
# from: written by the helper who wrote the generators (issue 37)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last_value = progress()
    last_change = time.monotonic()
    moving_since = last_change
    reported = False
    while not stop.wait(poll):
        value = progress()
        now = time.monotonic()
        if value != last_value:
            if now - last_change > poll * 1.5:
                moving_since = now  # progress resumed
            last_value, last_change = value, now
            if now - moving_since >= stall:
                reported = False
        elif not reported and now - last_change >= stall:
            reports.append(format_all_stacks(loop))
            reported = True
