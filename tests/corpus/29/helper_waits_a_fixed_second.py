# mistake: waits up to a fixed 0.8 s for each health answer ("long enough for any engine") instead of `timeout`, so a stuck engine is killed far later than timeout + interval
# violates: stuck engine not killed in time
# from: written by the helper who wrote the generators (issue 37)
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines, self.ping, self.get, self.kill = dict(engines), ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list[str] = []
        self._stop = threading.Event()
        self._thread = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="HealthMonitor")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, engine in list(self.engines.items()):
                if self._stop.is_set():
                    return
                try:
                    self.get(self.ping(engine), 0.8)
                except Exception:
                    del self.engines[name]
                    self.killed.append(name)
                    self.kill(engine)
            self._stop.wait(self.interval)
