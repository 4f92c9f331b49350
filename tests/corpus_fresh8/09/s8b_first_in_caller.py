# mistake: makes the first call in the caller's thread (so it happens "right away"), the rest in the new thread
# violates: the thread -- "every call to `check()` runs in it, the first at once"
# from: red team, session 8 (unseen tests)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    if not stop.is_set():
        check()
    def run():
        while not stop.wait(interval):
            check()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
