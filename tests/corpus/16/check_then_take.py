# mistake: waits for the batch in one `with cond:` block and removes it in a second one, so between the two another consumer woken by the same notify_all can take the items and this consumer returns a short batch
# violates: every batch must have exactly `size` items
# from: red team, session 4 (unseen tests)
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
