# mistake: builds the thread and returns it without calling start()
# violates: return the thread it started
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.is_set():
            check()
            if stop.wait(interval):
                break

    return threading.Thread(target=run, name="periodic-check", daemon=True)
