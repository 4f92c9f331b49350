# mistake: takes items one at a time as they arrive; on timeout the ones already taken are lost
# violates: timeout / what is left -- "a take that times out removes nothing"
# from: red team, session 8 (unseen tests)
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    deadline = time.monotonic() + timeout
    batch = []
    with cond:
        while len(batch) < size:
            if not cond.wait_for(lambda: items, deadline - time.monotonic()):
                return None
            batch.append(items.pop(0))
    return batch
