# mistake: schedules the calls on a fixed grid (next = previous due time + interval), so after a check() that ran over several intervals the missed slots are caught up with calls back to back
# violates: after the previous call started, sooner than the
# from: red team, session 4 (unseen tests)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""

    def run():
        due = time.monotonic()
        while not stop.is_set():
            check()
            due += interval
            if stop.wait(max(0.0, due - time.monotonic())):
                return

    thread = threading.Thread(target=run, name="periodic-check", daemon=True)
    thread.start()
    return thread
