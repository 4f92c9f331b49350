# mistake: reports once the value has been the same for stall - poll seconds, counting the poll in which it stopped
# violates: report only when the number has not changed for `stall` seconds
# from: written by the helper who wrote the generators (issue 37)
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
        elif not reported and now - last_change + poll >= stall:
            reports.append(format_all_stacks(loop))
            reported = True
