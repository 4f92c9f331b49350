# mistake: loops on cond.wait(timeout), so every wake-up restarts the full timeout
# violates: each wake-up restarted the full timeout
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        while len(items) < size:
            if not cond.wait(timeout):
                return None
        batch = items[:size]
        del items[:size]
        return batch
