# mistake: calls check() first and tests stop only after it, so a stop set before the call still gets one check
# violates: stop -- "no call to `check()` once `stop` is set, and none at all if it was set before the call"
# from: red team, session 8 (unseen tests)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while True:
            check()
            if stop.wait(interval):
                break
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
