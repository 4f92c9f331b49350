# mistake: removes what is there even when the wait timed out, then returns None for a short batch
# violates: remove nothing
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        cond.wait_for(lambda: len(items) >= size, timeout=timeout)
        batch = items[:size]
        del items[:size]
        return batch if len(batch) == size else None
