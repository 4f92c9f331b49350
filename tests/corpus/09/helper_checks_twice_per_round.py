# mistake: calls check() after the wait and again at the top of the loop
# violates: sooner than the
# from: written by the helper who wrote the generators (issue 37)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    def run() -> None:
        while not stop.is_set():
            check()
            if not stop.wait(interval):
                check()

    thread = threading.Thread(target=run, name="periodic-check", daemon=True)
    thread.start()
    return thread
