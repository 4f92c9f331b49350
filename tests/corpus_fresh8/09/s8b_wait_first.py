# mistake: waits one interval before the first call
# violates: the thread -- "every call to `check()` runs in it, the first at once (before any wait)"
# from: red team, session 8 (unseen tests)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.wait(interval):
            check()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
