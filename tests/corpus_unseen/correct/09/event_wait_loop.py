# correct: loop on stop.wait(interval), checking the event before every call
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.is_set():
            check()
            if stop.wait(interval):
                return

    thread = threading.Thread(target=run, name="periodic-check", daemon=True)
    thread.start()
    return thread
