# mistake: calls check() once before looking at stop, even when stop was set before the call
# violates: check() was called once stop was set
# from: written by the helper who wrote the generators (issue 37)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    def run() -> None:
        check()
        while not stop.wait(interval):
            check()

    thread = threading.Thread(target=run, name="periodic-check", daemon=True)
    thread.start()
    return thread
