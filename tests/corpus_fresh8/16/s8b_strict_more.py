# mistake: off by one in the predicate, waits for more than `size` items
# violates: the exercise -- "wait (with `cond`) until `items` holds at least `size` entries"
# from: red team, session 8 (unseen tests)
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        if not cond.wait_for(lambda: len(items) > size, timeout):
            return None
        batch = items[:size]
        del items[:size]
        return batch
