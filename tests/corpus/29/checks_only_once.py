# mistake: checks every engine once when started and never again, so an engine that gets stuck later is never found
# violates: check the engines again
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines, self.ping, self.get, self.kill = dict(engines), ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="HealthMonitor")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout + 5)
            self._thread = None

    def _run(self) -> None:
        if not self._stop.is_set():
            for name, engine in list(self.engines.items()):
                if self._stop.is_set():
                    return
                try:
                    self.get(self.ping(engine), self.timeout)
                except Exception:  # a timeout or a failed call: the engine is not healthy
                    del self.engines[name]
                    self.killed.append(name)
                    self.kill(engine)
            self._stop.wait(self.interval)
