# mistake: waits once; a wake-up by a put that does not complete the batch returns None early
# violates: waiting / timeout -- "a consumer waits through every wake-up until its batch is there" ... "`None` only once `timeout` has run out, not before"
# from: red team, session 8 (unseen tests)
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
