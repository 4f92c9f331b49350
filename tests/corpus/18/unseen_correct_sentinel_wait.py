# correct: waits on proc.sentinel with multiprocessing.connection.wait, signals with os.kill, reaps with join()
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
import os as _os
import signal as _signal
from multiprocessing.connection import wait as _wait

def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    if _wait([proc.sentinel], timeout=0):
        proc.join()
        return "exited"
    _os.kill(proc.pid, _signal.SIGTERM)
    if _wait([proc.sentinel], timeout=grace):
        proc.join()
        return "terminated"
    _os.kill(proc.pid, _signal.SIGKILL)
    _wait([proc.sentinel], timeout=5)
    proc.join(1)
    return "killed"
