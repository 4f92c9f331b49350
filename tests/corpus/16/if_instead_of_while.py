# mistake: waits once with `if` instead of a loop, so the first wake-up (one new item) ends the wait
# violates: a consumer gave up before its timeout
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        if len(items) < size:
            cond.wait(timeout)
        if len(items) < size:
            return None
        batch = items[:size]
        del items[:size]
        return batch
