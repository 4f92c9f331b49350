# mistake: makes the first call itself, in the caller's thread, before starting the thread
# violates: must be called in the new thread
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    check()

    def run():
        while not stop.wait(interval):
            check()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t
