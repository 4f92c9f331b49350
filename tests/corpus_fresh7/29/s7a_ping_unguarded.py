# mistake: only get() is inside the try; an engine whose ping() raises kills the monitor thread instead
# violates: failing engines -- "whose check raises in ping or in get, are killed" (and the rounds stop coming)
# from: red team, session 7 (unseen tests)
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines = dict(engines)
        self.ping, self.get, self.kill = ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list = []
        self._stop = threading.Event()
        self._thread = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="HealthMonitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, handle in list(self.engines.items()):
                if self._stop.is_set():
                    return
                if name in self.killed:
                    continue
                ref = self.ping(handle)
                try:
                    self.get(ref, self.timeout)
                except Exception:
                    self.killed.append(name)
                    self.kill(handle)
            self._stop.wait(self.interval)
