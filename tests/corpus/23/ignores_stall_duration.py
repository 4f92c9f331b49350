# mistake: reports as soon as two polls in a row see the same number
# violates: has not changed for `stall` seconds
# breaks: report only when the number has not changed for `stall` seconds
# how: reports as soon as two consecutive polls see the same number, so a pause much shorter than `stall` is reported
def watch_progress(progress, stall: float, reports: list, stop: threading.Event, loop=None, poll: float = 0.01) -> None:
    """Report every thread's stack (and loop's tasks) once per stall of `progress()`; return on `stop`."""
    last = progress()
    reported = False
    while not stop.wait(poll):
        value = progress()
        if value != last:
            last = value
            reported = False
        elif not reported:
            reports.append(format_all_stacks(loop))
            reported = True
