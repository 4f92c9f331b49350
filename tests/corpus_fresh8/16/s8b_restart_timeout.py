# mistake: loops on cond.wait(timeout), so every wake-up starts a fresh full timeout
# violates: timeout -- "one deadline for the whole wait"
# from: red team, session 8 (unseen tests)
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    with cond:
        while len(items) < size:
            if not cond.wait(timeout):
                return None
        batch = items[:size]
        del items[:size]
        return batch
