# mistake: waits under the lock, releases it, then takes the batch under a second acquire (check-then-act)
# violates: the exercise -- "Several consumers may call `take_batch` at once: ... every batch must have exactly `size` items"
# from: red team, session 8 (unseen tests)
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        ready = cond.wait_for(lambda: len(items) >= size, timeout)
    if not ready:
        return None
    with cond:
        batch = items[:size]
        del items[:size]
    return batch
