# mistake: reports the stack of the thread it runs in (the watchdog's own) instead of every thread's
# violates: does not show where the stuck thread is waiting
import traceback


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
            reports.append("".join(traceback.format_stack()))
            reported = True
