# mistake: appends a report at every poll for as long as the stall lasts
# violates: report once per stall, not at every poll
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last_value = progress()
    last_change = time.monotonic()
    while not stop.wait(poll):
        value = progress()
        if value != last_value:
            last_value, last_change = value, time.monotonic()
        elif time.monotonic() - last_change >= stall:
            reports.append(format_all_stacks(loop))
