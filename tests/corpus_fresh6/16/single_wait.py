# mistake: waits once with cond.wait(timeout) and gives up if the batch is not complete after that one wake-up
# violates: a consumer waits through every wake-up until its batch is there (None only once the timeout has run out)
# from: red team, session 6 (unseen tests)
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
