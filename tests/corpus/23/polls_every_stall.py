# mistake: waits stall seconds between checks instead of poll
# violates: Call progress() every `poll` seconds
# breaks: call progress() every `poll` seconds (stall detection and the stop are late by up to `stall`)
# how: waits `stall` seconds between checks instead of `poll`, so a stall is reported up to 2 x stall after it began
def watch_progress(progress, stall: float, reports: list, stop: threading.Event, loop=None, poll: float = 0.01) -> None:
    """Report every thread's stack (and loop's tasks) once per stall of `progress()`; return on `stop`."""
    last = progress()
    reported = False
    while not stop.wait(stall):
        now_value = progress()
        if now_value != last:
            last = now_value
            reported = False
        elif not reported:
            reports.append(format_all_stacks(loop))
            reported = True
