# mistake: reports the threads but never passes the loop on, so the tasks are missing
# violates: does not show the loop's tasks
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last_value = progress()
    last_change = time.monotonic()
    reported = False
    while not stop.wait(poll):
        value = progress()
        if value != last_value:
            last_value, last_change, reported = value, time.monotonic(), False
        elif not reported and time.monotonic() - last_change >= stall:
            reports.append(format_all_stacks())
            reported = True
