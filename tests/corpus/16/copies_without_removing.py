# mistake: returns a copy of the first items but never removes them, so the next consumer takes them again
# violates: no item twice
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        if not cond.wait_for(lambda: len(items) >= size, timeout=timeout):
            return None
        return items[:size]
