# mistake: pops the batch off the end of the list, taking the newest items instead of the first
# violates: first-in first-out
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        if not cond.wait_for(lambda: len(items) >= size, timeout=timeout):
            return None
        return [items.pop() for _ in range(size)]
