# correct: a fixed-rate schedule against a monotonic deadline that, after a check() longer than the interval, starts the next round from now instead of catching up the missed slots
# from: s5holesB (issue 37), the counterpart of fresh_fixed_rate_catch_up
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""

    def run():
        due = time.monotonic()
        while not stop.is_set():
            check()
            due = max(due + interval, time.monotonic())  # a missed slot is skipped, not caught up
            if stop.wait(due - time.monotonic()):
                return

    thread = threading.Thread(target=run, name="periodic-check", daemon=True)
    thread.start()
    return thread
