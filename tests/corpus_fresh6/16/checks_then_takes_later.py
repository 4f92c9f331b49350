# mistake: waits for the batch under the lock, then releases it and takes the items in a second `with` block
# violates: no item taken twice and every batch has exactly `size` items (another consumer can take them in between)
# from: red team, session 6 (unseen tests)
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
