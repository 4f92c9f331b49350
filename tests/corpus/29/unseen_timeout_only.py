# mistake: treats only a timeout as a failed check (`except TimeoutError`)
# violates: failed check not killed: an engine whose check raises must be killed
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "an engine whose check times out or raises is killed"
# breaks: a check that raises any other error ends the monitor thread (nothing is checked any more) and the engine is not killed
# how: an engine whose health call raises RuntimeError: it is never killed, and an engine that gets stuck later is not checked either
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines = dict(engines)
        self.ping, self.get, self.kill = ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="HealthMonitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, handle in list(self.engines.items()):
                if self._stop.is_set():
                    return
                try:
                    self.get(self.ping(handle), self.timeout)
                except TimeoutError:
                    del self.engines[name]
                    self.killed.append(name)
                    try:
                        self.kill(handle)
                    except Exception:
                        pass
            if self._stop.wait(self.interval):
                return
